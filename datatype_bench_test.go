package meshmpi

import (
	"fmt"
	"testing"
)

// BenchmarkDatatypePack packs and unpacks a column of a row-major
// float64 matrix (a Vector of 8-byte runs), the common halo case, and a
// Vector of 64-byte runs.
func BenchmarkDatatypePack(b *testing.B) {
	for _, c := range []struct {
		name              string
		rows, block, cols int
	}{{"column/1024x8B", 1024, 1, 8}, {"blocks/1024x64B", 1024, 8, 16}} {
		dt := committed(b)(Vector(c.rows, c.block, c.cols, Float64))
		buf := make([]byte, c.rows*c.cols*8)
		packed := make([]byte, dt.Size())
		var tb typedBuf
		if err := tb.check(buf, 0, 1, dt); err != nil {
			b.Fatal(err)
		}
		b.Run(c.name+"/pack", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(packed)))
			for range b.N {
				tb.pack(packed)
			}
		})
		b.Run(c.name+"/unpack", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(packed)))
			for range b.N {
				tb.unpack(packed)
			}
		})
	}
}

// typedPingPong is pingPong (bench_test.go) through SendTyped and
// RecvTyped with count elements of dt laid out in buf0's bytes.
func typedPingPong(b *testing.B, buf0 []byte, count int, dt *Datatype) {
	b.ReportAllocs()
	err := Run(2, func(w *Comm) error {
		buf := append([]byte(nil), buf0...)
		other := 1 - w.Rank()
		send := func() error { return SendTyped(w, buf, count, dt, other, 0) }
		recv := func() error {
			_, err := RecvTyped(w, buf, count, dt, other, 0)
			return err
		}
		return timeLoop(b, w, roundTrip(w, send, recv))
	})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(2 * count * dt.Size()))
}

// BenchmarkSendTyped compares a round trip of a contiguous derived type
// (a Contiguous of float64, sent with no copy) with the plain typed Send
// of the same bytes, and shows the cost of packing a strided Vector of
// the same size.
func BenchmarkSendTyped(b *testing.B) {
	for _, n := range []int{1, 8 << 10, 128 << 10} { // float64s: 8 B, 64 KiB, 1 MiB
		label := fmt.Sprintf("%dB", n*8)
		row := committed(b)(Contiguous(n, Float64))
		col := committed(b)(Vector(n, 1, 2, Float64))
		b.Run(label+"/Send", func(b *testing.B) { pingPong(b, n*8) })
		b.Run(label+"/SendTyped-contiguous", func(b *testing.B) { typedPingPong(b, make([]byte, n*8), 1, row) })
		b.Run(label+"/SendTyped-vector", func(b *testing.B) { typedPingPong(b, make([]byte, n*16), 1, col) })
	}
}

// BenchmarkAlltoallw runs Alltoallw with mixed non-contiguous types on 4
// ranks, in each form; persistent Start+Wait allocates nothing.
func BenchmarkAlltoallw(b *testing.B) {
	c := newA2aw(b, 4, 1, false)
	for _, form := range forms {
		b.Run(form.name, func(b *testing.B) {
			b.ReportAllocs()
			err := Run(4, func(w *Comm) error {
				send, recv := c.buffers(w.Rank(), 0)
				return timeCalls(b, w, form.form, func(f collForm) (*Request, error) {
					return c.call(w, f, send, recv, false)
				})
			})
			if err != nil {
				b.Fatal(err)
			}
		})
	}
}
