package meshmpi

import (
	"context"
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
		// every rank must see the error in the mismatched call (each
		// receives from another); otherwise ranks that only send may
		// finish before anyone can know, and see it in their next call
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
			errs, next := make([]error, n), make([]error, n)
			err := noHang(t, func() error {
				return Run(n, func(w *Comm) error {
					errs[w.Rank()] = tc.call(w)
					// a rank that finished before any rank could see the
					// mismatch learns of it in its next collective (once
					// every notice has arrived, see TestRootMismatch)
					if err := hearFromAll(w); err != nil {
						return err
					}
					next[w.Rank()] = Barrier(w)
					// and the one after is unaffected
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
				switch {
				case e != nil:
					failed++
					require.ErrorIs(t, e, ErrArg, "rank %d", r)
				case tc.everyRank:
					t.Errorf("rank %d finished a mismatched %s without an error", r, tc.name)
				default:
					require.ErrorIs(t, next[r], ErrArg, "rank %d finished the mismatched %s and its next collective without an error", r, tc.name)
				}
			}
			require.NotZero(t, failed, "no rank noticed the mismatch")
			t.Logf("%d of %d ranks reported the mismatch: %v", failed, n, errors.Join(errs...))
		})
	}
}

// A persistent collective whose ranks disagree stays broken: its arguments
// are fixed at init, so every start after the one that found the mismatch
// fails too, on every rank, without a hang and without taking messages of
// an earlier start. Once it is freed the communicator works as before.
func TestPersistentArgumentMismatchRestarted(t *testing.T) {
	const n, starts, rounds = 4, 6, 20
	for _, tc := range []struct {
		name string
		init func(w *Comm) (*Request, error)
		// every rank receives from another in each start, so every rank
		// must fail by the last start
		everyRank bool
	}{
		{"allreduce op", func(w *Comm) (*Request, error) {
			o := Sum
			if w.Rank() == 0 {
				o = Max
			}
			return AllreduceInit(w, []int64{1}, []int64{0}, o)
		}, true},
		{"allreduce count", func(w *Comm) (*Request, error) {
			k := 4
			if w.Rank() == 3 {
				k = 5
			}
			return AllreduceInit(w, make([]int64, k), make([]int64, k), Sum)
		}, true},
		{"allgather count, large", func(w *Comm) (*Request, error) {
			k := 20_000
			if w.Rank() == 1 {
				k = 20_001
			}
			return AllgatherInit(w, make([]int64, k), make([]int64, k*n))
		}, true},
		{"bcast count", func(w *Comm) (*Request, error) {
			k := 3
			if w.Rank() == 2 {
				k = 2
			}
			return BcastInit(w, make([]int32, k), 0)
		}, false},
		{"reduce root", func(w *Comm) (*Request, error) {
			root := 0
			if w.Rank() == 1 {
				root = 2
			}
			return ReduceInit(w, []int64{1}, []int64{0}, Sum, root)
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for round := range rounds {
				first := make([]int, n) // the start that first failed, per rank
				err := noHang(t, func() error {
					return Run(n, func(w *Comm) error {
						ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
						defer cancel()
						req, err := tc.init(w)
						if err != nil {
							return err
						}
						first[w.Rank()] = -1
						for s := range starts {
							if err := req.Start(); err != nil {
								return fmt.Errorf("start %d: %w", s, err)
							}
							_, err := req.Wait(ctx)
							switch {
							case errors.Is(err, context.DeadlineExceeded):
								return fmt.Errorf("round %d start %d hung: %w", round, s, err)
							case err != nil && !errors.Is(err, ErrArg):
								return fmt.Errorf("start %d: not ErrArg: %w", s, err)
							case err != nil && first[w.Rank()] < 0:
								first[w.Rank()] = s
							case err == nil && first[w.Rank()] >= 0:
								return fmt.Errorf("start %d succeeded after start %d failed", s, first[w.Rank()])
							}
						}
						if err := req.Free(); err != nil {
							return err
						}
						// the communicator is unaffected, and a matching
						// persistent collective takes none of the stale
						// messages
						got := []int64{0}
						ok, err := AllreduceInit(w, []int64{int64(w.Rank())}, got, Sum)
						if err != nil {
							return err
						}
						for s := range 3 {
							got[0] = -1
							if err := ok.Start(); err != nil {
								return err
							}
							if _, err := ok.Wait(ctx); err != nil || got[0] != n*(n-1)/2 {
								return fmt.Errorf("allreduce start %d after the mismatch: %v %w", s, got, err)
							}
						}
						return ok.Free()
					})
				})
				require.NoError(t, err, "round %d", round)
				failed := 0
				for r, s := range first {
					if s >= 0 {
						failed++
					} else if tc.everyRank {
						t.Fatalf("round %d: rank %d never failed in %d starts", round, r, starts)
					}
				}
				require.NotZero(t, failed, "round %d: no rank noticed the mismatch", round)
				if round == 0 {
					t.Logf("first failed start per rank: %v", first)
				}
			}
		})
	}
}

// A mismatch notice is kept for a collective this rank has not run yet and
// dropped for one it has: kept, it would fail the collective that gets
// the same sequence number 2^20 calls later.
func TestMismatchNoticeKeptOnlyWhilePending(t *testing.T) {
	const wrap = 1 << (32 - 12)
	for _, tc := range []struct {
		next, seq uint32 // this rank's next sequence number, the notice's
		kept      bool
	}{
		{next: 10, seq: 10, kept: true},          // the next call
		{next: 10, seq: 500, kept: true},         // further ahead
		{next: 10, seq: 9, kept: true},           // taken, maybe not registered yet
		{next: 10, seq: 0, kept: true},           // within recentSeqs
		{next: 100, seq: 10, kept: false},        // ran here long ago
		{next: 0, seq: wrap - 1, kept: true},     // across the wrap, just taken
		{next: 0, seq: wrap - 1000, kept: false}, // across the wrap, long ago
		{next: wrap + 5, seq: 7, kept: true},     // the counter's high bits are not in tags
		{next: 5, seq: wrap/2 + 5, kept: false},  // half the space away: late
		{next: 5, seq: wrap/2 - 10, kept: true},  // just under half: ahead
	} {
		require.NoError(t, Run(1, func(w *Comm) error {
			w.seq.Store(tc.next)
			w.abortSeq(tc.seq, true)
			if got := len(w.aborted) == 1; got != tc.kept {
				return fmt.Errorf("next %d, notice %d: kept %v, want %v", tc.next, tc.seq, got, tc.kept)
			}
			// a registration once it has long run here prunes it
			w.seq.Store(tc.seq + 1000)
			run := w.aborted
			w.enter(nil, ^uint32(0), false)
			w.leave(nil, false)
			if len(run) > 0 && len(w.aborted) != 0 {
				return fmt.Errorf("next %d, notice %d: not pruned after 1000 calls", tc.next, tc.seq)
			}
			w.aborted = nil
			return nil
		}))
	}
}

// A rank whose call fails its own checks (a bad root, a nil op, a short
// buffer) takes no part, and the ranks that passed theirs would wait for
// it: they get ErrArg instead, in the call or in their next collective,
// and the collective after that works.
func TestOneRankRefuses(t *testing.T) {
	const n, bad = 4, 2
	for _, tc := range []struct {
		name string
		want error
		call func(w *Comm, bad bool) error
	}{
		{"bcast root", ErrRoot, func(w *Comm, bad bool) error {
			root := 0
			if bad {
				root = n
			}
			return Bcast(w, []int64{1}, root)
		}},
		{"allreduce nil op", ErrOp, func(w *Comm, bad bool) error {
			o := Sum
			if bad {
				o = nil
			}
			return Allreduce(w, []int64{1}, []int64{0}, o)
		}},
		{"allgather short, nonblocking", ErrCount, func(w *Comm, bad bool) error {
			k := n
			if bad {
				k = 1
			}
			r, err := Iallgather(w, []int64{1}, make([]int64, k))
			if err != nil {
				return err
			}
			_, err = r.Wait(t.Context())
			return err
		}},
		{"reduce aliased, persistent", ErrBuffer, func(w *Comm, bad bool) error {
			b := []int64{1, 0}
			recv := b[1:]
			if bad && w.Rank() == 0 {
				recv = b[:1]
			}
			r, err := ReduceInit(w, b[:1], recv, Sum, 0)
			if err != nil {
				return err
			}
			defer r.Free()
			if err := r.Start(); err != nil {
				return err
			}
			_, err = r.Wait(t.Context())
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first, next := make([]error, n), make([]error, n)
			err := deadline(t, tc.name, func() error {
				return Run(n, func(w *Comm) error {
					isBad := w.Rank() == bad || tc.want == ErrBuffer
					first[w.Rank()] = tc.call(w, isBad)
					if err := hearFromAll(w); err != nil { // see TestRootMismatch
						return err
					}
					next[w.Rank()] = Barrier(w)
					got := []int64{0}
					if err := Allreduce(w, []int64{1}, got, Sum); err != nil || got[0] != n {
						return fmt.Errorf("allreduce after the refusal: %v %w", got, err)
					}
					return nil
				})
			})
			require.NoError(t, err)
			refused := 0
			for r := range n {
				switch {
				case errors.Is(first[r], tc.want):
					refused++
				case errors.Is(first[r], ErrArg) || errors.Is(next[r], ErrArg):
				default:
					t.Errorf("rank %d: %v, then %v; want %v or ErrArg", r, first[r], next[r], tc.want)
				}
			}
			require.Equal(t, 1, refused, "ranks that refused")
		})
	}
}

// A collective only one rank called (an erroneous program: here one that
// failed its argument checks, which still takes its sequence number) is
// found at Finalize: the ranks' numbers of collective calls differ, and
// Finalize fails with ErrArg naming the rank instead of waiting forever.
func TestFinalizeAfterOneSidedCollective(t *testing.T) {
	done := make(chan error, 1)
	go func() {
		done <- Run(3, func(w *Comm) error {
			if w.Rank() == 0 {
				if err := Bcast(w, make([]int32, 4), 5); !errors.Is(err, ErrRoot) {
					return fmt.Errorf("bcast from root 5: %v, want ErrRoot", err)
				}
			}
			return nil
		})
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute): // a hang guard, not a timing
		t.Fatal("Finalize hung")
	}
	t.Log(err)
	require.ErrorIs(t, err, ErrArg)
	require.Contains(t, err.Error(), "different number of collective calls")
}

// Two ranks may both report a collective that completed here (one found
// the disagreement in its call, one in its trail): the first notice fails
// this rank's next call, and the second, however close behind it, marks
// nothing, so the call after works. Taking the mark and recording the
// failed call were two steps, and a notice in between marked the
// communicator again (TestInterRootMismatch, about 1 run in 5,000).
func TestSecondLateNoticeMarksNothing(t *testing.T) {
	require.NoError(t, Run(1, func(w *Comm) error {
		for trial := range uint32(2000) {
			done, call := 10*trial+1, 10*trial+2 // a collective that completed here, the next call
			w.activeMu.Lock()
			w.late.done[w.late.n%recentSeqs] = done
			w.late.n++
			w.activeMu.Unlock()
			w.seq.Store(call)
			w.abortSeq(done, true) // the first notice
			second := make(chan struct{})
			go func() {
				defer close(second)
				for range 50 {
					w.abortSeq(done, true)
				}
			}()
			if err := w.earlierFailed("barrier", call); !errors.Is(err, ErrArg) {
				return fmt.Errorf("trial %d: the call after a late notice: %v, want ErrArg", trial, err)
			}
			<-second
			if s, ok := w.takeLate(call + 1); ok {
				return fmt.Errorf("trial %d: a second notice about collective %d marked the communicator (the call after the failed one would fail for %d)", trial, done, s)
			}
		}
		return nil
	}))
}
