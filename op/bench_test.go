package op

import (
	"fmt"
	"testing"
)

// BenchmarkReduce measures Reduce on buffers of 1 KiB to 1 MiB per
// operand; MB/s counts the bytes of one operand.
func BenchmarkReduce(b *testing.B) {
	const kib, mib = 1 << 10, 1 << 20
	addf := New("addf", true, func(in, inout []float64) {
		for i := range in {
			inout[i] += in[i]
		}
	})
	for _, c := range []struct {
		op   *Op
		typ  Type
		size int
	}{
		{Sum, Float64, kib},
		{Sum, Float64, 64 * kib},
		{Sum, Float64, 512 * kib}, // a 2-rank ReduceScatterBlock of 1 MiB
		{Sum, Float64, mib},
		{Sum, Float32, mib},
		{Sum, Int32, mib},
		{Sum, Complex128, mib},
		{Prod, Int64, mib},
		{Max, Int32, mib},
		{Max, Float64, kib},
		{Max, Float64, mib},
		{Min, Float32, mib},
		{Land, Uint8, mib},
		{Band, Uint64, mib},
		{Bxor, Uint8, mib},
		{MaxLoc, LocFloat64, kib},
		{MaxLoc, LocFloat64, mib},
		{MinLoc, LocInt32, mib},
		{Replace, Float64, mib},
		{NoOp, Float64, mib},
		{addf, Float64, kib},
		{addf, Float64, mib},
	} {
		typ := c.typ.String()
		if _, loc, ok := locTypeInfo(c.typ); ok { // until Type.String knows pairs
			typ = loc
		}
		name := fmt.Sprintf("%v/%s/%dKiB", c.op, typ, c.size/kib)
		if c.size >= mib {
			name = fmt.Sprintf("%v/%s/%dMiB", c.op, typ, c.size/mib)
		}
		b.Run(name, func(b *testing.B) {
			in, inout := make([]byte, c.size), make([]byte, c.size)
			b.SetBytes(int64(c.size))
			b.ReportAllocs()
			for b.Loop() {
				if err := c.op.Reduce(c.typ, in, inout); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLoop is the plain Go loop that Sum/float64 dispatches to, the
// floor for Reduce's overhead.
func BenchmarkLoop(b *testing.B) {
	for _, size := range []int{1 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("float64/%dB", size), func(b *testing.B) {
			in, inout := make([]float64, size/8), make([]float64, size/8)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				for i := range in {
					inout[i] += in[i]
				}
			}
		})
	}
}

// BenchmarkKernels measures the loops of Sum, Prod, Max and Min through
// Reduce on operands of 4 KiB, which stay in the first-level cache: the
// loops' own cost, without the memory's.
func BenchmarkKernels(b *testing.B) {
	const size = 4 << 10
	for _, o := range []*Op{Sum, Prod, Max, Min} {
		for _, typ := range []Type{Float64, Float32, Int64, Int32, Uint8} {
			b.Run(fmt.Sprintf("%v/%v", o, typ), func(b *testing.B) {
				in, inout := make([]byte, size), make([]byte, size)
				b.SetBytes(size)
				b.ReportAllocs()
				for b.Loop() {
					if err := o.Reduce(typ, in, inout); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
