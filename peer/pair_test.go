package peer

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// attachedPair makes world ranks 0 and 1 of a 2-rank world linked by la
// (rank 0's link to 1) and lb, rank 1 with the given unexpected-message
// limit (0: the default); the test's end closes them.
func attachedPair(tb testing.TB, la, lb Link, limit int64) (*Endpoint, *Endpoint) {
	tb.Helper()
	a, err := NewEndpoint(Config{Rank: 0, Size: 2})
	require.NoError(tb, err)
	b, err := NewEndpoint(Config{Rank: 1, Size: 2, UnexpectedLimit: limit})
	require.NoError(tb, err)
	require.NoError(tb, a.Attach(1, la))
	require.NoError(tb, b.Attach(0, lb))
	tb.Cleanup(func() {
		a.Close(nil)
		b.Close(nil)
	})
	return a, b
}
