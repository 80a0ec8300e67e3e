package op

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"unsafe"
)

// The expected values in these tests come from naive scalar references
// computed in a wider domain (uint64 bits, float64, complex128, cmp.Compare),
// never from the kernels.

// lengths straddle the unrolled loops' width (unroll, 8): none, a tail
// alone, whole trips, and whole trips with a tail.
var lengths = []int{0, 1, 7, 8, 9, 15, 16, 17, 1000, 1003}

// predefinedOps is every predefined op, for the sweeps.
var predefinedOps = []*Op{Sum, Prod, Max, Min, Land, Lor, Lxor, Band, Bor, Bxor, MaxLoc, MinLoc, Replace, NoOp}

var (
	integerTypes = []Type{Int8, Int16, Int32, Int64, Int, Uint8, Uint16, Uint32, Uint64, Uint, Uintptr}
	floatTypes   = []Type{Float32, Float64}
	complexTypes = []Type{Complex64, Complex128}
	locTypes     = []Type{LocInt8, LocInt16, LocInt32, LocInt64, LocInt, LocUint8, LocUint16, LocUint32,
		LocUint64, LocUint, LocUintptr, LocFloat32, LocFloat64}
)

// definedOn is MPI's table (MPI-4.1 §6.9.2), written out by hand.
func definedOn(o *Op) []Type {
	switch o {
	case Sum, Prod:
		return slices.Concat(integerTypes, floatTypes, complexTypes)
	case Max, Min:
		return slices.Concat(integerTypes, floatTypes)
	case Land, Lor, Lxor, Band, Bor, Bxor:
		return integerTypes
	case MaxLoc, MinLoc:
		return locTypes
	case Replace, NoOp:
		return slices.Concat(integerTypes, floatTypes, complexTypes, locTypes)
	}
	return nil
}

// mix scrambles (i, seed) so the operands of one element are unrelated.
func mix(i, seed int) uint64 {
	h := uint64(i)*0x9e3779b97f4a7c15 ^ uint64(seed)*0xc2b2ae3d27d4eb4f
	h ^= h >> 29
	h *= 0xbf58476d1ce4e5b9
	return h ^ h>>32
}

// intValues returns n elements mixing zero, all ones (-1), the high bit,
// one and small signed values, so overflow, signs and truth all occur.
func intValues[T integer](n, seed int) []T {
	bits := 8 * unsafe.Sizeof(T(0))
	s := make([]T, n)
	for i := range s {
		h := mix(i, seed)
		switch h % 8 {
		case 0, 1:
			s[i] = 0
		case 2:
			s[i] = ^T(0)
		case 3:
			s[i] = T(1) << (bits - 1)
		case 4:
			s[i] = 1
		default:
			s[i] = T(int64(h>>40%19) - 9)
		}
	}
	return s
}

// floatValues returns integer-valued elements and the special values:
// ±0, ±Inf and NaN.
func floatValues[T ~float32 | ~float64](n, seed int) []T {
	s := make([]T, n)
	for i := range s {
		h := mix(i, seed)
		switch h % 16 {
		case 0:
			s[i] = T(math.NaN())
		case 1:
			s[i] = T(math.Inf(1))
		case 2:
			s[i] = T(math.Inf(-1))
		case 3:
			s[i] = T(math.Copysign(0, -1))
		case 4, 5:
			s[i] = 0
		case 6:
			s[i] = T(1 << 20)
		default:
			s[i] = T(int64(h>>40%41) - 20)
		}
	}
	return s
}

func complexValues[T ~complex64 | ~complex128](n, seed int) []T {
	s := make([]T, n)
	for i := range s {
		h := mix(i, seed)
		s[i] = T(complex(float64(int64(h>>40%41)-20), float64(int64(h>>20%41)-20)))
	}
	return s
}

func truthOf(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// refInt computes a ⊕ b on the two's complement bits in uint64, then
// truncates to T: the same wrap-around Go's arithmetic has on T.
func refInt[T integer](o *Op, a, b T) T {
	x, y := uint64(a), uint64(b) // sign-extends signed types
	switch o {
	case Sum:
		return T(x + y)
	case Prod:
		return T(x * y)
	case Max:
		if cmp.Compare(a, b) >= 0 {
			return a
		}
		return b
	case Min:
		if cmp.Compare(a, b) <= 0 {
			return a
		}
		return b
	case Land:
		return T(truthOf(x != 0 && y != 0))
	case Lor:
		return T(truthOf(x != 0 || y != 0))
	case Lxor:
		return T(truthOf((x != 0) != (y != 0)))
	case Band:
		return T(x & y)
	case Bor:
		return T(x | y)
	case Bxor:
		return T(x ^ y)
	case Replace:
		return a
	case NoOp:
		return b
	}
	panic("refInt: " + o.Name())
}

// refFloat computes in float64 and rounds once to T, which is exact for a
// single float32 addition or multiplication. Max and Min spell out the
// rules of Go's builtins: NaN wins, and +0 is above -0.
func refFloat[T ~float32 | ~float64](o *Op, a, b T) T {
	x, y := float64(a), float64(b)
	switch o {
	case Sum:
		return T(x + y)
	case Prod:
		return T(x * y)
	case Max, Min:
		switch {
		case math.IsNaN(x):
			return a
		case math.IsNaN(y):
			return b
		case x == y && x == 0: // ±0: Max prefers +0, Min prefers -0
			if math.Signbit(x) == (o == Max) {
				return b
			}
			return a
		case (x > y) == (o == Max):
			return a
		}
		return b
	case Replace:
		return a
	case NoOp:
		return b
	}
	panic("refFloat: " + o.Name())
}

func refComplex[T ~complex64 | ~complex128](o *Op, a, b T) T {
	x, y := complex128(a), complex128(b)
	switch o {
	case Sum:
		return T(x + y)
	case Prod:
		// (p+qi)(r+si) by hand; the parts are small integers, so exact.
		p, q, r, s := real(x), imag(x), real(y), imag(y)
		return T(complex(p*r-q*s, p*s+q*r))
	case Replace:
		return a
	case NoOp:
		return b
	}
	panic("refComplex: " + o.Name())
}

// same compares elements bit for bit, except that any NaN matches any NaN.
func same[T Numeric](a, b T) bool {
	if a != a || b != b { // NaN, or a complex with a NaN part
		return a != a && b != b
	}
	return slices.Equal(Bytes([]T{a}), Bytes([]T{b}))
}

// checkOp reduces generated operands of type T with o at every length and
// compares with ref. It also checks that in is left untouched.
func checkOp[T Numeric](t *testing.T, o *Op, gen func(n, seed int) []T, ref func(o *Op, a, b T) T) {
	t.Helper()
	typ := TypeOf[T]()
	for _, n := range lengths {
		in, inout := gen(n, 1), gen(n, 2)
		inBefore := slices.Clone(in)
		want := make([]T, n)
		for i := range want {
			want[i] = ref(o, in[i], inout[i])
		}
		if err := o.Reduce(typ, Bytes(in), Bytes(inout)); err != nil {
			t.Fatalf("%v on %v, n=%d: %v", o, typ, n, err)
		}
		for i := range want {
			if !same(inout[i], want[i]) {
				t.Fatalf("%v on %v, n=%d: element %d: %v ⊕ %v = %v, want %v", o, typ, n, i, inBefore[i], gen(n, 2)[i], inout[i], want[i])
			}
		}
		for i := range in {
			if !same(in[i], inBefore[i]) {
				t.Fatalf("%v on %v, n=%d: in[%d] changed from %v to %v", o, typ, n, i, inBefore[i], in[i])
			}
		}
		// in and inout the same buffer (Reduce allows it): x ⊕ x
		both := gen(n, 3)
		for i, x := range both {
			want[i] = ref(o, x, x)
		}
		if err := o.Reduce(typ, Bytes(both), Bytes(both)); err != nil {
			t.Fatalf("%v on %v, n=%d, one buffer: %v", o, typ, n, err)
		}
		for i := range want {
			if !same(both[i], want[i]) {
				t.Fatalf("%v on %v, n=%d, one buffer: element %d: %v, want %v", o, typ, n, i, both[i], want[i])
			}
		}
	}
}

func checkInteger[T integer](t *testing.T) {
	for _, o := range []*Op{Sum, Prod, Max, Min, Land, Lor, Lxor, Band, Bor, Bxor, Replace, NoOp} {
		t.Run(o.Name()+"/"+TypeOf[T]().String(), func(t *testing.T) {
			checkOp(t, o, intValues[T], refInt[T])
		})
	}
}

func checkFloat[T ~float32 | ~float64](t *testing.T) {
	for _, o := range []*Op{Sum, Prod, Max, Min, Replace, NoOp} {
		t.Run(o.Name()+"/"+TypeOf[T]().String(), func(t *testing.T) {
			checkOp(t, o, floatValues[T], refFloat[T])
		})
	}
}

func checkComplex[T ~complex64 | ~complex128](t *testing.T) {
	for _, o := range []*Op{Sum, Prod, Replace, NoOp} {
		t.Run(o.Name()+"/"+TypeOf[T]().String(), func(t *testing.T) {
			checkOp(t, o, complexValues[T], refComplex[T])
		})
	}
}

func TestReducePredefined(t *testing.T) {
	checkInteger[int8](t)
	checkInteger[int16](t)
	checkInteger[int32](t)
	checkInteger[int64](t)
	checkInteger[int](t)
	checkInteger[uint8](t)
	checkInteger[uint16](t)
	checkInteger[uint32](t)
	checkInteger[uint64](t)
	checkInteger[uint](t)
	checkInteger[uintptr](t)
	checkFloat[float32](t)
	checkFloat[float64](t)
	checkComplex[complex64](t)
	checkComplex[complex128](t)
}

// TestReduceCases pins the semantics the sweep relies on with literal
// values: wrap-around, MPI truth values, bit operations, NaN and signed
// zero in Max and Min, and operand order in Replace and NoOp.
func TestReduceCases(t *testing.T) {
	negZero := math.Copysign(0, -1)
	nan := math.NaN()
	for _, c := range []struct {
		name      string
		op        *Op
		in, inout []int8
		want      []int8
	}{
		{"sum wraps", Sum, []int8{127, -128, 5}, []int8{1, -1, -7}, []int8{-128, 127, -2}},
		{"prod wraps", Prod, []int8{64, -1, 3}, []int8{2, -128, -4}, []int8{-128, -128, -12}},
		{"max", Max, []int8{-3, 4, 0}, []int8{-5, 9, 0}, []int8{-3, 9, 0}},
		{"min", Min, []int8{-3, 4, 0}, []int8{-5, 9, 0}, []int8{-5, 4, 0}},
		{"land", Land, []int8{0, 0, 2, -7}, []int8{0, 3, 0, 5}, []int8{0, 0, 0, 1}},
		{"lor", Lor, []int8{0, 0, 2, -7}, []int8{0, 3, 0, 5}, []int8{0, 1, 1, 1}},
		{"lxor", Lxor, []int8{0, 0, 2, -7}, []int8{0, 3, 0, 5}, []int8{0, 1, 1, 0}},
		{"band", Band, []int8{0b1100, -1}, []int8{0b1010, 0x55}, []int8{0b1000, 0x55}},
		{"bor", Bor, []int8{0b1100, -128}, []int8{0b1010, 1}, []int8{0b1110, -127}},
		{"bxor", Bxor, []int8{0b1100, -1}, []int8{0b1010, 0x0f}, []int8{0b0110, -16}},
		{"replace", Replace, []int8{1, 2}, []int8{3, 4}, []int8{1, 2}},
		{"no op", NoOp, []int8{1, 2}, []int8{3, 4}, []int8{3, 4}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := ReduceSlices(c.op, c.in, c.inout); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(c.inout, c.want) {
				t.Errorf("got %v, want %v", c.inout, c.want)
			}
		})
	}

	// Uint64 compares unsigned: the high bit is large, not negative.
	u := []uint64{1 << 63, 3}
	if err := ReduceSlices(Max, []uint64{1, 1 << 63}, u); err != nil || u[0] != 1<<63 || u[1] != 1<<63 {
		t.Errorf("Max uint64 = %v, %v", u, err)
	}

	for _, c := range []struct {
		name      string
		op        *Op
		in, inout float64
		want      float64
	}{
		{"max NaN left", Max, nan, 1, nan},
		{"max NaN right", Max, 1, nan, nan},
		{"min NaN left", Min, nan, -1, nan},
		{"min NaN right", Min, -1, nan, nan},
		{"max +0 -0", Max, 0, negZero, 0},
		{"max -0 +0", Max, negZero, 0, 0},
		{"min +0 -0", Min, 0, negZero, negZero},
		{"min -0 +0", Min, negZero, 0, negZero},
		{"max inf", Max, math.Inf(-1), -1e300, -1e300},
		{"sum inf", Sum, math.Inf(1), math.Inf(-1), nan},
	} {
		t.Run(c.name, func(t *testing.T) {
			inout := []float64{c.inout}
			if err := ReduceSlices(c.op, []float64{c.in}, inout); err != nil {
				t.Fatal(err)
			}
			if !same(inout[0], c.want) {
				t.Errorf("%v(%v, %v) = %v, want %v", c.op, c.in, c.inout, inout[0], c.want)
			}
		})
	}
}

// TestBitwiseOffsets runs the bitwise ops, which work in 64-bit words
// when they can, on byte buffers at every alignment and on lengths around
// a word.
func TestBitwiseOffsets(t *testing.T) {
	ref := map[*Op]func(a, b byte) byte{
		Band: func(a, b byte) byte { return a & b },
		Bor:  func(a, b byte) byte { return a | b },
		Bxor: func(a, b byte) byte { return a ^ b },
	}
	for o, f := range ref {
		for inOff := range 8 {
			for inoutOff := range 8 {
				for _, n := range []int{0, 1, 7, 8, 9, 16, 63, 100} {
					in := intValues[uint8](n+inOff, 3)[inOff:]
					inout := intValues[uint8](n+inoutOff, 4)[inoutOff:]
					want := make([]byte, n)
					for i := range want {
						want[i] = f(in[i], inout[i])
					}
					if err := o.Reduce(Uint8, in, inout); err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(inout, want) {
						t.Fatalf("%v, offsets %d/%d, n=%d: %v, want %v", o, inOff, inoutOff, n, inout, want)
					}
				}
			}
		}
	}
}

// TestDefined checks every op against every one of the 256 Type values:
// Defined agrees with MPI's table, and Reduce rejects the rest with ErrType
// whatever the buffers.
func TestDefined(t *testing.T) {
	for _, o := range predefinedOps {
		want := definedOn(o)
		for i := range 256 {
			typ := Type(i)
			def := slices.Contains(want, typ)
			if got := o.Defined(typ); got != def {
				t.Errorf("%v.Defined(%v) = %v, want %v", o, typ, got, def)
			}
			if def {
				if err := o.Reduce(typ, nil, nil); err != nil {
					t.Errorf("%v on %v, empty: %v", o, typ, err)
				}
				continue
			}
			for _, n := range []int{0, 16, 7} {
				buf := make([]byte, n)
				if err := o.Reduce(typ, buf, buf); !errors.Is(err, ErrType) {
					t.Errorf("%v on %v, %d bytes: err = %v, want ErrType", o, typ, n, err)
				}
			}
		}
	}
}

func TestOpProperties(t *testing.T) {
	names := []string{"Sum", "Prod", "Max", "Min", "Land", "Lor", "Lxor", "Band", "Bor", "Bxor", "MaxLoc", "MinLoc", "Replace", "NoOp"}
	for i, o := range predefinedOps {
		if o.Name() != names[i] || o.String() != names[i] {
			t.Errorf("op %d: Name %q, String %q, want %q", i, o.Name(), o.String(), names[i])
		}
		if !o.Predefined() {
			t.Errorf("%v: not Predefined", o)
		}
		if want := o != Replace && o != NoOp; o.Commutative() != want {
			t.Errorf("%v.Commutative() = %v, want %v", o, o.Commutative(), want)
		}
	}
	var nilOp *Op
	if nilOp.Name() != "<nil>" || nilOp.String() != "<nil>" || nilOp.Commutative() || nilOp.Predefined() || nilOp.Defined(Float64) {
		t.Error("nil *Op methods")
	}
}

// digits is non-commutative: in*10 + inout shows which operand is which.
var digits = New("digits", false, func(in, inout []int64) {
	for i := range in {
		inout[i] = in[i]*10 + inout[i]
	}
})

// matmul multiplies 2x2 matrices stored row-major in float64 quadruples:
// associative, not commutative, so rank order is visible.
var matmul = New("matmul", false, func(in, inout []float64) {
	for i := 0; i+4 <= len(in); i += 4 {
		a, b := in[i:i+4], inout[i:i+4]
		b[0], b[1], b[2], b[3] = a[0]*b[0]+a[1]*b[2], a[0]*b[1]+a[1]*b[3], a[2]*b[0]+a[3]*b[2], a[2]*b[1]+a[3]*b[3]
	}
})

func TestUserOp(t *testing.T) {
	in, inout := []int64{1, 7, 0}, []int64{2, 3, 9}
	if err := ReduceSlices(digits, in, inout); err != nil {
		t.Fatal(err)
	}
	if want := []int64{12, 73, 9}; !slices.Equal(inout, want) {
		t.Errorf("digits: in ⊕ inout = %v, want %v (in is the left operand)", inout, want)
	}
	if digits.Name() != "digits" || digits.Commutative() || digits.Predefined() {
		t.Errorf("digits: Name %q, Commutative %v, Predefined %v", digits.Name(), digits.Commutative(), digits.Predefined())
	}
	for i := range 256 {
		if got := digits.Defined(Type(i)); got != (Type(i) == Int64) {
			t.Errorf("digits.Defined(%v) = %v", Type(i), got)
		}
	}
	if err := digits.Reduce(Uint64, make([]byte, 8), make([]byte, 8)); !errors.Is(err, ErrType) {
		t.Errorf("digits on uint64: err = %v, want ErrType", err)
	}

	// A named type reduces as its underlying type.
	type celsius float64
	hottest := New("hottest", true, func(in, inout []celsius) {
		for i := range in {
			inout[i] = max(in[i], inout[i])
		}
	})
	temps := []celsius{20, 30}
	if err := hottest.Reduce(Float64, Bytes([]celsius{25, 25}), Bytes(temps)); err != nil || temps[0] != 25 || temps[1] != 30 {
		t.Errorf("hottest: %v, %v", temps, err)
	}
}

// TestRankOrder folds one matrix per rank the way a non-commutative reduce
// must, M0·M1·…·M(p-1), by reducing from the highest rank down with the
// lower rank's data as in, and checks it against a plain left-to-right
// product.
func TestRankOrder(t *testing.T) {
	for _, p := range []int{1, 2, 3, 5, 8} {
		ranks := make([][]float64, p)
		for r := range ranks {
			ranks[r] = []float64{1, float64(r + 1), float64(r % 3), 1, 2, -1, float64(r), 3}
		}
		want := []float64{1, 0, 0, 1, 1, 0, 0, 1}
		for _, m := range ranks {
			for q := 0; q < len(want); q += 4 {
				a, b := want[q:q+4], m[q:q+4]
				want[q], want[q+1], want[q+2], want[q+3] = a[0]*b[0]+a[1]*b[2], a[0]*b[1]+a[1]*b[3], a[2]*b[0]+a[3]*b[2], a[2]*b[1]+a[3]*b[3]
			}
		}
		acc := slices.Clone(ranks[p-1])
		for r := p - 2; r >= 0; r-- {
			if err := ReduceSlices(matmul, ranks[r], acc); err != nil {
				t.Fatal(err)
			}
		}
		if !slices.Equal(acc, want) {
			t.Errorf("p=%d: %v, want %v", p, acc, want)
		}
	}
}

func TestReduceErrors(t *testing.T) {
	var zero Op
	noFn := New[int32]("nofn", true, nil)
	for _, c := range []struct {
		name      string
		op        *Op
		typ       Type
		in, inout int
		want      error
	}{
		{"nil op", nil, Float64, 8, 8, ErrOp},
		{"zero op", &zero, Float64, 8, 8, ErrOp},
		{"nil function", noFn, Int32, 4, 4, ErrOp},
		{"invalid", Sum, Invalid, 8, 8, ErrType},
		{"past base types", Sum, Type(16), 8, 8, ErrType},
		{"past everything", Replace, Type(255), 8, 8, ErrType},
		{"no complex pair", Replace, locBase + Complex64, 16, 16, ErrType},
		{"pair type on Sum", Sum, LocFloat64, 16, 16, ErrType},
		{"float on Band", Band, Float64, 8, 8, ErrType},
		{"complex on Max", Max, Complex128, 16, 16, ErrType},
		{"base type on MaxLoc", MaxLoc, Float64, 8, 8, ErrType},
		{"type before count", Band, Float64, 3, 5, ErrType},
		{"lengths differ", Sum, Float64, 8, 16, ErrCount},
		{"in empty", Sum, Float64, 0, 8, ErrCount},
		{"not whole elements", Sum, Float64, 7, 7, ErrCount},
		{"not whole pairs", MaxLoc, LocFloat64, 12, 12, ErrCount},
		{"not whole on NoOp", NoOp, Int32, 6, 6, ErrCount},
		{"user op count", digits, Int64, 9, 9, ErrCount},
	} {
		t.Run(c.name, func(t *testing.T) {
			in, inout := make([]byte, c.in), make([]byte, c.inout)
			for i := range in {
				in[i] = 0xff
			}
			err := c.op.Reduce(c.typ, in, inout)
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			if slices.ContainsFunc(inout, func(b byte) bool { return b != 0 }) {
				t.Errorf("inout written on error: %v", inout)
			}
		})
	}
	if err := ReduceSlices(Sum, []float64{1}, []float64{1, 2}); !errors.Is(err, ErrCount) {
		t.Errorf("ReduceSlices, lengths differ: err = %v, want ErrCount", err)
	}
}

// TestReduceAllocs proves the hot path allocates nothing, predefined and
// user ops alike.
func TestReduceAllocs(t *testing.T) {
	f64a, f64b := Bytes(make([]float64, 100)), Bytes(make([]float64, 100))
	i32a, i32b := Bytes(make([]int32, 100)), Bytes(make([]int32, 100))
	c128a, c128b := Bytes(make([]complex128, 100)), Bytes(make([]complex128, 100))
	u8a, u8b := Bytes(make([]uint8, 100)), Bytes(make([]uint8, 100))
	la, lb := LocBytes(make([]Loc[float64], 100)), LocBytes(make([]Loc[float64], 100))
	i64a, i64b := make([]int64, 100), make([]int64, 100)
	for _, c := range []struct {
		op        *Op
		typ       Type
		in, inout []byte
	}{
		{Sum, Float64, f64a, f64b},
		{Prod, Complex128, c128a, c128b},
		{Max, Int32, i32a, i32b},
		{Min, Float64, f64a, f64b},
		{Land, Uint8, u8a, u8b},
		{Bxor, Int32, i32a, i32b},
		{MaxLoc, LocFloat64, la, lb},
		{MinLoc, LocFloat64, la, lb},
		{Replace, Float64, f64a, f64b},
		{NoOp, LocFloat64, la, lb},
		{matmul, Float64, f64a, f64b},
	} {
		if n := testing.AllocsPerRun(100, func() {
			if err := c.op.Reduce(c.typ, c.in, c.inout); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%v on %v: %v allocations per Reduce", c.op, c.typ, n)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = ReduceSlices(digits, i64a, i64b) }); n != 0 {
		t.Errorf("ReduceSlices with a user op: %v allocations", n)
	}
}

// FuzzReduce feeds arbitrary ops, types, lengths and (mis)alignments to
// Reduce: it must return nil or one of its errors, never panic.
func FuzzReduce(f *testing.F) {
	f.Add(uint8(0), uint8(Float64), []byte("0123456789abcdef0123456789abcdef"), uint8(0), uint8(0))
	f.Add(uint8(10), uint8(LocFloat64), make([]byte, 64), uint8(1), uint8(3))
	f.Add(uint8(14), uint8(Int64), make([]byte, 17), uint8(0), uint8(0))
	f.Add(uint8(200), uint8(255), []byte{1, 2, 3}, uint8(2), uint8(1))
	ops := append(slices.Clone(predefinedOps), digits, matmul, nil, &Op{})
	f.Fuzz(func(t *testing.T, opIndex, typ uint8, data []byte, skewIn, skewInout uint8) {
		o := ops[int(opIndex)%len(ops)]
		// Fresh buffers with independent misalignment, so in and inout never overlap.
		n := len(data) / 2
		in := make([]byte, n+int(skewIn%8))[skewIn%8:]
		inout := make([]byte, len(data)-n+int(skewInout%8))[skewInout%8:]
		copy(in, data)
		copy(inout, data[n:])
		err := o.Reduce(Type(typ), in, inout)
		if err != nil && !errors.Is(err, ErrOp) && !errors.Is(err, ErrType) && !errors.Is(err, ErrCount) {
			t.Fatalf("unexpected error %v", err)
		}
	})
}

// Sum's registered loops (unrolled, or vector ones with GOEXPERIMENT=simd
// on an AVX2 machine) agree bit for bit with the one-element loop, at
// every length around the unrolled and vector widths and with values
// whose sums round.
func TestSumKernelsMatchPortable(t *testing.T) {
	check := func(name string, n int, got, want any) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s, %d elements: got %v, want %v", name, n, got, want)
		}
	}
	for n := range 70 {
		f64, g64 := make([]float64, n), make([]float64, n)
		f32, g32 := make([]float32, n), make([]float32, n)
		i64, j64 := make([]int64, n), make([]int64, n)
		i32, j32 := make([]int32, n), make([]int32, n)
		for i := range n {
			f64[i], g64[i] = 0.1*float64(i)+1e16, float64(i)/3
			f32[i], g32[i] = 0.1*float32(i)+1e8, float32(i)/3
			i64[i], j64[i] = int64(i)<<60, int64(i)*7
			i32[i], j32[i] = int32(i)<<28, int32(i)*7
		}
		w64, w32, k64, k32 := slices.Clone(g64), slices.Clone(g32), slices.Clone(j64), slices.Clone(j32)
		sumPlain(f64, w64)
		sumPlain(f32, w32)
		sumPlain(i64, k64)
		sumPlain(i32, k32)
		for _, err := range []error{ReduceSlices(Sum, f64, g64), ReduceSlices(Sum, f32, g32), ReduceSlices(Sum, i64, j64), ReduceSlices(Sum, i32, j32)} {
			if err != nil {
				t.Fatal(err)
			}
		}
		check("float64", n, g64, w64)
		check("float32", n, g32, w32)
		check("int64", n, j64, k64)
		check("int32", n, j32, k32)
	}
}

// The unrolled loops of Sum, Prod, Max and Min agree bit for bit with the
// one-element loops at every length through three unrolled trips, on
// values whose sums and products round, NaNs and signed zeros included,
// and with in and inout one buffer.
func TestUnrolledKernelsMatchPlain(t *testing.T) {
	for _, c := range []struct {
		name  string
		check func(t *testing.T, n int)
	}{
		{"float64", matchPlain(func(i, seed int) float64 { return roundingFloat(i, seed) })},
		{"float32", matchPlain(func(i, seed int) float32 { return float32(roundingFloat(i, seed)) })},
		{"int64", matchPlain(func(i, seed int) int64 { return int64(mix(i, seed)) })},
		{"int32", matchPlain(func(i, seed int) int32 { return int32(mix(i, seed)) })},
		{"uint8", matchPlain(func(i, seed int) uint8 { return uint8(mix(i, seed)) })},
	} {
		t.Run(c.name, func(t *testing.T) {
			for n := range 3*unroll + 2 {
				c.check(t, n)
			}
		})
	}
}

// roundingFloat mixes values of different magnitudes, whose sums and
// products round, with the special values.
func roundingFloat(i, seed int) float64 {
	h := mix(i, seed)
	switch h % 10 {
	case 0:
		return math.NaN()
	case 1:
		return math.Copysign(0, -1)
	case 2:
		return 0
	case 3:
		return math.Inf(1)
	}
	return (float64(h>>11)/float64(1<<53) - 0.5) * math.Pow(10, float64(h>>3%24)-8)
}

func matchPlain[T ~int32 | ~int64 | ~uint8 | ~float32 | ~float64](val func(i, seed int) T) func(t *testing.T, n int) {
	return func(t *testing.T, n int) {
		t.Helper()
		for _, c := range []struct {
			op    *Op
			plain func(in, inout []T)
		}{
			{Sum, sumPlain[T]}, {Prod, prodPlain[T]}, {Max, maximumPlain[T]}, {Min, minimumPlain[T]},
		} {
			in, got := make([]T, n), make([]T, n)
			for i := range n {
				in[i], got[i] = val(i, 1), val(i, 2)
			}
			want, self, selfWant := slices.Clone(got), slices.Clone(in), slices.Clone(in)
			c.plain(in, want)
			c.plain(selfWant, selfWant)
			if err := ReduceSlices(c.op, in, got); err != nil {
				t.Fatal(err)
			}
			if err := ReduceSlices(c.op, self, self); err != nil {
				t.Fatal(err)
			}
			for i := range n {
				if !same(got[i], want[i]) || !same(self[i], selfWant[i]) {
					t.Fatalf("%v, %d elements: element %d: got %v (one buffer %v), want %v (%v)", c.op, n, i, got[i], self[i], want[i], selfWant[i])
				}
			}
		}
	}
}
