package meshmpi

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A rank that only sends in a blocking rooted collective (the root of
// Bcast and Scatter, a leaf of Reduce) returns once its messages have
// gone, before the previous rank of the token ring has entered the call:
// here the others enter only after a message the sender sends after its
// call. Its token is checked at its next collective, which then works on
// every rank. (Under MPI such a program is unsafe, since a collective may
// synchronize; it shows that this one does not.)
func TestOnlySenderFinishesFirst(t *testing.T) {
	calls := map[string]struct {
		sender int
		call   func(w *Comm) error
	}{
		"bcast root": {0, func(w *Comm) error {
			b := []int64{0, 0}
			if w.Rank() == 0 {
				b = []int64{4, 5}
			}
			if err := Bcast(w, b, 0); err != nil {
				return err
			}
			if b[0] != 4 || b[1] != 5 {
				return fmt.Errorf("bcast got %v", b)
			}
			return nil
		}},
		"scatter root": {1, func(w *Comm) error {
			s, r := make([]int64, w.Size()), []int64{-1}
			for i := range s {
				s[i] = int64(10 + i)
			}
			if err := Scatter(w, s, r, 1); err != nil {
				return err
			}
			if r[0] != int64(10+w.Rank()) {
				return fmt.Errorf("scatter got %d", r[0])
			}
			return nil
		}},
		"reduce leaf": {1, func(w *Comm) error {
			r := []int64{0}
			if err := Reduce(w, []int64{int64(w.Rank() + 1)}, r, Sum, 0); err != nil {
				return err
			}
			if w.Rank() == 0 && r[0] != int64(w.Size()*(w.Size()+1)/2) {
				return fmt.Errorf("reduce got %d", r[0])
			}
			return nil
		}},
	}
	for name, tc := range calls {
		for _, n := range []int{2, 3} {
			t.Run(fmt.Sprintf("%s/n=%d", name, n), func(t *testing.T) {
				if name == "reduce leaf" && n == 3 {
					t.Skip("rank 1 forwards rank 2's part in the binomial tree: it receives")
				}
				err := Run(n, func(w *Comm) error {
					if w.Rank() == tc.sender {
						if err := tc.call(w); err != nil {
							return err
						}
						for r := range w.Size() {
							if r != w.Rank() {
								if err := Send(w, []byte{1}, r, 9); err != nil {
									return err
								}
							}
						}
					} else {
						if _, err := Recv(w, make([]byte, 1), tc.sender, 9); err != nil {
							return err
						}
						if err := tc.call(w); err != nil {
							return err
						}
					}
					got := []int64{0}
					if err := Allreduce(w, []int64{1}, got, Sum); err != nil || got[0] != int64(n) {
						return fmt.Errorf("allreduce after: %v %w", got, err)
					}
					return nil
				}, WithTimeout(time60))
				require.NoError(t, err)
			})
		}
	}
}

// A mismatch that only the tokens find (two ranks, each the root of its
// own Bcast: both only send) fails every rank: in the call if its token
// came in time, else in the rank's next call on the communicator, be it
// the next collective, Free or Finalize.
func TestDeferredTokenMismatch(t *testing.T) {
	after := map[string]func(c *Comm) error{
		"barrier": func(c *Comm) error { return Barrier(c) },
		"free":    func(c *Comm) error { return c.Free() },
		"bcast":   func(c *Comm) error { return Bcast(c, []int64{1}, 0) },
	}
	for name, next := range after {
		t.Run(name, func(t *testing.T) {
			for range 20 { // the token comes in the call or after it
				first, then := make([]error, 2), make([]error, 2)
				err := Run(2, func(w *Comm) error {
					c, err := w.Dup()
					if err != nil {
						return err
					}
					first[w.Rank()] = Bcast(c, []int64{int64(w.Rank())}, w.Rank())
					then[w.Rank()] = next(c)
					if name != "free" {
						if err := c.Free(); err != nil {
							return err
						}
					}
					got := []int64{0}
					if err := Allreduce(w, []int64{1}, got, Sum); err != nil || got[0] != 2 {
						return fmt.Errorf("allreduce on world after: %v %w", got, err)
					}
					return nil
				}, WithTimeout(time60))
				require.NoError(t, err)
				for r := range 2 {
					if !errors.Is(first[r], ErrArg) {
						require.ErrorIs(t, then[r], ErrArg, "rank %d: the bcast gave %v", r, first[r])
					}
				}
			}
		})
	}
	t.Run("finalize", func(t *testing.T) {
		for range 20 {
			first := make([]error, 2)
			err := Run(2, func(w *Comm) error {
				first[w.Rank()] = Bcast(w, []int64{int64(w.Rank())}, w.Rank())
				return nil
			}, WithTimeout(time60))
			for r := range 2 {
				if !errors.Is(first[r], ErrArg) {
					require.ErrorIs(t, err, ErrArg, "rank %d: the bcast gave %v", r, first[r])
					require.Contains(t, err.Error(), fmt.Sprintf("rank %d: finalize", r))
				}
			}
		}
	})
}

// A rank waiting for the token of the collective it finished first says
// so in a hang report: the collective, its step, the rank it waits for.
func TestDeferredTokenHangReport(t *testing.T) {
	err := Run(2, func(w *Comm) error {
		if w.Rank() == 1 { // never enters the Bcast
			_, err := Recv(w, make([]byte, 1), 0, 5)
			return err
		}
		if err := Bcast(w, []int64{1}, 0); err != nil {
			return err
		}
		return Barrier(w)
	}, WithTimeout(3*time.Second))
	require.ErrorIs(t, err, ErrTimeout)
	t.Log(err)
	require.Regexp(t, `rank 0: Bcast \(\w+\) on world, step \d+ of \d+: waiting for a message from rank 1`, err.Error())
}

// A Bcast only its root called (an erroneous program) does not hang the
// root's Finalize on the token no rank sends: the ranks' counts of
// collective calls differ, and Finalize says so first.
func TestDeferredTokenOneSided(t *testing.T) {
	err := Run(2, func(w *Comm) error {
		if w.Rank() == 0 {
			return Bcast(w, []int64{1}, 0)
		}
		return nil
	}, WithTimeout(time60))
	require.ErrorIs(t, err, ErrArg)
	require.Contains(t, err.Error(), "different number of collective calls")
}
