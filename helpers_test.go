package meshmpi

import (
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

// fill returns n elements unique to (rank, seed, index).
func fill(rank, seed, n int) []int64 {
	b := make([]int64, n)
	for i := range b {
		b[i] = int64(rank)<<40 | int64(seed)<<20 | int64(i)
	}
	return b
}
