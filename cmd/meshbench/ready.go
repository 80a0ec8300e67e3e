package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/meshmpi/meshmpi"
)

// jobTimeout bounds how long a -mode ready or conncost job takes to form.
const jobTimeout = time.Minute

// runReady prints, per job size, how long an in-process job takes to form
// (n goroutines calling meshmpi.Join, one per rank, on a fresh job) and how
// long the first message between two of its ranks takes, which includes
// setting up their link (links connect lazily, on the first message).
func runReady(out io.Writer, jobs *jobServer, ranks []int, reps int) error {
	fmt.Fprintf(out, "# meshmpi job set-up (webrtc links, loopback, embedded signaling server, %d reps; ms)\n", reps)
	fmt.Fprintln(out, "# Ready: from the first Join call until every rank's Join returned")
	fmt.Fprintln(out, "# First: rank 0 sends 8 B to rank 1 (no link yet: rank 0 dials) until rank 1's Recv returns; Next: the same, linked")
	fmt.Fprintf(out, "%-7s%6s%11s%11s%11s%11s%11s\n", "# Ranks", "Reps", "Ready-min", "Ready-med", "First-min", "First-med", "Next-med")
	for _, n := range ranks {
		var ready, first, next []time.Duration
		for range reps {
			r, f, x, err := readyOnce(jobs, n)
			if err != nil {
				return fmt.Errorf("%d ranks: %w", n, err)
			}
			ready, first, next = append(ready, r), append(first, f), append(next, x)
		}
		fmt.Fprintf(out, "%7d%6d%11.2f%11.2f%11.2f%11.2f%11.3f\n", n, reps,
			ms(slices.Min(ready)), ms(median(ready)), ms(slices.Min(first)), ms(median(first)), ms(median(next)))
	}
	return nil
}

// readyOnce forms one job of n ranks, times its first two messages from
// rank 0 to rank 1, and finalizes it.
func readyOnce(jobs *jobServer, n int) (ready, first, next time.Duration, err error) {
	spec, err := jobs.spec(n)
	if err != nil {
		return 0, 0, 0, err
	}
	sessions, ready, err := joinAll(spec, n)
	if err != nil {
		return 0, 0, 0, err
	}
	if first, err = timeMessage(sessions, 0, 1); err == nil {
		next, err = timeMessage(sessions, 0, 1)
	}
	if err != nil {
		abortAll(sessions, err)
		return 0, 0, 0, err
	}
	return ready, first, next, finalizeAll(sessions)
}

// joinAll joins every rank of spec's n-rank job at once, each from its own
// goroutine, and returns the sessions and the time until the last Join
// returned.
func joinAll(spec meshmpi.JobSpec, n int) ([]*meshmpi.Session, time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), jobTimeout)
	defer cancel()
	sessions, errs := make([]*meshmpi.Session, n), make([]error, n)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		wg.Go(func() {
			s := spec
			s.Rank = i
			if sessions[i], errs[i] = meshmpi.Join(ctx, s); errs[i] != nil {
				cancel() // the job cannot form: stop the others waiting
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		abortAll(sessions, err)
		return nil, 0, err
	}
	return sessions, elapsed, nil
}

// timeMessage returns the time from rank from's 8 B Send until rank to's
// Recv of it returns.
func timeMessage(sessions []*meshmpi.Session, from, to int) (time.Duration, error) {
	type arrival struct {
		at  time.Time
		err error
	}
	got := make(chan arrival, 1)
	go func() {
		buf := make([]byte, 8)
		_, err := meshmpi.Recv(sessions[to].World(), buf, from, tagData)
		got <- arrival{time.Now(), err}
	}()
	start := time.Now()
	if err := meshmpi.Send(sessions[from].World(), make([]byte, 8), to, tagData); err != nil {
		abortAll(sessions, err) // fails the receive
		return 0, errors.Join(err, (<-got).err)
	}
	a := <-got
	if a.err != nil {
		return 0, a.err
	}
	return a.at.Sub(start), nil
}

// finalizeAll finalizes every session at once (Finalize waits for every
// rank).
func finalizeAll(sessions []*meshmpi.Session) error {
	errs := make([]error, len(sessions))
	var wg sync.WaitGroup
	for i, s := range sessions {
		wg.Go(func() {
			if err := s.Finalize(); err != nil {
				errs[i] = fmt.Errorf("rank %d: %w", i, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func abortAll(sessions []*meshmpi.Session, cause error) {
	for _, s := range sessions {
		if s != nil {
			s.Abort(cause)
		}
	}
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func ms(d time.Duration) float64 { return d.Seconds() * 1e3 }
