//go:build goexperiment.simd && amd64

package op

import "simd/archsimd"

// Vector loops for Sum on the types MPI programs reduce most, built only
// with GOEXPERIMENT=simd (Go 1.26's experimental simd/archsimd) on amd64
// and used only where the CPU has AVX2; the portable loops of kernels.go
// serve everywhere else. Each lane adds exactly as the scalar loop does
// (element by element, no reassociation), so results are bit-identical.
// Measured on the 2-core EPYC development machine, float64, 1 KiB and
// 64 KiB per operand: 2–2.5× the scalar loop; at 1 MiB both are bound by
// the cache and memory (see BenchmarkReduce).

func defineVector() {
	if !archsimd.X86.AVX2() {
		return
	}
	Sum.kernels[Float64] = typed(sumFloat64AVX2)
	Sum.kernels[Float32] = typed(sumFloat32AVX2)
	Sum.kernels[Int64] = typed(sumInt64AVX2)
	Sum.kernels[Int32] = typed(sumInt32AVX2)
}

// Each loop takes two 256-bit vectors per iteration (two independent
// load-add-store chains), then finishes the tail with the scalar loop.

func sumFloat64AVX2(in, inout []float64) {
	inout = inout[:len(in)]
	for len(in) >= 8 {
		a, b := archsimd.LoadFloat64x4Slice(in), archsimd.LoadFloat64x4Slice(in[4:])
		a.Add(archsimd.LoadFloat64x4Slice(inout)).StoreSlice(inout)
		b.Add(archsimd.LoadFloat64x4Slice(inout[4:])).StoreSlice(inout[4:])
		in, inout = in[8:], inout[8:]
	}
	sum(in, inout)
}

func sumFloat32AVX2(in, inout []float32) {
	inout = inout[:len(in)]
	for len(in) >= 16 {
		a, b := archsimd.LoadFloat32x8Slice(in), archsimd.LoadFloat32x8Slice(in[8:])
		a.Add(archsimd.LoadFloat32x8Slice(inout)).StoreSlice(inout)
		b.Add(archsimd.LoadFloat32x8Slice(inout[8:])).StoreSlice(inout[8:])
		in, inout = in[16:], inout[16:]
	}
	sum(in, inout)
}

func sumInt64AVX2(in, inout []int64) {
	inout = inout[:len(in)]
	for len(in) >= 8 {
		a, b := archsimd.LoadInt64x4Slice(in), archsimd.LoadInt64x4Slice(in[4:])
		a.Add(archsimd.LoadInt64x4Slice(inout)).StoreSlice(inout)
		b.Add(archsimd.LoadInt64x4Slice(inout[4:])).StoreSlice(inout[4:])
		in, inout = in[8:], inout[8:]
	}
	sum(in, inout)
}

func sumInt32AVX2(in, inout []int32) {
	inout = inout[:len(in)]
	for len(in) >= 16 {
		a, b := archsimd.LoadInt32x8Slice(in), archsimd.LoadInt32x8Slice(in[8:])
		a.Add(archsimd.LoadInt32x8Slice(inout)).StoreSlice(inout)
		b.Add(archsimd.LoadInt32x8Slice(inout[8:])).StoreSlice(inout[8:])
		in, inout = in[16:], inout[16:]
	}
	sum(in, inout)
}
