//go:build cgo

package abi

import (
	"testing"
)

// TestWASIGuest checks the translations of guest values on a memory of
// the test's: pointers and their sentinels, one handle or MPI_Aint
// widened and narrowed back, arrays, and addresses outside the memory.
func TestWASIGuest(t *testing.T) {
	mem := make([]byte, 4096)
	g := &WASIGuest{Memory: func() []byte { return mem }}
	put := func(off int, v uint32) {
		mem[off], mem[off+1], mem[off+2], mem[off+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	}
	get := func(off int) uint32 {
		return uint32(mem[off]) | uint32(mem[off+1])<<8 | uint32(mem[off+2])<<16 | uint32(mem[off+3])<<24
	}
	base := func() uintptr { return g.base }
	for _, tc := range []struct {
		name string
		run  func(t *testing.T)
	}{
		{"pointers", func(t *testing.T) {
			g.begin()
			defer g.end()
			for _, c := range []struct {
				v    uint64
				want uintptr
			}{{0, 0}, {10, 10}, {11, 11}, {0xffffffff_00000100, base() + 0x100}, {4095, base() + 4095}} {
				if got := g.ptr(c.v); got != c.want {
					t.Errorf("ptr(%#x) = %#x, want %#x", c.v, got, c.want)
				}
			}
			if g.buf(1, 0) != 1 || g.buf(2, 0) != 2 || g.buf(0, 0x209) != 0 {
				t.Error("MPI_IN_PLACE, MPI_BUFFER_AUTOMATIC or NULL did not stay")
			}
			if g.err() != nil {
				t.Fatal(g.err())
			}
			g.ptr(4096)
			if g.err() == nil {
				t.Error("a pointer past the memory passed")
			}
		}},
		{"handle and MPI_Aint in and out", func(t *testing.T) {
			put(64, 0x1000)
			put(68, uint32(0xfffffff0)) // -16
			g.begin()
			h, a := g.handle(64), g.aint(68)
			if *(*uintptr)(ptr(h)) != 0x1000 || *(*int64)(ptr(a)) != -16 {
				t.Fatalf("widened %#x, %d", *(*uintptr)(ptr(h)), *(*int64)(ptr(a)))
			}
			*(*uintptr)(ptr(h)), *(*int64)(ptr(a)) = 0x1000003, -32
			g.end()
			if get(64) != 0x1000003 || int32(get(68)) != -32 || get(72) != 0 {
				t.Errorf("narrowed back %#x, %d (next word %#x)", get(64), int32(get(68)), get(72))
			}
		}},
		{"arrays", func(t *testing.T) {
			for i := range 4 {
				put(128+4*i, uint32(0x180+i))
			}
			put(256, 0x20a) // MPI_LONG
			g.begin()
			r := g.handles(128, 4, false)
			ty := g.types(256, 1, true)
			rs := (*[4]uintptr)(ptr(r))
			if rs[3] != 0x183 || *(*uintptr)(ptr(ty)) != 0x209 {
				t.Fatalf("widened %#x, type %#x", rs[3], *(*uintptr)(ptr(ty)))
			}
			rs[0], rs[3] = 0x180, 0x180
			g.end()
			if get(128) != 0x180 || get(140) != 0x180 || get(132) != 0x181 || get(256) != 0x20a {
				t.Errorf("narrowed back %#x %#x %#x, read-only type %#x", get(128), get(132), get(140), get(256))
			}
		}},
		{"nested calls keep the outer call's values", func(t *testing.T) {
			put(512, 7)
			g.begin()
			h := g.handle(512)
			g.begin()
			put(516, 9)
			inner := g.handle(516)
			*(*uintptr)(ptr(inner)) = 10
			g.end()
			*(*uintptr)(ptr(h)) = 8
			g.end()
			if get(512) != 8 || get(516) != 10 {
				t.Errorf("outer %d, inner %d", get(512), get(516))
			}
		}},
		{"a call allocates nothing", func(t *testing.T) {
			var add *WASICall
			for i, c := range WASICalls() {
				if c.Name == "MPI_Aint_add" {
					add = &WASICalls()[i]
				}
			}
			if add == nil || string(add.Params) != "ii" || add.Result != WASII32 {
				t.Fatalf("MPI_Aint_add is %+v", add)
			}
			s := []uint64{0xffffffff_fffffff0, 20} // -16 (with garbage above its 32 bits) + 20
			add.Call(g, s)
			if int32(s[0]) != 4 {
				t.Errorf("MPI_Aint_add(-16, 20) = %d", int32(s[0]))
			}
			if n := testing.AllocsPerRun(100, func() { s[0], s[1] = 1, 2; add.Call(g, s) }); n != 0 {
				t.Errorf("a call allocates %v times", n)
			}
		}},
	} {
		t.Run(tc.name, tc.run)
	}
}
