package meshmpi

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/pprof"
	"testing"
	"time"
)

// deadline fails the test with every goroutine's stack if f has not
// returned within a generous limit: a hang guard, not a timing assertion.
func deadline(t *testing.T, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(60 * time.Second):
		_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 2)
		t.Fatalf("%s hung", what)
		return nil
	}
}

// rootedCall is one rooted collective called by a rank with a given root,
// in one form.
type rootedCall func(w *Comm, root int, form collForm) error

// runForm runs a call in form: blocking, nonblocking then Wait, or
// persistent Init, Start, Wait and Free.
func runForm(form collForm, b func() error, i, p func() (*Request, error)) error {
	r, err := formCall(form, b, i, p)
	if err != nil || r == nil {
		return err
	}
	if form == persistent {
		if err := r.Start(); err != nil {
			_ = r.Free()
			return err
		}
	}
	_, err = r.Wait(context.Background())
	if form == persistent {
		return errors.Join(err, r.Free())
	}
	return err
}

var rootedCalls = map[string]rootedCall{
	"bcast": func(w *Comm, root int, form collForm) error {
		b := []int64{int64(w.Rank())}
		return runForm(form, func() error { return Bcast(w, b, root) },
			func() (*Request, error) { return Ibcast(w, b, root) },
			func() (*Request, error) { return BcastInit(w, b, root) })
	},
	"reduce": func(w *Comm, root int, form collForm) error {
		s, r := []int64{1}, []int64{0}
		return runForm(form, func() error { return Reduce(w, s, r, Sum, root) },
			func() (*Request, error) { return Ireduce(w, s, r, Sum, root) },
			func() (*Request, error) { return ReduceInit(w, s, r, Sum, root) })
	},
	"gather": func(w *Comm, root int, form collForm) error {
		s, r := []int64{1, 2}, make([]int64, 2*w.Size())
		return runForm(form, func() error { return Gather(w, s, r, root) },
			func() (*Request, error) { return Igather(w, s, r, root) },
			func() (*Request, error) { return GatherInit(w, s, r, root) })
	},
	"gatherv": func(w *Comm, root int, form collForm) error {
		n := w.Size()
		s, r := []int64{1}, make([]int64, n)
		counts, displs := make([]int, n), make([]int, n)
		for i := range n {
			counts[i], displs[i] = 1, i
		}
		return runForm(form, func() error { return Gatherv(w, s, r, counts, displs, root) },
			func() (*Request, error) { return Igatherv(w, s, r, counts, displs, root) },
			func() (*Request, error) { return GathervInit(w, s, r, counts, displs, root) })
	},
	"scatter": func(w *Comm, root int, form collForm) error {
		s, r := make([]int64, 2*w.Size()), make([]int64, 2)
		return runForm(form, func() error { return Scatter(w, s, r, root) },
			func() (*Request, error) { return Iscatter(w, s, r, root) },
			func() (*Request, error) { return ScatterInit(w, s, r, root) })
	},
	"scatterv": func(w *Comm, root int, form collForm) error {
		n := w.Size()
		s, r := make([]int64, n), make([]int64, 1)
		counts, displs := make([]int, n), make([]int, n)
		for i := range n {
			counts[i], displs[i] = 1, i
		}
		return runForm(form, func() error { return Scatterv(w, s, counts, displs, r, root) },
			func() (*Request, error) { return Iscatterv(w, s, counts, displs, r, root) },
			func() (*Request, error) { return ScattervInit(w, s, counts, displs, r, root) })
	},
}

// Ranks that pass different roots to a rooted collective all get ErrArg,
// in that call or, for a rank that finished it before any rank could see
// the disagreement, in its next collective call; none hangs, and the
// collective after that works on every rank.
func TestRootMismatch(t *testing.T) {
	// patterns: the root each rank passes, for n ranks
	patterns := map[string]func(r, n int) int{
		"one rank root 1":    func(r, n int) int { return map[bool]int{true: 1, false: 0}[r == 1] },
		"every rank its own": func(r, n int) int { return r },
		"last rank root n-1": func(r, n int) int { return map[bool]int{true: n - 1, false: 0}[r == n-1] },
		"halves":             func(r, n int) int { return map[bool]int{true: 1, false: 0}[r >= n/2] },
	}
	for name, call := range rootedCalls {
		for pname, root := range patterns {
			for _, form := range []collForm{blocking, nonblocking, persistent} {
				for n := 2; n <= 5; n++ {
					what := fmt.Sprintf("%s/%s/form %d/n=%d", name, pname, form, n)
					first, next := make([]error, n), make([]error, n)
					err := deadline(t, what, func() error {
						return Run(n, func(w *Comm) error {
							first[w.Rank()] = call(w, root(w.Rank(), n), form)
							// every notice has arrived before the next call, so
							// a rank that finished first fails the Barrier, not
							// the Allreduce after it
							if err := hearFromAll(w); err != nil {
								return err
							}
							next[w.Rank()] = Barrier(w)
							got := []int64{0}
							if err := Allreduce(w, []int64{int64(w.Rank())}, got, Sum); err != nil || got[0] != int64(n*(n-1)/2) {
								return fmt.Errorf("allreduce after the mismatch: %v %w", got, err)
							}
							return nil
						})
					})
					if err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					for r := range n {
						if !errors.Is(first[r], ErrArg) && !errors.Is(next[r], ErrArg) {
							t.Fatalf("%s: rank %d got no ErrArg: %v, then %v", what, r, first[r], next[r])
						}
					}
				}
			}
		}
	}
}

// interRootedCall is one rooted collective on an intercommunicator, called
// with root (Root, ProcNull or a remote rank), in one form.
type interRootedCall func(c *Comm, root int, form collForm) error

var interRootedCalls = map[string]interRootedCall{
	"bcast": func(c *Comm, root int, form collForm) error {
		b := []int64{1}
		return runForm(form, func() error { return Bcast(c, b, root) },
			func() (*Request, error) { return Ibcast(c, b, root) },
			func() (*Request, error) { return BcastInit(c, b, root) })
	},
	"reduce": func(c *Comm, root int, form collForm) error {
		s, r := []int64{1}, []int64{0}
		return runForm(form, func() error { return Reduce(c, s, r, Sum, root) },
			func() (*Request, error) { return Ireduce(c, s, r, Sum, root) },
			func() (*Request, error) { return ReduceInit(c, s, r, Sum, root) })
	},
	"gather": func(c *Comm, root int, form collForm) error {
		s, r := []int64{1}, make([]int64, c.RemoteSize())
		return runForm(form, func() error { return Gather(c, s, r, root) },
			func() (*Request, error) { return Igather(c, s, r, root) },
			func() (*Request, error) { return GatherInit(c, s, r, root) })
	},
	"gatherv": func(c *Comm, root int, form collForm) error {
		n := c.RemoteSize()
		s, r := []int64{1}, make([]int64, n)
		counts, displs := make([]int, n), make([]int, n)
		for i := range n {
			counts[i], displs[i] = 1, i
		}
		return runForm(form, func() error { return Gatherv(c, s, r, counts, displs, root) },
			func() (*Request, error) { return Igatherv(c, s, r, counts, displs, root) },
			func() (*Request, error) { return GathervInit(c, s, r, counts, displs, root) })
	},
	"scatter": func(c *Comm, root int, form collForm) error {
		s, r := make([]int64, c.RemoteSize()), []int64{1}
		return runForm(form, func() error { return Scatter(c, s, r, root) },
			func() (*Request, error) { return Iscatter(c, s, r, root) },
			func() (*Request, error) { return ScatterInit(c, s, r, root) })
	},
	"scatterv": func(c *Comm, root int, form collForm) error {
		n := c.RemoteSize()
		s, r := make([]int64, n), []int64{1}
		counts, displs := make([]int, n), make([]int, n)
		for i := range n {
			counts[i], displs[i] = 1, i
		}
		return runForm(form, func() error { return Scatterv(c, s, counts, displs, r, root) },
			func() (*Request, error) { return Iscatterv(c, s, counts, displs, r, root) },
			func() (*Request, error) { return ScattervInit(c, s, counts, displs, r, root) })
	},
}

// The same on intercommunicators, whose rooted collectives have roles
// rather than one root: two roots in the root's group, none, a root other
// than the one the other group names, a group that disagrees on it, both
// groups or neither taking the root to be theirs. Every rank gets ErrArg
// in the call or its next collective, and none hangs; a correct call in
// between still works.
func TestInterRootMismatch(t *testing.T) {
	// the root each rank passes, by group (0 holds the root in a correct
	// call, at rank 1 if it has two ranks) and rank in its group
	patterns := map[string]func(g, r, n0 int) int{
		"correct": func(g, r, n0 int) int {
			root := min(1, n0-1)
			if g == 1 {
				return root
			}
			return map[bool]int{true: Root, false: ProcNull}[r == root]
		},
		"two roots": func(g, r, n0 int) int { return map[bool]int{true: Root, false: 0}[g == 0] },
		"no root":   func(g, r, n0 int) int { return map[bool]int{true: ProcNull, false: 0}[g == 0] },
		"wrong root": func(g, r, n0 int) int {
			return map[bool]int{true: map[bool]int{true: Root, false: ProcNull}[r == n0-1], false: 0}[g == 0]
		},
		"other group disagrees": func(g, r, n0 int) int {
			if g == 0 {
				return map[bool]int{true: Root, false: ProcNull}[r == 0]
			}
			return map[bool]int{true: 0, false: n0 - 1}[r == 0]
		},
		"both groups": func(g, r, n0 int) int { return map[bool]int{true: Root, false: ProcNull}[r == 0] },
		"neither":     func(g, r, n0 int) int { return 0 },
	}
	for _, split := range [][2]int{{1, 2}, {2, 3}, {3, 2}} {
		n := split[0] + split[1]
		for name, call := range interRootedCalls {
			for pname, pat := range patterns {
				if split[0] == 1 && (pname == "two roots" || pname == "other group disagrees" || pname == "wrong root") {
					continue // the same as another pattern with one rank
				}
				for _, form := range []collForm{blocking, nonblocking, persistent} {
					what := fmt.Sprintf("%d+%d/%s/%s/form %d", split[0], split[1], name, pname, form)
					first, next := make([]error, n), make([]error, n)
					err := deadline(t, what, func() error {
						return Run(n, func(w *Comm) error {
							x, err := newInter(w, split[0])
							if err != nil {
								return err
							}
							first[w.Rank()] = call(x.c, pat(x.g, x.r, split[0]), form)
							if err := hearFromAll(w); err != nil { // see TestRootMismatch
								return err
							}
							next[w.Rank()] = Barrier(x.c)
							got := []int64{0}
							if err := Allreduce(x.c, []int64{1}, got, Sum); err != nil || got[0] != int64(split[1-x.g]) {
								return fmt.Errorf("allreduce after the call: %v %w", got, err)
							}
							return x.c.Free()
						}, WithTimeout(50*time.Second)) // a hang report before deadline's goroutine dump
					})
					if err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					for r := range n {
						switch {
						case pname == "correct" && (first[r] != nil || next[r] != nil):
							t.Fatalf("%s: rank %d: %v, then %v", what, r, first[r], next[r])
						case pname != "correct" && !errors.Is(first[r], ErrArg) && !errors.Is(next[r], ErrArg):
							t.Fatalf("%s: rank %d got no ErrArg: %v, then %v", what, r, first[r], next[r])
						}
					}
				}
			}
		}
	}
}
