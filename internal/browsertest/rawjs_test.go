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
			if f.Bench == "bw" {
				require.Equal(t, 65535, f.Frame, "%+v", f)
			}
			got = append(got, browsertest.RawFigure{Bench: f.Bench, Size: f.Size})
		}
		require.Equal(t, []browsertest.RawFigure{{Bench: "latency", Size: 8}, {Bench: "latency", Size: 1000}, {Bench: "bw", Size: 65536}, {Bench: "bw", Size: 100000}}, got)
	}
	// the browser's largest message: Chromium's max-message-size
	plan.Frame = browsertest.FrameLargest
	figs, err := browsertest.RawJS(bctx, true, plan)
	require.NoError(t, err)
	for _, f := range figs {
		if f.Bench == "bw" {
			require.Equal(t, 262144, f.Frame, "%+v", f)
		}
	}
	_, err = browsertest.RawJS(bctx, false, browsertest.RawPlan{BWSizes: []int{0}})
	require.ErrorContains(t, err, "want at least 1")
}
