package op

import "unsafe"

// The element-wise loops behind the predefined operations. Each computes
// inout[i] = in[i] ⊕ inout[i]; the caller guarantees len(in) == len(inout).
// They are generic over the element type so that one body serves every
// type, and each instantiation compiles to a plain loop: the operator is
// known per GC shape, so nothing is dispatched per element.

// integer is the set of integer element types: the bitwise and logical
// operations are defined on them only, as in MPI.
type integer interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 |
		~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr
}

// ordered is the set of element types with an order: Max and Min.
type ordered interface {
	integer | ~float32 | ~float64
}

func sum[T Numeric](in, inout []T) {
	inout = inout[:len(in)] // one bounds check, not one per element
	for i, x := range in {
		inout[i] = x + inout[i]
	}
}

func prod[T Numeric](in, inout []T) {
	inout = inout[:len(in)]
	for i, x := range in {
		inout[i] = x * inout[i]
	}
}

// maximum and minimum use the builtins, so floats follow the Go
// specification: a NaN operand gives NaN, and max(-0, +0) is +0.
func maximum[T ordered](in, inout []T) {
	inout = inout[:len(in)]
	for i, x := range in {
		inout[i] = max(x, inout[i])
	}
}

func minimum[T ordered](in, inout []T) {
	inout = inout[:len(in)]
	for i, x := range in {
		inout[i] = min(x, inout[i])
	}
}

// truth is MPI's integer boolean: 1 for true, 0 for false.
func truth[T integer](b bool) T {
	if b {
		return 1
	}
	return 0
}

func land[T integer](in, inout []T) {
	inout = inout[:len(in)]
	for i, x := range in {
		inout[i] = truth[T](x != 0 && inout[i] != 0)
	}
}

func lor[T integer](in, inout []T) {
	inout = inout[:len(in)]
	for i, x := range in {
		inout[i] = truth[T](x != 0 || inout[i] != 0)
	}
}

func lxor[T integer](in, inout []T) {
	inout = inout[:len(in)]
	for i, x := range in {
		inout[i] = truth[T]((x != 0) != (inout[i] != 0))
	}
}

// The bitwise operations do not depend on the element type, so one loop
// over 64-bit words serves every integer type: eight times fewer
// iterations for bytes. Buffers that are not both 8-byte aligned (a []byte
// sliced at an odd offset) take the byte loop alone.

func band(in, inout []byte) {
	a, b, ta, tb := words(in, inout)
	for i, x := range a {
		b[i] = x & b[i]
	}
	for i, x := range ta {
		tb[i] = x & tb[i]
	}
}

func bor(in, inout []byte) {
	a, b, ta, tb := words(in, inout)
	for i, x := range a {
		b[i] = x | b[i]
	}
	for i, x := range ta {
		tb[i] = x | tb[i]
	}
}

func bxor(in, inout []byte) {
	a, b, ta, tb := words(in, inout)
	for i, x := range a {
		b[i] = x ^ b[i]
	}
	for i, x := range ta {
		tb[i] = x ^ tb[i]
	}
}

// words splits two equal-length buffers into their whole 64-bit words and
// the bytes after them, or returns no words when either buffer is not
// 8-byte aligned. The results have equal lengths pairwise, which lets the
// loops above drop their bounds checks.
func words(in, inout []byte) (a, b []uint64, ta, tb []byte) {
	inout = inout[:len(in)]
	if (uintptr(unsafe.Pointer(unsafe.SliceData(in)))|uintptr(unsafe.Pointer(unsafe.SliceData(inout))))%8 != 0 {
		return nil, nil, in, inout
	}
	n := len(in) &^ 7
	a, b = View[uint64](in[:n]), View[uint64](inout[:n])
	return a, b[:len(a)], in[n:], inout[n:len(in)]
}

// maxLoc keeps the pair with the larger value and, on equal values, the
// smaller index (MPI-4.1 §6.9.4). A NaN value counts as larger than every
// number, so that MaxLoc's value agrees with Max and the operation stays
// commutative and associative when NaNs appear; between NaNs the smaller
// index wins as for any tie.
func maxLoc[T LocValue](in, inout []Loc[T]) {
	inout = inout[:len(in)]
	for i, u := range in {
		v := inout[i]
		uNaN, vNaN := u.Value != u.Value, v.Value != v.Value
		if u.Value > v.Value || uNaN && !vNaN ||
			(u.Value == v.Value || uNaN && vNaN) && u.Index < v.Index {
			inout[i] = u
		}
	}
}

// minLoc keeps the pair with the smaller value and, on equal values, the
// smaller index. A NaN value wins, as in Min.
func minLoc[T LocValue](in, inout []Loc[T]) {
	inout = inout[:len(in)]
	for i, u := range in {
		v := inout[i]
		uNaN, vNaN := u.Value != u.Value, v.Value != v.Value
		if u.Value < v.Value || uNaN && !vNaN ||
			(u.Value == v.Value || uNaN && vNaN) && u.Index < v.Index {
			inout[i] = u
		}
	}
}
