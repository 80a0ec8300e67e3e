//go:build cgo

package abi

import (
	"testing"

	"github.com/meshmpi/meshmpi"
)

// TestPredefinedTypemaps checks every predefined type's entry against
// MPI's definition on this target: the size is the typemap's bytes, the
// binding's layout and the Go API's type agree on it, a pair type's
// extent is its C struct's and it holds two basic elements. It reads only
// tables (typeOf makes each entry on first need, as in a fresh process).
func TestPredefinedTypemaps(t *testing.T) {
	want := map[string]struct{ size, extent, basics int }{
		"MPI_FLOAT_INT":       {8, 8, 2},
		"MPI_DOUBLE_INT":      {12, 16, 2},
		"MPI_LONG_INT":        {12, 16, 2},
		"MPI_2INT":            {8, 8, 2},
		"MPI_SHORT_INT":       {6, 8, 2},
		"MPI_LONG_DOUBLE_INT": {20, 32, 2},
		"MPI_2INTEGER":        {8, 8, 2},
		"MPI_LONG_DOUBLE":     {16, 16, 1},
		"MPI_DOUBLE":          {8, 8, 1},
	}
	for h, d := range dtypes {
		e, err := typeOf(h)
		if err != nil {
			t.Fatalf("%s: %v", d.name, err)
		}
		if e.size() != e.lay.Size() {
			t.Errorf("%s: size %d, layout %d bytes", d.name, e.size(), e.lay.Size())
		}
		if e.extent() != d.size || e.g.LowerBound() != 0 {
			t.Errorf("%s: lb %d extent %d, want 0 %d", d.name, e.g.LowerBound(), e.extent(), d.size)
		}
		if w, ok := want[d.name]; ok && (e.size() != w.size || e.extent() != w.extent || e.basics != w.basics) {
			t.Errorf("%s: size %d extent %d basics %d, want %v", d.name, e.size(), e.extent(), e.basics, w)
		}
		if d.pair != nil {
			if e.size() != d.pair.size() {
				t.Errorf("%s: size %d, parts %d", d.name, e.size(), d.pair.size())
			}
			// the Loc pairs without padding reduce in derived types too
			if reducible := d.pair.size() == d.size && d.k != nil; reducible == e.mixed {
				t.Errorf("%s: mixed %v", d.name, e.mixed)
			}
		}
	}
}

// TestOpaqueAlignment: a struct of a type without a Go element type and
// an int right after it is padded to the C alignment of the first.
func TestOpaqueAlignment(t *testing.T) {
	cases := []struct {
		h      uintptr
		extent int
	}{
		{0x220, 32}, // long double: 16-byte aligned
		{0x224, 48}, // long double _Complex
		{0x2e2, 32}, // REAL*16
		{0x230, 12}, // 2REAL: two 4-byte reals
		{0x2d3, 8},  // COMPLEX*4: two REAL*2
		{0x231, 24}, // 2DOUBLE_PRECISION
	}
	for _, c := range cases {
		d := dtypes[c.h]
		e, err := typeOf(c.h)
		if err != nil {
			t.Fatal(err)
		}
		s, err := meshmpi.Struct([]int{1, 1}, []int{0, d.size}, []*meshmpi.Datatype{e.g, meshmpi.Int32})
		if err != nil {
			t.Fatal(err)
		}
		if s.Extent() != c.extent || s.Size() != d.size+4 {
			t.Errorf("struct {%s; int}: size %d extent %d, want %d %d", d.name, s.Size(), s.Extent(), d.size+4, c.extent)
		}
	}
}
