package meshmpi

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// world runs fn on n in-process ranks and fails the test with every rank's
// error. Rank functions report failures as errors (t.Fatal belongs to the
// test goroutine).
func world(t *testing.T, n int, fn func(w *Comm) error, opts ...Option) {
	t.Helper()
	if worldJob != nil {
		opts = append(opts, WithJob(worldJob(t, n)))
	}
	require.NoError(t, Run(n, fn, opts...))
}

// worldJob, when set, gives world a fresh job of n ranks: the same tests
// then run over the real WebRTC mesh instead of memory links.
var worldJob func(t *testing.T, n int) JobSpec

// expect returns an error built from format unless ok.
func expect(ok bool, format string, args ...any) error {
	if ok {
		return nil
	}
	return fmt.Errorf(format, args...)
}

// expectErr checks that err wraps want.
func expectErr(err, want error, what string) error {
	if !errors.Is(err, want) {
		return fmt.Errorf("%s: got error %v, want %v", what, err, want)
	}
	return nil
}

// formCall picks the call of a form.
func formCall(form collForm, b func() error, i, p func() (*Request, error)) (*Request, error) {
	switch form {
	case blocking:
		return nil, b()
	case nonblocking:
		return i()
	}
	return p()
}

// fill returns n elements unique to (rank, seed, index).
func fill(rank, seed, n int) []int64 {
	b := make([]int64, n)
	for i := range b {
		b[i] = int64(rank)<<40 | int64(seed)<<20 | int64(i)
	}
	return b
}

// noAllocs checks that a cycle of Start+Wait on each of rs, in order,
// allocates nothing. Rank 0 of w measures over runs cycles after a
// warm-up; the other ranks run as many cycles to keep pace, since the
// requests are collective. A request that fails shows in the caller's
// check of its results, not here.
func noAllocs(w *Comm, runs int, what string, rs ...*Request) error {
	ctx := context.Background()
	cycle := func() {
		for _, r := range rs {
			_ = r.Start()
			_, _ = r.Wait(ctx)
		}
	}
	cycle()
	if w.Rank() != 0 {
		for range runs + 1 { // AllocsPerRun's own warm-up and its runs
			cycle()
		}
		return nil
	}
	if a := testing.AllocsPerRun(runs, cycle); a != 0 {
		return fmt.Errorf("%s: %.2f allocations per Start+Wait", what, a)
	}
	return nil
}
