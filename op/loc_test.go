package op

import (
	"cmp"
	"math"
	"slices"
	"testing"
	"unsafe"
)

// refLoc is MaxLoc (max true) or MinLoc by MPI's definition, with a NaN
// value beating every number in both.
func refLoc[T LocValue](max bool, u, v Loc[T]) Loc[T] {
	c := cmp.Compare(u.Value, v.Value) // NaN is the smallest here
	uNaN, vNaN := u.Value != u.Value, v.Value != v.Value
	if max && uNaN != vNaN {
		c = -c // make NaN the largest for MaxLoc
	}
	if !max {
		c = -c
	}
	switch {
	case c > 0:
		return u
	case c < 0:
		return v
	case u.Index < v.Index:
		return u
	}
	return v
}

// locValues draws values from a small set so that ties are frequent, and
// indices from 0..3 so that equal pairs occur too.
func locValues[T LocValue](n, seed int) []Loc[T] {
	var specials []T
	if isFloat[T]() {
		nan, inf := math.NaN(), math.Inf(1)
		specials = []T{T(nan), T(inf), T(-inf), T(math.Copysign(0, -1))}
	} else {
		// All ones and the high bit, by truncating int64 two's complement.
		ones, high := int64(-1), int64(-1)<<(8*unsafe.Sizeof(T(0))-1)
		specials = []T{T(ones), T(high)}
	}
	s := make([]Loc[T], n)
	for i := range s {
		h := mix(i, seed)
		v := T(int64(h>>40%5) - 2)
		if h%4 == 0 {
			v = specials[h>>20%uint64(len(specials))]
		}
		s[i] = Loc[T]{Value: v, Index: int32(h >> 50 % 4)}
	}
	return s
}

func isFloat[T LocValue]() bool {
	t := TypeOf[T]()
	return t == Float32 || t == Float64
}

func sameLoc[T LocValue](a, b Loc[T]) bool {
	return a.Index == b.Index && (a.Value == b.Value || a.Value != a.Value && b.Value != b.Value)
}

func checkLoc[T LocValue](t *testing.T) {
	typ := LocTypeOf[T]()
	for _, o := range []*Op{MaxLoc, MinLoc} {
		t.Run(o.Name()+"/"+typ.String(), func(t *testing.T) {
			for _, n := range lengths {
				in, inout := locValues[T](n, 1), locValues[T](n, 2)
				before := slices.Clone(inout)
				if err := o.Reduce(typ, LocBytes(in), LocBytes(inout)); err != nil {
					t.Fatal(err)
				}
				for i := range inout {
					if want := refLoc(o == MaxLoc, in[i], before[i]); !sameLoc(inout[i], want) {
						t.Fatalf("n=%d, element %d: %v ⊕ %v = %v, want %v", n, i, in[i], before[i], inout[i], want)
					}
				}
			}
		})
	}
}

func TestReduceLoc(t *testing.T) {
	checkLoc[int8](t)
	checkLoc[int16](t)
	checkLoc[int32](t)
	checkLoc[int64](t)
	checkLoc[int](t)
	checkLoc[uint8](t)
	checkLoc[uint16](t)
	checkLoc[uint32](t)
	checkLoc[uint64](t)
	checkLoc[uint](t)
	checkLoc[uintptr](t)
	checkLoc[float32](t)
	checkLoc[float64](t)
}

// TestLocTies pins MPI's tie rule (the smaller index wins, whichever side
// it is on) and the NaN rule, with literal pairs.
func TestLocTies(t *testing.T) {
	nan := math.NaN()
	type L = Loc[float64]
	for _, c := range []struct {
		name      string
		op        *Op
		in, inout L
		want      L
	}{
		{"max larger in", MaxLoc, L{7, 9}, L{5, 1}, L{7, 9}},
		{"max larger inout", MaxLoc, L{5, 1}, L{7, 9}, L{7, 9}},
		{"max tie, smaller index in", MaxLoc, L{5, 1}, L{5, 3}, L{5, 1}},
		{"max tie, smaller index inout", MaxLoc, L{5, 3}, L{5, 1}, L{5, 1}},
		{"max tie, same index", MaxLoc, L{5, 2}, L{5, 2}, L{5, 2}},
		{"min smaller in", MinLoc, L{-7, 9}, L{5, 1}, L{-7, 9}},
		{"min smaller inout", MinLoc, L{5, 1}, L{-7, 9}, L{-7, 9}},
		{"min tie, smaller index in", MinLoc, L{5, 1}, L{5, 3}, L{5, 1}},
		{"min tie, smaller index inout", MinLoc, L{5, 3}, L{5, 1}, L{5, 1}},
		{"max NaN in", MaxLoc, L{nan, 4}, L{math.Inf(1), 0}, L{nan, 4}},
		{"max NaN inout", MaxLoc, L{math.Inf(1), 0}, L{nan, 4}, L{nan, 4}},
		{"min NaN in", MinLoc, L{nan, 4}, L{math.Inf(-1), 0}, L{nan, 4}},
		{"min NaN inout", MinLoc, L{math.Inf(-1), 0}, L{nan, 4}, L{nan, 4}},
		{"max NaN tie", MaxLoc, L{nan, 4}, L{nan, 2}, L{nan, 2}},
		{"min NaN tie", MinLoc, L{nan, 1}, L{nan, 2}, L{nan, 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			inout := []L{c.inout}
			if err := c.op.Reduce(LocFloat64, LocBytes([]L{c.in}), LocBytes(inout)); err != nil {
				t.Fatal(err)
			}
			if !sameLoc(inout[0], c.want) {
				t.Errorf("%v(%v, %v) = %v, want %v", c.op, c.in, c.inout, inout[0], c.want)
			}
		})
	}

	// The classic use: the maximum over ranks and the lowest rank holding it.
	ranks := []Loc[int32]{{3, 0}, {8, 1}, {2, 2}, {8, 3}, {8, 4}}
	for _, o := range []*Op{MaxLoc, MinLoc} {
		want := map[*Op]Loc[int32]{MaxLoc: {8, 1}, MinLoc: {2, 2}}[o]
		for _, rev := range []bool{false, true} { // any order: the op is commutative
			acc := []Loc[int32]{{0, -1}}
			first := true
			for i := range ranks {
				if rev {
					i = len(ranks) - 1 - i
				}
				if first {
					acc[0], first = ranks[i], false
					continue
				}
				if err := o.Reduce(LocInt32, LocBytes(ranks[i:i+1]), LocBytes(acc)); err != nil {
					t.Fatal(err)
				}
			}
			if acc[0] != want {
				t.Errorf("%v over ranks (reversed %v) = %v, want %v", o, rev, acc[0], want)
			}
		}
	}
}

func TestLocTypes(t *testing.T) {
	for _, c := range []struct {
		typ  Type
		got  Type
		size uintptr
		name string
	}{
		{LocInt8, LocTypeOf[int8](), unsafe.Sizeof(Loc[int8]{}), "Loc[int8]"},
		{LocInt16, LocTypeOf[int16](), unsafe.Sizeof(Loc[int16]{}), "Loc[int16]"},
		{LocInt32, LocTypeOf[int32](), unsafe.Sizeof(Loc[int32]{}), "Loc[int32]"},
		{LocInt64, LocTypeOf[int64](), unsafe.Sizeof(Loc[int64]{}), "Loc[int64]"},
		{LocInt, LocTypeOf[int](), unsafe.Sizeof(Loc[int]{}), "Loc[int]"},
		{LocUint8, LocTypeOf[uint8](), unsafe.Sizeof(Loc[uint8]{}), "Loc[uint8]"},
		{LocUint16, LocTypeOf[uint16](), unsafe.Sizeof(Loc[uint16]{}), "Loc[uint16]"},
		{LocUint32, LocTypeOf[uint32](), unsafe.Sizeof(Loc[uint32]{}), "Loc[uint32]"},
		{LocUint64, LocTypeOf[uint64](), unsafe.Sizeof(Loc[uint64]{}), "Loc[uint64]"},
		{LocUint, LocTypeOf[uint](), unsafe.Sizeof(Loc[uint]{}), "Loc[uint]"},
		{LocUintptr, LocTypeOf[uintptr](), unsafe.Sizeof(Loc[uintptr]{}), "Loc[uintptr]"},
		{LocFloat32, LocTypeOf[float32](), unsafe.Sizeof(Loc[float32]{}), "Loc[float32]"},
		{LocFloat64, LocTypeOf[float64](), unsafe.Sizeof(Loc[float64]{}), "Loc[float64]"},
	} {
		if c.got != c.typ {
			t.Errorf("LocTypeOf for %s = %d, want %d", c.name, c.got, c.typ)
		}
		if c.typ < 16 || c.typ >= 128 {
			t.Errorf("%s = %d, not clear of the base types", c.name, c.typ)
		}
		size, name, ok := locTypeInfo(c.typ)
		if !ok || size != int(c.size) || name != c.name {
			t.Errorf("locTypeInfo(%d) = %d, %q, %v; want %d, %q, true", c.typ, size, name, ok, c.size, c.name)
		}
		if elemSize(c.typ) != int(c.size) {
			t.Errorf("elemSize(%s) = %d", c.name, elemSize(c.typ))
		}
	}
	// Every meshmpi target (amd64, arm64, wasm) aligns 8-byte values to 8.
	if unsafe.Alignof(float64(0)) == 8 && unsafe.Sizeof(int(0)) == 8 {
		if s := unsafe.Sizeof(Loc[float64]{}); s != 16 {
			t.Errorf("Loc[float64] is %d bytes, want 16", s)
		}
		if s := unsafe.Sizeof(Loc[int8]{}); s != 8 {
			t.Errorf("Loc[int8] is %d bytes, want 8", s)
		}
	}
	for i := range 256 {
		typ := Type(i)
		_, _, ok := locTypeInfo(typ)
		if want := slices.Contains(locTypes, typ); ok != want {
			t.Errorf("locTypeInfo(%d) ok = %v, want %v", i, ok, want)
		}
	}
}

// TestTypeDelegates checks that Type's methods know the pair types. It
// needs the three delegations to locTypeInfo in type.go.
func TestTypeDelegates(t *testing.T) {
	if !LocFloat64.Valid() {
		t.Skip("type.go does not delegate Size, String and Valid to locTypeInfo yet")
	}
	for _, typ := range locTypes {
		size, name, _ := locTypeInfo(typ)
		if !typ.Valid() || typ.Size() != size || typ.String() != name {
			t.Errorf("%d: Valid %v, Size %d, String %q; want true, %d, %q", typ, typ.Valid(), typ.Size(), typ.String(), size, name)
		}
	}
	for _, typ := range []Type{Invalid, 16, locBase, locBase + Complex64, locBase + Complex128, locBase + 16, 255} {
		if typ.Valid() || typ.Size() != 0 {
			t.Errorf("%d: Valid %v, Size %d; want false, 0", typ, typ.Valid(), typ.Size())
		}
	}
}

func TestLocBytesView(t *testing.T) {
	s := []Loc[int8]{{1, 2}, {-3, 4}}
	b := LocBytes(s)
	if len(b) != 2*int(unsafe.Sizeof(Loc[int8]{})) {
		t.Fatalf("len(LocBytes) = %d", len(b))
	}
	v := LocView[int8](b)
	if len(v) != 2 || &v[0] != &s[0] {
		t.Fatalf("LocView does not alias LocBytes' slice")
	}
	v[1].Index = 40
	if s[1].Index != 40 {
		t.Error("write through LocView not seen")
	}
	if LocBytes[float64](nil) != nil || LocView[float64](make([]byte, 15)) != nil {
		t.Error("empty views are not nil")
	}
	if n := len(LocView[float64](make([]byte, 40))); n != 2 {
		t.Errorf("LocView of 40 bytes has %d pairs, want 2 (trailing bytes left out)", n)
	}
}
