//go:build !js && !wasip1

package mixedjob

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/internal/browsertest"
	"github.com/meshmpi/meshmpi/internal/leaktest"
	"github.com/meshmpi/meshmpi/internal/ranksuite"
)

// TestFirefoxPair: two Firefox ranks, each in a browser of its own,
// measure a short plan between them (the mixed job has one Firefox
// rank, so this is the Firefox-Firefox link).
func TestFirefoxPair(t *testing.T) {
	browsertest.RequireFirefox(t)
	leaktest.Check(t) // first: its cleanup runs after the launcher's
	l := launcher(t, false, true)
	plan := ranksuite.Plan{LatSizes: []int{8}, BWSizes: []int{64 << 10}, Iters: 50, StreamBytes: 1 << 20, Rounds: 1}
	figs, res, err := l.Pair(context.Background(), Firefox, Firefox, plan)
	for _, r := range res {
		t.Logf("%s rank %d: %v\n%s%s", r.Kind, r.Rank, r.Err, r.Stdout, r.Stderr)
	}
	require.NoError(t, err)
	require.Len(t, figs, 2)
	for _, f := range figs {
		t.Logf("firefox-firefox %s %d B: %.1f", f.Bench, f.Size, f.Value)
	}
}
