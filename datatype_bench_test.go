package meshmpi

import (
	"context"
	"errors"
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
// RecvTyped with count elements of dt laid out in size bytes.
func typedPingPong(b *testing.B, buf0 []byte, count int, dt *Datatype, typed bool) {
	b.ReportAllocs()
	err := Run(2, func(w *Comm) error {
		buf := append([]byte(nil), buf0...)
		other := 1 - w.Rank()
		send := func() error {
			if typed {
				return SendTyped(w, buf, count, dt, other, 0)
			}
			return Send(w, buf, other, 0)
		}
		recv := func() error {
			if typed {
				_, err := RecvTyped(w, buf, count, dt, other, 0)
				return err
			}
			_, err := Recv(w, buf, other, 0)
			return err
		}
		if err := Barrier(w); err != nil {
			return err
		}
		if w.Rank() == 0 {
			b.ResetTimer()
		}
		for range b.N {
			first, second := send, recv
			if w.Rank() == 1 {
				first, second = recv, send
			}
			if err := errors.Join(first(), second()); err != nil {
				return err
			}
		}
		if w.Rank() == 0 {
			b.StopTimer()
		}
		return nil
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
		b.Run(label+"/Send", func(b *testing.B) { typedPingPong(b, make([]byte, n*8), 1, row, false) })
		b.Run(label+"/SendTyped-contiguous", func(b *testing.B) { typedPingPong(b, make([]byte, n*8), 1, row, true) })
		b.Run(label+"/SendTyped-vector", func(b *testing.B) { typedPingPong(b, make([]byte, n*16), 1, col, true) })
	}
}

// BenchmarkAlltoallw runs Alltoallw with mixed non-contiguous types on 4
// ranks, in each form; persistent Start+Wait allocates nothing.
func BenchmarkAlltoallw(b *testing.B) {
	c := newA2aw(b, 4, 1, false)
	for _, form := range forms {
		b.Run(form.name, func(b *testing.B) {
			b.ReportAllocs()
			ctx := context.Background()
			err := Run(4, func(w *Comm) error {
				send, recv := c.buffers(w.Rank(), 0)
				var req *Request
				var err error
				if form.form == persistent {
					if req, err = c.call(w, persistent, send, recv, false); err != nil {
						return err
					}
				}
				if err := Barrier(w); err != nil {
					return err
				}
				if w.Rank() == 0 {
					b.ResetTimer()
				}
				for range b.N {
					r := req
					switch {
					case req != nil:
						err = req.Start()
					default:
						r, err = c.call(w, form.form, send, recv, false)
					}
					if err == nil && r != nil {
						_, err = r.Wait(ctx)
					}
					if err != nil {
						return err
					}
				}
				err = Barrier(w)
				if w.Rank() == 0 {
					b.StopTimer()
				}
				if req != nil {
					err = errors.Join(err, req.Free())
				}
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		})
	}
}
