package meshmpi

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// noHang runs f and fails the test if it has not returned within a
// generous limit: a guard that turns a hang into a failure with a message,
// not a timing assertion.
func noHang(t *testing.T, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(60 * time.Second):
		t.Fatal("hung: a mismatched collective never completed")
		return nil
	}
}

// Ranks that call a collective with arguments that do not fit together get
// an error (ErrArg) instead of a hang or each other's data, and the
// communicator keeps working for the next collective.
func TestCollectiveArgumentMismatch(t *testing.T) {
	const n = 4
	for _, tc := range []struct {
		name string
		call func(w *Comm) error
		// every rank must see the error (each receives from another in
		// the failed collective); otherwise ranks that only send may
		// finish before anyone can know
		everyRank bool
	}{
		{"allreduce count", func(w *Comm) error {
			k := 4
			if w.Rank() == 3 {
				k = 5
			}
			return Allreduce(w, make([]int64, k), make([]int64, k), Sum)
		}, true},
		{"allreduce op", func(w *Comm) error {
			o := Sum
			if w.Rank() == 0 {
				o = Max
			}
			return Allreduce(w, []int64{1}, []int64{0}, o)
		}, true},
		{"allreduce algorithm", func(w *Comm) error {
			alg := "recursive_doubling"
			if w.Rank() == 2 {
				alg = "ring"
			}
			return Allreduce(w, make([]int64, 64), make([]int64, 64), Sum, Algorithm(alg))
		}, true},
		{"allgather count, large", func(w *Comm) error {
			k := 20_000
			if w.Rank() == 1 {
				k = 20_001
			}
			return Allgather(w, make([]int64, k), make([]int64, k*n))
		}, true},
		{"reduce root", func(w *Comm) error {
			root := 0
			if w.Rank() == 1 {
				root = 2
			}
			return Reduce(w, []int64{1}, []int64{0}, Sum, root)
		}, false},
		{"bcast count, nonblocking", func(w *Comm) error {
			k := 3
			if w.Rank() == 2 {
				k = 2
			}
			r, err := Ibcast(w, make([]int32, k), 0)
			if err != nil {
				return err
			}
			_, err = r.Wait(t.Context())
			return err
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := make([]error, n)
			err := noHang(t, func() error {
				return Run(n, func(w *Comm) error {
					errs[w.Rank()] = tc.call(w)
					// the next collective is unaffected
					got := []int64{0}
					if err := Allreduce(w, []int64{int64(w.Rank())}, got, Sum); err != nil || got[0] != 6 {
						return fmt.Errorf("allreduce after the mismatch: %v %v", got, err)
					}
					return nil
				})
			})
			require.NoError(t, err)
			failed := 0
			for r, e := range errs {
				if e != nil {
					failed++
					require.ErrorIs(t, e, ErrArg, "rank %d", r)
				} else if tc.everyRank {
					t.Errorf("rank %d finished a mismatched %s without an error", r, tc.name)
				}
			}
			require.NotZero(t, failed, "no rank noticed the mismatch")
			t.Logf("%d of %d ranks reported the mismatch: %v", failed, n, errors.Join(errs...))
		})
	}
}
