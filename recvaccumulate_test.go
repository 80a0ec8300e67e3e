package meshmpi

import (
	"errors"
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/op"
)

// accumulateRef is the sequential reference: what buf holds after msg is
// reduced into it, element by element, with the message as left operand.
func accumulateRef[T Element](o *Op, msg, buf []T) []T {
	want := append([]T(nil), buf...)
	n := min(len(msg), len(buf))
	for i := range n {
		in, inout := []T{msg[i]}, []T{want[i]}
		if err := op.ReduceSlices(o, in, inout); err != nil {
			panic(err)
		}
		want[i] = inout[0]
	}
	return want
}

// affine is a non-commutative op: inout = 2·in + inout. Reducing in the
// wrong operand order gives a different answer.
var affine = op.New("affine", false, func(in, inout []int64) {
	for i := range in {
		inout[i] = 2*in[i] + inout[i]
	}
})

func accumulateCase[T Element](t *testing.T, name string, o *Op, count, bufLen int, opts []Option, gen func(rank, i int) T) {
	t.Run(name, func(t *testing.T) {
		msg := make([]T, count)
		buf := make([]T, bufLen)
		for i := range msg {
			msg[i] = gen(0, i)
		}
		for i := range buf {
			buf[i] = gen(1, i)
		}
		want := accumulateRef(o, msg, buf)
		world(t, 2, func(w *Comm) error {
			if w.Rank() == 0 {
				return Send(w, msg, 1, 7)
			}
			st, err := RecvAccumulate(w, buf, o, AnySource, 7)
			if count > bufLen {
				if !errors.Is(err, ErrTruncate) {
					return fmt.Errorf("a %d-element message into %d: got %v, want ErrTruncate", count, bufLen, err)
				}
			} else if err != nil {
				return err
			}
			if st.Source != 0 || st.Tag != 7 || st.Count != min(count, bufLen) {
				return fmt.Errorf("status %+v", st)
			}
			return nil
		}, opts...)
		require.Equal(t, want, buf)
	})
}

// Every fragment is reduced as it lands, whatever the protocol and however
// frames cut the elements: eager and rendezvous, frame sizes that split
// elements (a partial element is carried to the next fragment), truncation,
// Replace as a plain receive, and a non-commutative op's operand order.
func TestRecvAccumulate(t *testing.T) {
	f64 := func(rank, i int) float64 { return float64(rank*1000+i) + 0.5 }
	i64 := func(rank, i int) int64 { return int64(rank*7919 + i*31) }
	u8 := func(rank, i int) uint8 { return uint8(rank*3 + i) }
	c128 := func(rank, i int) complex128 { return complex(float64(i), float64(rank)) }
	loc := func(rank, i int) Loc[float64] {
		return Loc[float64]{Value: float64((i*7 + rank*5) % 11), Index: int32(rank)}
	}
	odd := []Option{WithFrameSize(1000)}                    // 960-byte payloads: elements straddle frames
	rdv := []Option{WithEagerLimit(0), WithFrameSize(1003)} // every message by rendezvous, odd fragments

	accumulateCase(t, "float64 sum eager", Sum, 100, 100, nil, f64)
	accumulateCase(t, "float64 sum rendezvous odd frames", Sum, 5000, 5000, rdv, f64)
	accumulateCase(t, "float64 max straddling frames", Max, 3000, 3000, odd, f64)
	accumulateCase(t, "int64 affine (non-commutative) rendezvous", affine, 4001, 4001, rdv, i64)
	accumulateCase(t, "uint8 bxor rendezvous", Bxor, 70001, 70001, rdv, u8)
	accumulateCase(t, "complex128 prod rendezvous", Prod, 999, 999, rdv, c128)
	accumulateCase(t, "maxloc pairs rendezvous", MaxLoc, 777, 777, rdv, loc)
	accumulateCase(t, "replace is recv", Replace, 3000, 3000, rdv, f64)
	accumulateCase(t, "noop keeps the buffer", NoOp, 3000, 3000, rdv, f64)
	accumulateCase(t, "shorter message", Sum, 10, 100, nil, f64)
	accumulateCase(t, "zero length", Sum, 0, 5, nil, f64)
	accumulateCase(t, "truncated eager", Sum, 200, 150, nil, f64)
	accumulateCase(t, "truncated rendezvous", Sum, 5000, 2001, rdv, f64)
}

// An unexpected message (it arrives before the receive is posted) is
// reduced when the receive matches it.
func TestRecvAccumulateUnexpected(t *testing.T) {
	msg := []int64{1, 2, 3, 4}
	buf := []int64{10, 20, 30, 40}
	world(t, 2, func(w *Comm) error {
		if w.Rank() == 0 {
			if err := Send(w, msg, 1, 0); err != nil {
				return err
			}
			return Barrier(w)
		}
		if _, err := w.Probe(0, 0); err != nil {
			return err
		}
		if _, err := RecvAccumulate(w, buf, Sum, 0, 0); err != nil {
			return err
		}
		return Barrier(w)
	})
	require.Equal(t, []int64{11, 22, 33, 44}, buf)
}

// A persistent accumulating receive started many times sums every
// message; nonblocking ones from several sources complete in any order.
func TestRecvAccumulatePersistentAndNonblocking(t *testing.T) {
	const starts, n = 200, 1000
	sum := make([]float64, n)
	world(t, 2, func(w *Comm) error {
		part := make([]float64, n)
		for i := range part {
			part[i] = float64(i)
		}
		if w.Rank() == 0 {
			for range starts {
				if err := Send(w, part, 1, 3); err != nil {
					return err
				}
			}
			return nil
		}
		r, err := RecvAccumulateInit(w, sum, Sum, 0, 3)
		if err != nil {
			return err
		}
		defer r.Free()
		for range starts {
			if err := r.Start(); err != nil {
				return err
			}
			if _, err := r.Wait(t.Context()); err != nil {
				return err
			}
		}
		return nil
	})
	for i := range sum {
		require.Equal(t, float64(i*starts), sum[i], "element %d", i)
	}

	total := make([]int32, 64)
	world(t, 5, func(w *Comm) error {
		if w.Rank() != 0 {
			mine := make([]int32, len(total))
			for i := range mine {
				mine[i] = int32(w.Rank() * (i + 1))
			}
			return Send(w, mine, 0, 0)
		}
		var reqs []*Request
		for range w.Size() - 1 {
			r, err := IrecvAccumulate(w, total, Sum, AnySource, 0)
			if err != nil {
				return err
			}
			reqs = append(reqs, r)
		}
		err := Waitall(t.Context(), reqs, nil)
		return err
	})
	for i := range total {
		require.Equal(t, int32((1+2+3+4)*(i+1)), total[i])
	}
}

// Misuse gets errors, not panics: an op not defined on the element type,
// a nil op, bad ranks and tags.
func TestRecvAccumulateErrors(t *testing.T) {
	world(t, 2, func(w *Comm) error {
		for _, tc := range []struct {
			name string
			err  error
			want error
		}{
			{"band on float64", first(RecvAccumulate(w, make([]float64, 1), Band, 0, 0)), ErrOp},
			{"nil op", first(RecvAccumulate(w, make([]float64, 1), nil, 0, 0)), ErrOp},
			{"bad rank", first(RecvAccumulate(w, make([]float64, 1), Sum, 5, 0)), ErrRank},
			{"bad tag", first(IrecvAccumulate(w, make([]float64, 1), Sum, 0, -5)), ErrTag},
		} {
			if !errors.Is(tc.err, tc.want) {
				return fmt.Errorf("%s: got %v, want %v", tc.name, tc.err, tc.want)
			}
		}
		return nil
	})
}

func first[A any](_ A, err error) error { return err }

// A 64 MiB accumulating receive allocates at most about one fragment, not
// a temporary copy of the message, even when it is unexpected.
func TestRecvAccumulateBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("64 MiB transfer")
	}
	const n = 8 << 20 // float64s: 64 MiB
	src, dst := make([]float64, n), make([]float64, n)
	for i := range src {
		src[i], dst[i] = float64(i&1023), 1
	}
	var before, after runtime.MemStats
	world(t, 2, func(w *Comm) error {
		if w.Rank() == 0 {
			runtime.GC()
			runtime.ReadMemStats(&before)
			return Send(w, src, 1, 0)
		}
		if _, err := w.Probe(0, 0); err != nil {
			return err
		}
		_, err := RecvAccumulate(w, dst, Sum, 0, 0)
		runtime.ReadMemStats(&after)
		return err
	})
	for i := 0; i < n; i += 4099 {
		require.Equal(t, float64(i&1023)+1, dst[i], "element %d", i)
	}
	extra := after.TotalAlloc - before.TotalAlloc
	t.Logf("heap allocated while accumulating 64 MiB: %d bytes", extra)
	require.Less(t, extra, uint64(1<<20), "the receive must not buffer the message")
}

// BenchmarkRecvAccumulate compares the accumulating receive with what it
// replaces, Recv into a temporary buffer then ReduceLocal, on float64 sums
// from 8 B to 64 MiB over memory links. Each iteration rank 0 sends and
// rank 1 receives and reduces; a zero-byte reply keeps the two in step so
// unexpected messages do not pile up. extra-B is the receiving rank's heap
// growth over the whole benchmark (runtime.MemStats.TotalAlloc), its
// receive buffer excluded: the temporary Recv + ReduceLocal needs, or
// what the accumulating receive stages.
func BenchmarkRecvAccumulate(b *testing.B) {
	for _, size := range []int{8, 4 << 10, 64 << 10, 1 << 20, 16 << 20, 64 << 20} {
		for _, fused := range []bool{true, false} {
			name := fmt.Sprintf("%dB/recv+reducelocal", size)
			if fused {
				name = fmt.Sprintf("%dB/recvaccumulate", size)
			}
			b.Run(name, func(b *testing.B) { benchAccumulate(b, size/8, fused) })
		}
	}
}

func benchAccumulate(b *testing.B, n int, fused bool) {
	b.ReportAllocs()
	b.SetBytes(int64(8 * n))
	var before, after runtime.MemStats
	err := Run(2, func(w *Comm) error {
		buf := make([]float64, n)
		var none []byte
		var temp []float64
		if _, err := w.allgather(nil); err != nil { // start together
			return err
		}
		if w.Rank() == 1 { // both ranks' buffers exist: count from here
			runtime.ReadMemStats(&before)
			if !fused {
				temp = make([]float64, n)
			}
		}
		if w.Rank() == 0 {
			b.ResetTimer()
		}
		for range b.N {
			if w.Rank() == 0 {
				if err := Send(w, buf, 1, 0); err != nil {
					return err
				}
				if _, err := Recv(w, none, 1, 1); err != nil {
					return err
				}
				continue
			}
			if fused {
				if _, err := RecvAccumulate(w, buf, Sum, 0, 0); err != nil {
					return err
				}
			} else {
				if _, err := Recv(w, temp, 0, 0); err != nil {
					return err
				}
				if err := ReduceLocal(temp, buf, Sum); err != nil {
					return err
				}
			}
			if err := Send(w, none, 0, 1); err != nil {
				return err
			}
		}
		if w.Rank() == 0 {
			b.StopTimer()
		} else {
			runtime.ReadMemStats(&after)
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc), "extra-B")
}
