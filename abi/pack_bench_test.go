//go:build cgo

package abi

import "testing"

// The packing of small derived types through MPI_Pack: the cost the
// strided typemaps (strided.go) must not add to types that stay flat.
//
//	go test -run '^$' -bench PackSmall -benchmem ./abi

var packBench struct {
	types [3]uintptr
	src   [4096]float64
	out   [32768]byte
	pos   int32
	bls   [2]int32
	disps [2]int64
	olds  [2]uintptr
}

func BenchmarkPackSmall(b *testing.B) {
	startSelf(b)
	const double, integer, char = 0x214, 0x209, 0x243
	pb := &packBench
	pb.bls, pb.disps, pb.olds = [2]int32{1, 2}, [2]int64{0, 8}, [2]uintptr{char, double}
	mk := []struct {
		name  string
		n     int32
		build func(out uintptr) int32
	}{
		{"column 64x8 doubles", 1, func(o uintptr) int32 { return int32(mpiabi_Type_vector(64, 1, 8, double, o)) }},
		{"vector 16 blocks of 3 ints x4", 4, func(o uintptr) int32 { return int32(mpiabi_Type_vector(16, 3, 5, integer, o)) }},
		{"struct char+2 doubles x32", 32, func(o uintptr) int32 {
			return int32(mpiabi_Type_create_struct(2, addr(&pb.bls[0]), addr(&pb.disps[0]), addr(&pb.olds[0]), o))
		}},
	}
	for i, m := range mk {
		if rc := m.build(addr(&pb.types[i])); rc != errSuccess {
			b.Fatalf("%s: %d", m.name, rc)
		}
		if rc := mpiabi_Type_commit(addr(&pb.types[i])); rc != errSuccess {
			b.Fatalf("commit %s: %d", m.name, rc)
		}
		b.Run(m.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				pb.pos = 0
				if rc := mpiabi_Pack(addr(&pb.src[0]), m.n, pb.types[i], addr(&pb.out[0]), int32(len(pb.out)), addr(&pb.pos), self); rc != errSuccess {
					b.Fatalf("MPI_Pack: %d", rc)
				}
			}
		})
	}
}
