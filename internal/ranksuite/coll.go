package ranksuite

import (
	"errors"
	"fmt"
	"slices"

	"github.com/meshmpi/meshmpi"
)

// collCase is one collective on buffers of its own, callable in each of
// its three forms. fill writes round k's inputs and overwrites every
// output with a value no collective produces, so one that did nothing
// fails check; check compares the outputs with the sequential reference
// of round k.
type collCase struct {
	name  string
	fill  func(k int)
	check func(k int) error
	call  func() error                     // blocking
	start func() (*meshmpi.Request, error) // nonblocking
	init  func() (*meshmpi.Request, error) // persistent
}

// counts are the element counts per rank (per block for Alltoall): one
// element, and a vector past the eager limit.
var counts = []int{1, 9000}

// poison marks an output not yet written.
const poison = -1

// cases returns the collective subset on w with count elements per rank;
// root is Bcast's and Reduce's root.
func cases(w *meshmpi.Comm, count, root int) []collCase {
	r, n := w.Rank(), w.Size()
	// sendOf is rank a's input vector in round k (Alltoall: block b's).
	sendOf := func(a, b, k int) []int64 {
		v := make([]int64, count)
		for i := range v {
			v[i] = val(a, b, i, k)
		}
		return v
	}
	// mix is a non-monotonic input, so Max's winner differs by element.
	mix := func(a, i, k int) int64 { return int64((a*37 + i*11 + k*5) % 101) }
	fillPoison := func(bufs ...[]int64) {
		for _, b := range bufs {
			for i := range b {
				b[i] = poison
			}
		}
	}

	bc := make([]int64, count)
	arIn, arOut := make([]int64, count), make([]int64, count)
	rdIn, rdOut := make([]int64, count), make([]int64, count)
	agIn, agOut := make([]int64, count), make([]int64, n*count)
	aaIn, aaOut := make([]int64, n*count), make([]int64, n*count)
	return []collCase{{
		name: "bcast",
		fill: func(k int) {
			if r == root {
				copy(bc, sendOf(root, 0, k))
			} else {
				fillPoison(bc)
			}
		},
		check: func(k int) error { return check("bcast", bc, sendOf(root, 0, k)) },
		call:  func() error { return meshmpi.Bcast(w, bc, root) },
		start: func() (*meshmpi.Request, error) { return meshmpi.Ibcast(w, bc, root) },
		init:  func() (*meshmpi.Request, error) { return meshmpi.BcastInit(w, bc, root) },
	}, {
		name: "allreduce",
		fill: func(k int) { copy(arIn, sendOf(r, 1, k)); fillPoison(arOut) },
		check: func(k int) error {
			want := make([]int64, count)
			for a := range n {
				for i := range want {
					want[i] += val(a, 1, i, k)
				}
			}
			return check("allreduce", arOut, want)
		},
		call:  func() error { return meshmpi.Allreduce(w, arIn, arOut, meshmpi.Sum) },
		start: func() (*meshmpi.Request, error) { return meshmpi.Iallreduce(w, arIn, arOut, meshmpi.Sum) },
		init:  func() (*meshmpi.Request, error) { return meshmpi.AllreduceInit(w, arIn, arOut, meshmpi.Sum) },
	}, {
		name: "reduce",
		fill: func(k int) {
			for i := range rdIn {
				rdIn[i] = mix(r, i, k)
			}
			fillPoison(rdOut)
		},
		check: func(k int) error {
			if r != root {
				return nil // the output of a rank other than the root is unspecified
			}
			want := make([]int64, count)
			for i := range want {
				want[i] = mix(0, i, k)
				for a := 1; a < n; a++ {
					want[i] = max(want[i], mix(a, i, k))
				}
			}
			return check("reduce", rdOut, want)
		},
		call:  func() error { return meshmpi.Reduce(w, rdIn, rdOut, meshmpi.Max, root) },
		start: func() (*meshmpi.Request, error) { return meshmpi.Ireduce(w, rdIn, rdOut, meshmpi.Max, root) },
		init:  func() (*meshmpi.Request, error) { return meshmpi.ReduceInit(w, rdIn, rdOut, meshmpi.Max, root) },
	}, {
		name: "allgather",
		fill: func(k int) { copy(agIn, sendOf(r, 2, k)); fillPoison(agOut) },
		check: func(k int) error {
			var want []int64
			for a := range n {
				want = append(want, sendOf(a, 2, k)...)
			}
			return check("allgather", agOut, want)
		},
		call:  func() error { return meshmpi.Allgather(w, agIn, agOut) },
		start: func() (*meshmpi.Request, error) { return meshmpi.Iallgather(w, agIn, agOut) },
		init:  func() (*meshmpi.Request, error) { return meshmpi.AllgatherInit(w, agIn, agOut) },
	}, {
		name: "alltoall",
		fill: func(k int) {
			for b := range n {
				copy(aaIn[b*count:], sendOf(r, 3+b, k))
			}
			fillPoison(aaOut)
		},
		check: func(k int) error {
			var want []int64
			for a := range n {
				want = append(want, sendOf(a, 3+r, k)...)
			}
			return check("alltoall", aaOut, want)
		},
		call:  func() error { return meshmpi.Alltoall(w, aaIn, aaOut) },
		start: func() (*meshmpi.Request, error) { return meshmpi.Ialltoall(w, aaIn, aaOut) },
		init:  func() (*meshmpi.Request, error) { return meshmpi.AlltoallInit(w, aaIn, aaOut) },
	}, {
		name:  "barrier",
		fill:  func(int) {},
		check: func(int) error { return nil }, // completing is the result
		call:  func() error { return meshmpi.Barrier(w) },
		start: func() (*meshmpi.Request, error) { return meshmpi.Ibarrier(w) },
		init:  func() (*meshmpi.Request, error) { return meshmpi.BarrierInit(w) },
	}}
}

func check(what string, got, want []int64) error {
	if len(got) != len(want) {
		return fmt.Errorf("%s: %d elements, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			return fmt.Errorf("%s: element %d of %d = %d, want %d", what, i, len(got), got[i], want[i])
		}
	}
	return nil
}

// blocking calls each collective in turn, round k = 0.
func blocking(w *meshmpi.Comm) error {
	for _, count := range counts {
		for _, c := range cases(w, count, w.Size()-1) {
			c.fill(0)
			if err := c.call(); err != nil {
				return fmt.Errorf("%s of %d: %w", c.name, count, err)
			}
			if err := c.check(0); err != nil {
				return fmt.Errorf("%d elements: %w", count, err)
			}
		}
	}
	return nil
}

// nonblocking starts every collective of the subset before waiting for
// any: all are outstanding on the communicator at once.
func nonblocking(w *meshmpi.Comm) error {
	const k = 1
	for _, count := range counts {
		cs := cases(w, count, 0)
		reqs := make([]*meshmpi.Request, len(cs))
		for i, c := range cs {
			c.fill(k)
			var err error
			if reqs[i], err = c.start(); err != nil {
				return fmt.Errorf("start %s of %d: %w", c.name, count, err)
			}
		}
		slices.Reverse(reqs) // complete them in another order than started
		if err := waitall(reqs); err != nil {
			return fmt.Errorf("%d elements: %w", count, err)
		}
		var errs []error
		for _, c := range cs {
			errs = append(errs, c.check(k))
		}
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("%d elements: %w", count, err)
		}
	}
	return nil
}

// persistent initializes every collective of the subset once, then
// starts them all together for three rounds whose inputs differ.
func persistent(w *meshmpi.Comm) error {
	for _, count := range counts {
		cs := cases(w, count, 1%w.Size())
		reqs := make([]*meshmpi.Request, len(cs))
		for i, c := range cs {
			var err error
			if reqs[i], err = c.init(); err != nil {
				return fmt.Errorf("init %s of %d: %w", c.name, count, err)
			}
		}
		for k := 10; k < 13; k++ {
			for _, c := range cs {
				c.fill(k)
			}
			if err := meshmpi.Startall(reqs); err != nil {
				return fmt.Errorf("round %d: %w", k, err)
			}
			if err := waitall(reqs); err != nil {
				return fmt.Errorf("round %d, %d elements: %w", k, count, err)
			}
			var errs []error
			for _, c := range cs {
				errs = append(errs, c.check(k))
			}
			if err := errors.Join(errs...); err != nil {
				return fmt.Errorf("round %d, %d elements: %w", k, count, err)
			}
		}
		for _, q := range reqs {
			if err := q.Free(); err != nil {
				return err
			}
		}
	}
	return nil
}
