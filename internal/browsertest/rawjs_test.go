//go:build !js && !wasip1

package browsertest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/internal/browsertest"
)

// TestRawJS: the plain-JavaScript page connects its two peer
// connections, in one tab and across two, and measures every size it was
// asked for; a stream of empty messages is refused before any tab opens.
func TestRawJS(t *testing.T) {
	browsertest.Require(t)
	bctx, stop, err := browsertest.Launch(context.Background())
	require.NoError(t, err)
	defer stop()
	plan := browsertest.RawPlan{LatSizes: []int{8, 1000}, BWSizes: []int{65536, 100000}, Iters: 50, StreamBytes: 1 << 20}
	for _, twoTabs := range []bool{false, true} {
		figs, err := browsertest.RawJS(bctx, twoTabs, plan)
		require.NoError(t, err, "two tabs %v", twoTabs)
		var got []browsertest.RawFigure
		for _, f := range figs {
			require.Positive(t, f.Value, "%+v", f)
			got = append(got, browsertest.RawFigure{Bench: f.Bench, Size: f.Size})
		}
		require.Equal(t, []browsertest.RawFigure{{"latency", 8, 0}, {"latency", 1000, 0}, {"bw", 65536, 0}, {"bw", 100000, 0}}, got)
	}
	_, err = browsertest.RawJS(bctx, false, browsertest.RawPlan{BWSizes: []int{0}})
	require.ErrorContains(t, err, "want at least 1")
}
