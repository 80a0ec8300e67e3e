package meshmpi

import (
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// earlyCalls are rooted collectives in which some ranks (first) have
// nothing to wait for but their agreement tokens: a Bcast or Scatter
// root, a Reduce or Gather leaf. check validates a rank's result.
var earlyCalls = map[string]struct {
	first func(rank int) bool
	call  func(w *Comm, form collForm) (check func() error, err error)
}{
	"bcast root": {func(r int) bool { return r == 0 }, func(w *Comm, form collForm) (func() error, error) {
		b := []int64{int64(w.Rank() + 10)}
		err := runForm(form, func() error { return Bcast(w, b, 0) }, func() (*Request, error) { return Ibcast(w, b, 0) }, nil)
		return func() error { return expectEq("bcast", b[0], int64(10)) }, err
	}},
	"scatter root": {func(r int) bool { return r == 0 }, func(w *Comm, form collForm) (func() error, error) {
		s, got := make([]int64, w.Size()), []int64{-1}
		for i := range s {
			s[i] = int64(100 + i)
		}
		err := runForm(form, func() error { return Scatter(w, s, got, 0) }, func() (*Request, error) { return Iscatter(w, s, got, 0) }, nil)
		return func() error { return expectEq("scatter", got[0], int64(100+w.Rank())) }, err
	}},
	"reduce leaves": {func(r int) bool { return r != 0 }, func(w *Comm, form collForm) (func() error, error) {
		got := []int64{0}
		in := []int64{int64(w.Rank())}
		err := runForm(form, func() error { return Reduce(w, in, got, Sum, 0) }, func() (*Request, error) { return Ireduce(w, in, got, Sum, 0) }, nil)
		n := int64(w.Size())
		return func() error {
			if w.Rank() != 0 {
				return nil
			}
			return expectEq("reduce", got[0], n*(n-1)/2)
		}, err
	}},
	"gather leaves": {func(r int) bool { return r != 0 }, func(w *Comm, form collForm) (func() error, error) {
		got := make([]int64, w.Size())
		in := []int64{int64(w.Rank())}
		err := runForm(form, func() error { return Gather(w, in, got, 0) }, func() (*Request, error) { return Igather(w, in, got, 0) }, nil)
		return func() error {
			for i, v := range got {
				if w.Rank() == 0 && v != int64(i) {
					return fmt.Errorf("gather: %v", got)
				}
			}
			return nil
		}, err
	}},
}

// A rank whose part of a rooted collective needs nothing from the others
// returns (blocking) or completes (nonblocking) without waiting for them
// to call it, as MPICH's eager root does: here the ranks that finish first send each other rank a message
// that rank receives before it makes the call, an order that hung when
// every rank waited for its agreement tokens. The ranks' next collective
// finds the tokens arrived and agreeing.
func TestRootedCallReturnsBeforeOthersArrive(t *testing.T) {
	for name, ec := range earlyCalls {
		for form, fname := range []string{"blocking", "nonblocking"} {
			for n := 2; n <= 4; n++ {
				t.Run(fmt.Sprintf("%s/%s/n=%d", name, fname, n), func(t *testing.T) {
					world(t, n, func(w *Comm) error {
						r := w.Rank()
						var check func() error
						var err error
						if ec.first(r) {
							check, err = ec.call(w, collForm(form))
							for o := range n {
								if !ec.first(o) && err == nil {
									err = Send(w, []int64{1}, o, 5)
								}
							}
						} else {
							for o := range n {
								if ec.first(o) && err == nil {
									_, err = Recv(w, []int64{0}, o, 5)
								}
							}
							if err == nil {
								check, err = ec.call(w, collForm(form))
							}
						}
						if err != nil {
							return err
						}
						if err := check(); err != nil {
							return err
						}
						got := []int64{0}
						if err := Allreduce(w, []int64{1}, got, Sum); err != nil {
							return err
						}
						return expectEq("allreduce after", got[0], int64(n))
					}, WithTimeout(2*time.Minute))
				})
			}
		}
	}
}

// A disagreement that only a trailing token shows (rank 0 returned from
// its Bcast rooted at 0 before rank 1, rooted at 1, sent anything) fails
// both ranks' next collective with ErrArg, and the one after works.
func TestTrailFindsMismatch(t *testing.T) {
	for _, via := range []string{"next call", "finalize"} {
		t.Run(via, func(t *testing.T) {
			first, next := make([]error, 2), make([]error, 2)
			err := Run(2, func(w *Comm) error {
				r := w.Rank()
				b := []int64{int64(r)}
				if r == 0 {
					first[0] = Bcast(w, b, 0)
					if err := Send(w, []int64{1}, 1, 5); err != nil {
						return err
					}
				} else {
					if _, err := Recv(w, []int64{0}, 0, 5); err != nil {
						return err
					}
					first[1] = Bcast(w, b, 1)
				}
				if via == "finalize" {
					return nil
				}
				if err := hearFromAll(w); err != nil {
					return err
				}
				next[r] = Barrier(w)
				got := []int64{0}
				if err := Allreduce(w, []int64{int64(r)}, got, Sum); err != nil || got[0] != 1 {
					return fmt.Errorf("allreduce after the mismatch: %v %w", got, err)
				}
				return nil
			}, WithTimeout(2*time.Minute))
			if via == "finalize" {
				// rank 0's Bcast returned; its Finalize waits for the trail
				// and says what it found
				require.ErrorIs(t, err, ErrArg)
				require.ErrorContains(t, err, "finalize")
				return
			}
			require.NoError(t, err)
			for r := range 2 {
				if !errors.Is(first[r], ErrArg) && !errors.Is(next[r], ErrArg) {
					t.Fatalf("rank %d got no ErrArg: %v, then %v", r, first[r], next[r])
				}
			}
			require.NoError(t, first[0], "rank 0's Bcast had returned before rank 1 called it")
		})
	}
}

// Communicators freed while their trails still wait for tokens give
// their context ids back once the tokens come: no next call on them
// sweeps the trails, their runs do.
func TestFreedCommTrailsReaped(t *testing.T) {
	const rounds = 300
	require.NoError(t, Run(2, func(w *Comm) error {
		for i := range rounds {
			c, err := w.Dup()
			if err != nil {
				return err
			}
			b := []int64{int64(i)}
			if w.Rank() == 0 {
				// rank 1 calls Bcast only once this message came: the
				// trail is still waiting when c is freed
				if err := Bcast(c, b, 0); err != nil {
					return err
				}
				if err := c.Free(); err != nil {
					return err
				}
				if err := Send(w, []int64{1}, 1, 5); err != nil {
					return err
				}
				continue
			}
			if _, err := Recv(w, []int64{0}, 0, 5); err != nil {
				return err
			}
			if err := Bcast(c, b, 0); err != nil {
				return err
			}
			if err := c.Free(); err != nil {
				return err
			}
		}
		if err := Barrier(w); err != nil {
			return err
		}
		// the last trails are reaped when their tokens land, on goroutines
		// of their own: wait for the ids to come back (a hang guard, not a
		// time budget, bounds it)
		for deadline := time.Now().Add(time.Minute); ; runtime.Gosched() {
			w.p.mu.Lock()
			free := w.p.ctxUsed.lowestFree()
			w.p.mu.Unlock()
			if free == selfContext+1 {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("lowest free context id %d, want %d: freed communicators' trails kept their ids", free, selfContext+1)
			}
		}
	}))
}

// The same on an intercommunicator, whose tokens carry roles: a Bcast
// root (group A's rank 0) returns before group B's ranks, which receive
// its message on the world first, call the Bcast.
func TestInterBcastRootReturnsBeforeOthersArrive(t *testing.T) {
	for _, split := range [][2]int{{1, 1}, {2, 2}, {1, 3}} {
		t.Run(fmt.Sprintf("%d+%d", split[0], split[1]), func(t *testing.T) {
			world(t, split[0]+split[1], func(w *Comm) error {
				x, err := newInter(w, split[0])
				if err != nil {
					return err
				}
				b := []int64{int64(w.Rank() + 10)}
				switch {
				case x.g == 0 && x.r == 0:
					if err := Bcast(x.c, b, Root); err != nil {
						return err
					}
					for o := split[0]; o < w.Size(); o++ {
						if err := Send(w, []int64{1}, o, 5); err != nil {
							return err
						}
					}
				case x.g == 0:
					if err := Bcast(x.c, b, ProcNull); err != nil {
						return err
					}
				default:
					if _, err := Recv(w, []int64{0}, 0, 5); err != nil {
						return err
					}
					if err := Bcast(x.c, b, 0); err != nil {
						return err
					}
					if err := expectEq("bcast", b[0], int64(10)); err != nil {
						return err
					}
				}
				return errors.Join(Barrier(x.c), x.c.Free())
			}, WithTimeout(2*time.Minute))
		})
	}
}
