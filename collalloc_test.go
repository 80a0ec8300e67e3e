package meshmpi

import (
	"errors"
	"fmt"
	"testing"
)

// blockingCalls is one blocking call of every collective on a rank of w,
// with per-rank contributions of n float64s: the calls whose per-call
// fixed cost the engine keeps allocation-free.
func blockingCalls(w *Comm, n int) []struct {
	name string
	f    func() error
} {
	size := w.Size()
	a, b := make([]float64, n), make([]float64, n)
	all, all2 := make([]float64, n*size), make([]float64, n*size)
	counts, displs := make([]int, size), make([]int, size)
	for r := range size {
		counts[r], displs[r] = n, r*n
	}
	return []struct {
		name string
		f    func() error
	}{
		{"Barrier", func() error { return Barrier(w) }},
		{"Bcast", func() error { return Bcast(w, a, 0) }},
		{"Gather", func() error { return Gather(w, a, all, 0) }},
		{"Scatter", func() error { return Scatter(w, all, a, 0) }},
		{"Allgather", func() error { return Allgather(w, a, all) }},
		{"Alltoall", func() error { return Alltoall(w, all, all2) }},
		{"Reduce", func() error { return Reduce(w, a, b, Sum, 0) }},
		{"Allreduce", func() error { return Allreduce(w, a, b, Sum) }},
		{"ReduceScatterBlock", func() error { return ReduceScatterBlock(w, all, a, Sum) }},
		{"Scan", func() error { return Scan(w, a, b, Sum) }},
		{"Exscan", func() error { return Exscan(w, a, b, Sum) }},
		{"Gatherv", func() error { return Gatherv(w, a, all, counts, displs, 0) }},
		{"Scatterv", func() error { return Scatterv(w, all, counts, displs, a, 0) }},
		{"Allgatherv", func() error { return Allgatherv(w, a, all, counts, displs) }},
		{"Alltoallv", func() error { return Alltoallv(w, all, counts, displs, all2, counts, displs) }},
		{"ReduceScatter", func() error { return ReduceScatter(w, all, b, counts, Sum) }},
	}
}

// Every blocking collective's call allocates nothing once its shape has
// been called before, at 2 and 3 ranks (each on a core on a 2-core
// machine or more, polling) and at 8 (oversubscribed, yielding): rank 0
// counts over many calls, the others keep pace. Each call is followed by
// a barrier (which allocates nothing either), as in the OSU loops: a rank
// that only sends (a root, a chain's head) would otherwise run ahead, and
// its peers' unexpected queues grow (and allocate) until its eager credit
// stops it, which is the flow control's business, not the call's. The
// count is the process's, so the others then wait in a barrier until
// rank 0 has read it, rather than plan the next call meanwhile.
func TestBlockingCollectivesNoAllocs(t *testing.T) {
	for _, n := range []int{2, 3, 8} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			world(t, n, func(w *Comm) error {
				var errs []error
				if err := Barrier(w); err != nil {
					return err
				}
				for _, c := range blockingCalls(w, 1) {
					if err := c.f(); err != nil {
						return fmt.Errorf("%s: %w", c.name, err)
					}
					const runs = 200
					call := func() {
						_ = c.f()
						_ = Barrier(w)
					}
					if w.Rank() != 0 {
						for range runs + 1 {
							call()
						}
					} else if a := testing.AllocsPerRun(runs, call); a != 0 {
						errs = append(errs, fmt.Errorf("%s: %.2f allocations per call", c.name, a))
					}
					if err := Barrier(w); err != nil {
						return err
					}
				}
				return errors.Join(errs...)
			})
		})
	}
}
