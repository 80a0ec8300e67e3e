package op

import "unsafe"

// The element-wise loops behind the predefined operations. Each computes
// inout[i] = in[i] ⊕ inout[i]; the caller guarantees len(in) == len(inout).
// They are generic over the element type so that one body serves every
// type, and each instantiation compiles to a plain loop: the operator is
// known per GC shape, so nothing is dispatched per element.
//
// Sum, Prod, Max and Min, the operations reductions spend their time in,
// take unroll elements a trip: eight independent load-op-store chains
// under one loop test and one bounds check, then the plain loop for the
// rest. Every element is still computed alone, as in[i] ⊕ inout[i], so
// the results are those of the plain loop bit for bit, floats included
// (nothing is reassociated). Go does not vectorize loops, so the gain is
// the loop's overhead, and it shows only while the operands stay in
// cache: on 4 KiB operands (BenchmarkKernels, 2-core EPYC, best of 7–27
// interleaved runs at load 16–23) Sum took 1.4× less time on float64,
// 1.9–3× on float32, int32 and bytes; Prod 1.4–2.6× (int64 1.0×), Min
// 1.2–1.9×, Max 1.0–2.8×. At 64 KiB and 1 MiB, where the memory is the
// limit, the two loops are level; a vector loop moves two or four
// elements a load (kernels_simd_amd64.go).

// unroll is the unrolled loops' width in elements.
const unroll = 8

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
	n := 0
	if unrolledLoops {
		n = len(in) &^ (unroll - 1)
		for i := 0; i < n; i += unroll {
			a, b := in[i:i+unroll:i+unroll], inout[i:i+unroll:i+unroll]
			b[0] = a[0] + b[0]
			b[1] = a[1] + b[1]
			b[2] = a[2] + b[2]
			b[3] = a[3] + b[3]
			b[4] = a[4] + b[4]
			b[5] = a[5] + b[5]
			b[6] = a[6] + b[6]
			b[7] = a[7] + b[7]
		}
	}
	sumPlain(in[n:], inout[n:])
}

// sumPlain is the one-element loop: sum's tail, and the reference the
// unrolled and vector loops are tested against.
func sumPlain[T Numeric](in, inout []T) {
	inout = inout[:len(in)]
	for i, x := range in {
		inout[i] = x + inout[i]
	}
}

func prod[T Numeric](in, inout []T) {
	inout = inout[:len(in)]
	n := 0
	if unrolledLoops {
		n = len(in) &^ (unroll - 1)
		for i := 0; i < n; i += unroll {
			a, b := in[i:i+unroll:i+unroll], inout[i:i+unroll:i+unroll]
			b[0] = a[0] * b[0]
			b[1] = a[1] * b[1]
			b[2] = a[2] * b[2]
			b[3] = a[3] * b[3]
			b[4] = a[4] * b[4]
			b[5] = a[5] * b[5]
			b[6] = a[6] * b[6]
			b[7] = a[7] * b[7]
		}
	}
	prodPlain(in[n:], inout[n:])
}

func prodPlain[T Numeric](in, inout []T) {
	inout = inout[:len(in)]
	for i, x := range in {
		inout[i] = x * inout[i]
	}
}

// maximum and minimum use the builtins, so floats follow the Go
// specification: a NaN operand gives NaN, and max(-0, +0) is +0.
func maximum[T ordered](in, inout []T) {
	inout = inout[:len(in)]
	n := 0
	if unrolledLoops {
		n = len(in) &^ (unroll - 1)
		for i := 0; i < n; i += unroll {
			a, b := in[i:i+unroll:i+unroll], inout[i:i+unroll:i+unroll]
			b[0] = max(a[0], b[0])
			b[1] = max(a[1], b[1])
			b[2] = max(a[2], b[2])
			b[3] = max(a[3], b[3])
			b[4] = max(a[4], b[4])
			b[5] = max(a[5], b[5])
			b[6] = max(a[6], b[6])
			b[7] = max(a[7], b[7])
		}
	}
	maximumPlain(in[n:], inout[n:])
}

func maximumPlain[T ordered](in, inout []T) {
	inout = inout[:len(in)]
	for i, x := range in {
		inout[i] = max(x, inout[i])
	}
}

func minimum[T ordered](in, inout []T) {
	inout = inout[:len(in)]
	n := 0
	if unrolledLoops {
		n = len(in) &^ (unroll - 1)
		for i := 0; i < n; i += unroll {
			a, b := in[i:i+unroll:i+unroll], inout[i:i+unroll:i+unroll]
			b[0] = min(a[0], b[0])
			b[1] = min(a[1], b[1])
			b[2] = min(a[2], b[2])
			b[3] = min(a[3], b[3])
			b[4] = min(a[4], b[4])
			b[5] = min(a[5], b[5])
			b[6] = min(a[6], b[6])
			b[7] = min(a[7], b[7])
		}
	}
	minimumPlain(in[n:], inout[n:])
}

func minimumPlain[T ordered](in, inout []T) {
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
