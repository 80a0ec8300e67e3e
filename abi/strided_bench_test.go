//go:build cgo

package abi

import "testing"

// The strided kernel against the flat layout's on the same small types
// (strided.go keeps small types flat; this is what the walk costs where
// it is forced):
//
//	go test -run '^$' -bench StridedKernel -benchmem ./abi
func BenchmarkStridedKernel(b *testing.B) {
	type shape struct {
		name string
		n    int
		mk   func(out uintptr) int32
	}
	for _, sh := range []shape{
		{"column 64x8 doubles", 1, func(o uintptr) int32 { return int32(mpiabi_Type_vector(64, 1, 8, mpiDouble, o)) }},
		{"vector 16 blocks of 3 ints x4", 4, func(o uintptr) int32 { return int32(mpiabi_Type_vector(16, 3, 5, mpiInt, o)) }},
	} {
		for _, forced := range []bool{false, true} {
			name := sh.name + "/flat"
			if forced {
				name = sh.name + "/strided"
			}
			b.Run(name, func(b *testing.B) {
				forceStrided = forced
				if rc := sh.mk(addr(&strOut[60])); rc != errSuccess {
					b.Fatalf("%s: %d", sh.name, rc)
				}
				_ = mpiabi_Type_commit(addr(&strOut[60]))
				e, err := usable(strOut[60])
				forceStrided = false
				if err != nil {
					b.Fatal(err)
				}
				lo, hi := e.span(sh.n)
				buf := make([]byte, hi-lo)
				dst := make([]byte, sh.n*e.size())
				b.ReportAllocs()
				b.SetBytes(int64(len(dst)))
				for range b.N {
					e.pack(dst, buf, -lo, 0)
				}
			})
		}
	}
}
