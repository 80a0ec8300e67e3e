//go:build cgo

package abi

import (
	"bytes"
	"testing"
)

const (
	mpiShort  = 0x208
	mpiDouble = 0x214
	mpiChar   = 0x243
)

// strOut holds the handles the tests' constructors write: package memory,
// which does not move.
var strOut [64]uintptr

// strType runs a constructor writing handle slot i and returns the
// handle, committed.
func strType(t *testing.T, i int, what string, mk func(out uintptr) int32) uintptr {
	t.Helper()
	if rc := mk(addr(&strOut[i])); rc != errSuccess {
		t.Fatalf("%s: %d", what, rc)
	}
	if rc := mpiabi_Type_commit(addr(&strOut[i])); rc != errSuccess {
		t.Fatalf("MPI_Type_commit of %s: %d", what, rc)
	}
	return strOut[i]
}

var strBlocks = [2]int32{1, 1}
var strDispls = [2]int64{0, 4}
var strTypes = [2]uintptr{mpiChar, mpiInt}

// strShapes are repetitions of every kind, over flat and repeated old
// types, each built by mk with handle slots from base on.
var strShapes = []struct {
	name string
	mk   func(t *testing.T, base int) uintptr
}{
	{"contiguous of int", func(t *testing.T, b int) uintptr {
		return strType(t, b, "contiguous", func(o uintptr) int32 { return int32(mpiabi_Type_contiguous(5, mpiInt, o)) })
	}},
	{"vector of int", func(t *testing.T, b int) uintptr {
		return strType(t, b, "vector", func(o uintptr) int32 { return int32(mpiabi_Type_vector(5, 2, 3, mpiInt, o)) })
	}},
	{"hvector, negative stride", func(t *testing.T, b int) uintptr {
		return strType(t, b, "hvector", func(o uintptr) int32 { return int32(mpiabi_Type_create_hvector(4, 3, -40, mpiDouble, o)) })
	}},
	{"vector of vector", func(t *testing.T, b int) uintptr {
		in := strType(t, b, "inner vector", func(o uintptr) int32 { return int32(mpiabi_Type_vector(2, 1, 3, mpiInt, o)) })
		return strType(t, b+1, "vector", func(o uintptr) int32 { return int32(mpiabi_Type_vector(3, 2, 4, in, o)) })
	}},
	{"contiguous of resized vector", func(t *testing.T, b int) uintptr {
		in := strType(t, b, "vector", func(o uintptr) int32 { return int32(mpiabi_Type_vector(2, 1, 2, mpiShort, o)) })
		rs := strType(t, b+1, "resized", func(o uintptr) int32 { return int32(mpiabi_Type_create_resized(in, -4, 20, o)) })
		return strType(t, b+2, "contiguous", func(o uintptr) int32 { return int32(mpiabi_Type_contiguous(3, rs, o)) })
	}},
	{"vector of struct with gaps", func(t *testing.T, b int) uintptr {
		st := strType(t, b, "struct", func(o uintptr) int32 {
			return int32(mpiabi_Type_create_struct(2, addr(&strBlocks[0]), addr(&strDispls[0]), addr(&strTypes[0]), o))
		})
		return strType(t, b+1, "vector", func(o uintptr) int32 { return int32(mpiabi_Type_vector(3, 2, 3, st, o)) })
	}},
	{"three levels, bl > 1 over strided", func(t *testing.T, b int) uintptr {
		v1 := strType(t, b, "vector", func(o uintptr) int32 { return int32(mpiabi_Type_vector(3, 1, 2, mpiShort, o)) })
		v2 := strType(t, b+1, "hvector", func(o uintptr) int32 { return int32(mpiabi_Type_create_hvector(2, 2, 40, v1, o)) })
		return strType(t, b+2, "vector", func(o uintptr) int32 { return int32(mpiabi_Type_vector(2, 3, -2, v2, o)) })
	}},
}

// TestStridedMatchesFlat builds each shape twice, flattened and (with
// forceStrided) strided, and checks that the two agree on everything the
// binding asks a typemap: span, the packed stream of 1–3 elements from
// every position, unpacking it back, and the element counts of every
// byte and element count.
func TestStridedMatchesFlat(t *testing.T) {
	for i, sh := range strShapes {
		t.Run(sh.name, func(t *testing.T) {
			base := 8 * i
			f := mustFlat(t, sh.mk(t, base))
			forceStrided = true
			s := mustFlat(t, sh.mk(t, base+4))
			forceStrided = false
			if f.str != nil || s.str == nil {
				t.Fatalf("want one flat and one strided: %v, %v", f.str != nil, s.str != nil)
			}
			if f.size() != s.size() || f.extent() != s.extent() || f.basics != s.basics || f.basic.k != s.basic.k || f.mixed != s.mixed {
				t.Fatalf("size %d/%d extent %d/%d basics %d/%d mixed %v/%v", f.size(), s.size(), f.extent(), s.extent(), f.basics, s.basics, f.mixed, s.mixed)
			}
			for n := range 4 {
				fl, fhi := f.span(n)
				sl, shi := s.span(n)
				if fl != sl || fhi != shi {
					t.Fatalf("span(%d): flat [%d,%d), strided [%d,%d)", n, fl, fhi, sl, shi)
				}
				if n == 0 {
					continue
				}
				buf := make([]byte, fhi-fl)
				for j := range buf {
					buf[j] = byte(j%251 + 1)
				}
				origin, total := -fl, n*f.size()
				want := make([]byte, total)
				f.pack(want, buf, origin, 0)
				for pos := 0; pos < total; pos++ {
					for _, k := range []int{1, 3, total - pos} {
						if pos+k > total {
							continue
						}
						got := make([]byte, k)
						s.pack(got, buf, origin, pos)
						if !bytes.Equal(got, want[pos:pos+k]) {
							t.Fatalf("n=%d pack [%d,%d): strided %v, flat %v", n, pos, pos+k, got, want[pos:pos+k])
						}
					}
				}
				// unpack in two pieces into zeroed memory: only the
				// typemap's bytes are written, as the flat layout writes
				fm, sm := make([]byte, len(buf)), make([]byte, len(buf))
				f.unpack(fm, origin, 0, want)
				cut := total / 3
				s.unpack(sm, origin, 0, want[:cut])
				s.unpack(sm, origin, cut, want[cut:])
				if !bytes.Equal(fm, sm) {
					t.Fatalf("n=%d unpack: strided %v, flat %v", n, sm, fm)
				}
			}
			for b := int64(0); b <= int64(3*f.size()); b++ {
				if fe, se := f.elements(b), s.elements(b); fe != se {
					t.Fatalf("elements(%d bytes): flat %d, strided %d", b, fe, se)
				}
			}
			for n := int64(0); n <= int64(3*f.basics); n++ {
				if fb, sb := f.bytesOf(n), s.bytesOf(n); fb != sb {
					t.Fatalf("bytesOf(%d): flat %d, strided %d", n, fb, sb)
				}
			}
		})
	}
}

func mustFlat(t *testing.T, h uintptr) *typeEntry {
	t.Helper()
	e, err := usable(h)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestStridedHuge: types past the flattening limit answer size, extent,
// Get_elements and Status_set_elements with a constant number of levels
// and an inner block of one run, as MPICH's large_count asks of a vector
// of INT_MAX/2 blocks.
func TestStridedHuge(t *testing.T) {
	const blocks = 1<<24 + 3 // past maxRuns, and every block a run
	four := strType(t, 40, "contiguous", func(o uintptr) int32 { return int32(mpiabi_Type_contiguous(4, mpiInt, o)) })
	cases := []struct {
		name   string
		mk     func() uintptr
		lb, ex int
	}{
		{"vector of 4 ints", func() uintptr {
			return strType(t, 41, "vector", func(o uintptr) int32 { return int32(mpiabi_Type_vector(blocks, 1, 3, four, o)) })
		}, 0, 48*(blocks-1) + 16},
		{"resized", func() uintptr {
			return strType(t, 42, "resized", func(o uintptr) int32 { return int32(mpiabi_Type_create_resized(strOut[41], 1<<31-1, -1024, o)) })
		}, 1<<31 - 1, -1024},
		{"contiguous of it", func() uintptr {
			return strType(t, 43, "contiguous", func(o uintptr) int32 { return int32(mpiabi_Type_contiguous(3, strOut[41], o)) })
		}, 0, 3 * (48*(blocks-1) + 16)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := mustFlat(t, c.mk())
			if e.str == nil {
				t.Fatal("not strided")
			}
			if len(e.str.lv) > 2 || len(e.str.in.runs) != 1 {
				t.Fatalf("%d levels, %d inner runs: want at most 2 and 1", len(e.str.lv), len(e.str.in.runs))
			}
			if e.g.LowerBound() != c.lb || e.extent() != c.ex {
				t.Fatalf("lb %d extent %d, want %d %d", e.g.LowerBound(), e.extent(), c.lb, c.ex)
			}
			n := int64(e.basics)
			size := int64(e.size())
			if size != 4*n || n%(4*blocks) != 0 {
				t.Fatalf("size %d, basics %d", size, n)
			}
			for _, k := range []int64{0, 1, 5, n - 1, n, n + 7, 3 * n} {
				if b := e.bytesOf(k); b != 4*k {
					t.Errorf("bytesOf(%d) = %d, want %d", k, b, 4*k)
				}
				if got := e.elements(4 * k); got != k {
					t.Errorf("elements(%d bytes) = %d, want %d", 4*k, got, k)
				}
			}
			if got := e.elements(size - 2); got != undefined {
				t.Errorf("elements(size-2) = %d, want MPI_UNDEFINED", got)
			}
		})
	}
}

// strMsg is the buffers of TestStridedP2P: the send side and the receive
// side of a vector of every other byte.
var strMsg struct {
	req uintptr
	st  status
	pos int32
}

// TestStridedP2P moves a strided type of 16M runs to self in every
// point-to-point form the binding stages it through (send/recv, isend
// and irecv, sendrecv, pack and unpack): each byte of the vector arrives,
// and the gaps between them are untouched.
func TestStridedP2P(t *testing.T) {
	startSelf(t)
	const blocks = 1<<24 + 5
	v := strType(t, 50, "vector", func(o uintptr) int32 { return int32(mpiabi_Type_vector(blocks, 1, 2, mpiChar, o)) })
	if e := mustFlat(t, v); e.str == nil {
		t.Fatal("not strided")
	}
	src := make([]byte, 2*blocks)
	for i := range src {
		src[i] = byte(i/2%253 + 1)
	}
	check := func(t *testing.T, dst []byte) {
		t.Helper()
		for i := range dst {
			want := byte(0xee)
			if i%2 == 0 && i < 2*blocks-1 {
				want = src[i]
			}
			if dst[i] != want {
				t.Fatalf("byte %d: %#x, want %#x", i, dst[i], want)
			}
		}
	}
	fresh := func() []byte { return bytes.Repeat([]byte{0xee}, len(src)) }
	s, st, req := addr(&src[0]), addr(&strMsg.st), addr(&strMsg.req)
	for _, c := range []struct {
		name string
		run  func(d uintptr) int32
	}{
		{"Isend, Recv", func(d uintptr) int32 {
			if rc := mpiabi_Isend(s, 1, v, 0, 1, self, req); rc != errSuccess {
				return int32(rc)
			}
			if rc := mpiabi_Recv(d, 1, v, 0, 1, self, st); rc != errSuccess {
				return int32(rc)
			}
			return int32(mpiabi_Wait(req, 0))
		}},
		{"Irecv, Send", func(d uintptr) int32 {
			if rc := mpiabi_Irecv(d, 1, v, 0, 2, self, req); rc != errSuccess {
				return int32(rc)
			}
			if rc := mpiabi_Send(s, 1, v, 0, 2, self); rc != errSuccess {
				return int32(rc)
			}
			return int32(mpiabi_Wait(req, st))
		}},
		{"Sendrecv", func(d uintptr) int32 {
			return int32(mpiabi_Sendrecv(s, 1, v, 0, 3, d, 1, v, 0, 3, self, st))
		}},
		{"Pack, Unpack", func(d uintptr) int32 {
			p := make([]byte, blocks)
			strMsg.pos = 0
			if rc := mpiabi_Pack(s, 1, v, addr(&p[0]), int32(len(p)), addr(&strMsg.pos), self); rc != errSuccess {
				return int32(rc)
			}
			strMsg.pos = 0
			return int32(mpiabi_Unpack(addr(&p[0]), int32(len(p)), addr(&strMsg.pos), d, 1, v, self))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dst := fresh()
			if rc := c.run(addr(&dst[0])); rc != int32(errSuccess) {
				t.Fatalf("rc %d", rc)
			}
			check(t, dst)
		})
	}
	// a shorter message into a strided receive changes only its bytes
	t.Run("Irecv of fewer bytes", func(t *testing.T) {
		dst := fresh()
		if rc := mpiabi_Irecv(addr(&dst[0]), 1, v, 0, 4, self, req); rc != errSuccess {
			t.Fatalf("MPI_Irecv: %d", rc)
		}
		if rc := mpiabi_Send(s, 1000, mpiChar, 0, 4, self); rc != errSuccess {
			t.Fatalf("MPI_Send: %d", rc)
		}
		if rc := mpiabi_Wait(req, st); rc != errSuccess {
			t.Fatalf("MPI_Wait: %d", rc)
		}
		for i := range dst {
			want := byte(0xee)
			if i%2 == 0 && i < 2000 {
				want = src[i/2]
			}
			if dst[i] != want {
				t.Fatalf("byte %d: %#x, want %#x", i, dst[i], want)
			}
		}
	})
	if rc := mpiabi_Sendrecv(s, 1, v, 0, 3, addr(&fresh()[0]), 1, v, 0, 3, self, st); rc != errSuccess {
		t.Fatalf("MPI_Sendrecv: %d", rc)
	}
	var n int64
	if rc := mpiabi_Get_elements_c(st, v, addr(&n)); rc != errSuccess || n != blocks {
		t.Fatalf("MPI_Get_elements_c: rc %d, %d elements, want %d", rc, n, blocks)
	}
	if rc := mpiabi_Type_free(addr(&strOut[50])); rc != errSuccess {
		t.Fatalf("MPI_Type_free: %d", rc)
	}
}
