//go:build !js && !wasip1

package mixedjob

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/internal/ranksuite"
)

// TestFirefoxPair: a Firefox rank and a native one exchange the
// driver's plan both ways round.
func TestFirefoxPair(t *testing.T) {
	l := launcher(t, false, true)
	plan := ranksuite.Plan{LatSizes: []int{8}, BWSizes: []int{64 << 10}, Iters: 50, StreamBytes: 1 << 20, Rounds: 1}
	figs, res, err := l.Pair(context.Background(), Native, Firefox, plan)
	for _, r := range res {
		t.Logf("%s rank %d: %v\n%s%s", r.Kind, r.Rank, r.Err, r.Stdout, r.Stderr)
	}
	require.NoError(t, err)
	t.Logf("%+v", figs)
}
