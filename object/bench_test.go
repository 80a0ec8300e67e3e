package object

import (
	"fmt"
	"testing"

	"github.com/meshmpi/meshmpi"
)

// params is a 1 KiB fixed layout: it travels as its memory.
type params struct {
	Coeffs [120]float64
	Steps  int64
	Seed   int64
	Dims   [4]int32
	Tol    float64
	Flags  uint64
}

// settings is about 1 KiB of a config with strings, a map and slices: it
// travels as CBOR.
type settings struct {
	Name    string
	Labels  map[string]string
	Grid    []int
	Weights []float64
}

func newSettings() settings {
	s := settings{Name: "heat-2d", Labels: map[string]string{"course": "hpc101", "lab": "3"}, Grid: []int{64, 64}}
	s.Weights = make([]float64, 110)
	for i := range s.Weights {
		s.Weights[i] = float64(i) / 3
	}
	return s
}

// BenchmarkBcast compares an object Bcast of a 1 KiB value with a typed
// Bcast of 1 KiB, in the same run (ns/op is per Bcast, at rank 0).
func BenchmarkBcast(b *testing.B) {
	for _, n := range []int{2, 4} {
		b.Run(fmt.Sprintf("n=%d/typed-1KiB", n), func(b *testing.B) {
			bench(b, n, func(w *meshmpi.Comm) func() error {
				buf := make([]float64, 128)
				return func() error { return meshmpi.Bcast(w, buf, 0) }
			})
		})
		b.Run(fmt.Sprintf("n=%d/object-fixed-1KiB", n), func(b *testing.B) {
			bench(b, n, func(w *meshmpi.Comm) func() error {
				var p params
				return func() error {
					var err error
					p, err = Bcast(w, p, 0)
					return err
				}
			})
		})
		b.Run(fmt.Sprintf("n=%d/object-cbor-1KiB", n), func(b *testing.B) {
			bench(b, n, func(w *meshmpi.Comm) func() error {
				s := newSettings()
				return func() error {
					_, err := Bcast(w, s, 0)
					return err
				}
			})
		})
	}
}

// bench runs op on n in-process ranks b.N times.
func bench(b *testing.B, n int, op func(w *meshmpi.Comm) func() error) {
	err := meshmpi.Run(n, func(w *meshmpi.Comm) error {
		f := op(w)
		if err := meshmpi.Barrier(w); err != nil {
			return err
		}
		if w.Rank() == 0 {
			b.ReportAllocs()
			b.ResetTimer()
		}
		for range b.N {
			if err := f(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}
