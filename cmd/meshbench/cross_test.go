//go:build !js && !wasip1

package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/internal/browsertest"
)

// The cross-target links run a job of a wazero guest (or a browser tab)
// and a native rank; the browser one skips without chromium unless
// MESHMPI_BROWSER_TESTS=require.
func TestCrossLinks(t *testing.T) {
	for _, link := range []string{linkWASINative, linkBrowserNative} {
		t.Run(link, func(t *testing.T) {
			if link != linkWASINative {
				browsertest.Require(t)
			}
			tables := meshbench(t, "-link", link, "-iters", "50", "-rounds", "1", "-min", "8", "-max", "16")
			checkSizes(t, titled(tables, "# meshmpi latency ("+link+" links, 2 ranks)")[0], []int{8, 16})
			checkSizes(t, titled(tables, "# meshmpi bw ("+link+" links, 2 ranks)")[0], []int{8, 16})
			starts := titled(tables, "# meshmpi browser rank start")
			if link == linkWASINative {
				require.Len(t, tables, 2)
				require.Empty(t, starts)
				return
			}
			require.Len(t, tables, 3)
			require.Equal(t, []string{"Rank", "Ready(ms)"}, starts[0].columns())
			checkTable(t, starts[0], 2, 1)
		})
	}
}

// TestCrossBrowserBrowser: two browser ranks' figures come with the
// browser's own data channel's from plain JavaScript, in two tabs (the
// better of 65,535-byte and the browser's largest messages, with the
// bar; then each) and in one, for every size.
func TestCrossBrowserBrowser(t *testing.T) {
	browsertest.Require(t)
	tables := meshbench(t, "-link", linkBrowserBrowser, "-iters", "50", "-rounds", "1", "-min", "8", "-max", "16")
	checkSizes(t, titled(tables, "# meshmpi latency ("+linkBrowserBrowser+" links, 2 ranks)")[0], []int{8, 16})
	raw := titled(tables, "# meshmpi vs raw JavaScript data channel")
	require.Len(t, raw, 4)
	for i, tb := range raw {
		require.Contains(t, tb.title(), []string{"the better of", "65,535-byte", "its largest messages (262144 bytes)", "one tab"}[i])
		checkTable(t, tb, 7, 1, 2, 3, 4)
		require.Len(t, tb.rows, 4, "latency and bw of 8 and 16 B") // 2 sizes × 2 benchmarks
	}
}

// medianOf leaves the series' figures in their order (they are printed
// after it).
func TestMedianOf(t *testing.T) {
	v := []float64{3, 1, 2, 5}
	require.Equal(t, 2.5, medianOf(v))
	require.Equal(t, []float64{3, 1, 2, 5}, v)
	require.Equal(t, 2.0, medianOf(v[:3]))
	require.Zero(t, medianOf(nil))
}
