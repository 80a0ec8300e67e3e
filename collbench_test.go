package meshmpi

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// collBench is one collective as the benchmarks run it: its three forms
// on buffers fixed for one rank, one world size and one size.
type collBench struct {
	blocking    func() error
	nonblocking func() (*Request, error)
	persistent  func() (*Request, error) // the …Init call
}

// newCollBench allocates one rank's buffers for collective name with a
// per-rank contribution of size bytes: the Bcast buffer, the Allreduce
// vector (float64, Sum), the Allgather send block, the Alltoall block
// sent to each rank (osu_alltoall's size), the Scan vector (float64, Sum)
// or the ReduceScatterBlock input (float64, Sum; each rank gets size/n
// bytes of it, osu_reduce_scatter's convention). Barrier ignores size.
func newCollBench(w *Comm, name string, size int) (collBench, error) {
	n := w.Size()
	switch name {
	case "Barrier":
		return collBench{
			func() error { return Barrier(w) },
			func() (*Request, error) { return Ibarrier(w) },
			func() (*Request, error) { return BarrierInit(w) },
		}, nil
	case "Bcast":
		buf := make([]byte, size)
		return collBench{
			func() error { return Bcast(w, buf, 0) },
			func() (*Request, error) { return Ibcast(w, buf, 0) },
			func() (*Request, error) { return BcastInit(w, buf, 0) },
		}, nil
	case "Allreduce":
		send, recv := make([]float64, size/8), make([]float64, size/8)
		for i := range send {
			send[i] = float64(w.Rank() + i)
		}
		return collBench{
			func() error { return Allreduce(w, send, recv, Sum) },
			func() (*Request, error) { return Iallreduce(w, send, recv, Sum) },
			func() (*Request, error) { return AllreduceInit(w, send, recv, Sum) },
		}, nil
	case "Allgather":
		send, recv := make([]byte, size), make([]byte, n*size)
		return collBench{
			func() error { return Allgather(w, send, recv) },
			func() (*Request, error) { return Iallgather(w, send, recv) },
			func() (*Request, error) { return AllgatherInit(w, send, recv) },
		}, nil
	case "Alltoall":
		send, recv := make([]byte, n*size), make([]byte, n*size)
		return collBench{
			func() error { return Alltoall(w, send, recv) },
			func() (*Request, error) { return Ialltoall(w, send, recv) },
			func() (*Request, error) { return AlltoallInit(w, send, recv) },
		}, nil
	case "Scan":
		send, recv := make([]float64, size/8), make([]float64, size/8)
		return collBench{
			func() error { return Scan(w, send, recv, Sum) },
			func() (*Request, error) { return Iscan(w, send, recv, Sum) },
			func() (*Request, error) { return ScanInit(w, send, recv, Sum) },
		}, nil
	case "ReduceScatterBlock":
		send, recv := make([]float64, size/8/n*n), make([]float64, size/8/n)
		return collBench{
			func() error { return ReduceScatterBlock(w, send, recv, Sum) },
			func() (*Request, error) { return IreduceScatterBlock(w, send, recv, Sum) },
			func() (*Request, error) { return ReduceScatterBlockInit(w, send, recv, Sum) },
		}, nil
	case "NeighborAlltoall":
		return newNeighborBench(w, size)
	}
	return collBench{}, fmt.Errorf("no collective %q", name)
}

// call makes one call in form (see formCall).
func (cb collBench) call(form collForm) (*Request, error) {
	return formCall(form, cb.blocking, cb.nonblocking, cb.persistent)
}

// timeCalls is one rank's part of a collective latency benchmark: b.N
// calls in form, timed by timeLoop (bench_test.go). call makes one call in
// a form (see formCall); a persistent request is made once before the
// timer starts and freed after it stops.
func timeCalls(b *testing.B, w *Comm, form collForm, call func(collForm) (*Request, error)) error {
	ctx := context.Background()
	if form != persistent {
		return timeLoop(b, w, func() error {
			r, err := call(form)
			if err == nil && r != nil { // a blocking call returns no request
				_, err = r.Wait(ctx)
			}
			return err
		})
	}
	req, err := call(persistent)
	if err != nil {
		return err
	}
	return errors.Join(timeLoop(b, w, startWait(req)), req.Free())
}

// collLatency runs b.N calls of one collective in one form (a name in
// forms) on every rank of an n-rank in-process world and reports the time
// per call. Rank 0 times from a barrier before the loop to a barrier after
// it, so the time covers every rank's b.N calls (the closing barrier is
// amortized over b.N); persistent requests are created before the timer
// starts. allocs/op counts the allocations of all ranks.
func collLatency(b *testing.B, name string, n, size int, form string) {
	b.ReportAllocs()
	err := Run(n, func(w *Comm) error {
		cb, err := newCollBench(w, name, size)
		if err != nil {
			return err
		}
		for _, f := range forms {
			if f.name == form {
				return timeCalls(b, w, f.form, cb.call)
			}
		}
		return fmt.Errorf("no form %q", form)
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(b.N), "us/op")
}

// BenchmarkColl measures collective latency on memory links, as
// Coll/<collective>/n=<ranks>/<size>/<form>: sizes are per-rank
// contributions (Barrier has none: 0B), forms blocking, nonblocking (I… then
// Wait) and persistent (…Init once, then Start+Wait). For example
//
//	go test -run XXX -bench 'Coll/Allreduce/n=8/8B' -benchtime 2000x .
func BenchmarkColl(b *testing.B) {
	type size struct {
		label string
		bytes int
	}
	sizes := []size{{"8B", 8}, {"1KiB", 1 << 10}, {"64KiB", 64 << 10}, {"1MiB", 1 << 20}}
	for _, name := range []string{"Barrier", "Bcast", "Allreduce", "Allgather", "Alltoall", "Scan", "ReduceScatterBlock"} {
		b.Run(name, func(b *testing.B) {
			for _, n := range []int{2, 4, 8, 16} {
				b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
					ss := sizes
					if name == "Barrier" {
						ss = []size{{"0B", 0}}
					}
					for _, s := range ss {
						b.Run(s.label, func(b *testing.B) {
							for _, form := range []string{"blocking", "nonblocking", "persistent"} {
								b.Run(form, func(b *testing.B) { collLatency(b, name, n, s.bytes, form) })
							}
						})
					}
				})
			}
		})
	}
}
