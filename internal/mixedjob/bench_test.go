//go:build !js && !wasip1

package mixedjob

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/internal/ranksuite"
)

// BenchmarkPair measures 8-byte one-way latency (half a round trip) and
// the bandwidth of 64 KiB and 1 MiB messages between the kinds of rank
// (browser is a chromium tab, firefox a headless firefox of its own),
// with the driver and the echo rank of ranksuite, which meshbench's
// cross-target links run too (go run ./cmd/meshbench -link
// browser-native). The ranks time themselves over a fixed plan, so run
// it once:
//
//	go test -run '^$' -bench Pair -benchtime 1x ./internal/mixedjob
func BenchmarkPair(b *testing.B) {
	plan := ranksuite.Plan{LatSizes: []int{8}, BWSizes: []int{64 << 10, 1 << 20}, Iters: 1000, StreamBytes: 16 << 20, Rounds: 1}
	for _, p := range []struct{ drive, echo Kind }{
		{Native, Browser}, {Browser, Browser}, {Native, WASI}, {Native, Native},
		{Native, Firefox}, {Firefox, Browser}, {Browser, Firefox}, {Firefox, Firefox},
	} {
		b.Run(fmt.Sprintf("%s-%s", p.drive, p.echo), func(b *testing.B) {
			l := launcher(b, p.drive == Browser || p.echo == Browser, p.drive == Firefox || p.echo == Firefox)
			for range b.N {
				figs, res, err := l.Pair(context.Background(), p.drive, p.echo, plan)
				require.NoError(b, err)
				for _, f := range figs {
					unit := "µs"
					if f.Bench == "bw" {
						unit = "MB/s"
					}
					b.ReportMetric(f.Value, fmt.Sprintf("%s-%dB-%s", f.Bench, f.Size, unit))
				}
				for _, r := range res {
					if r.Kind == Browser || r.Kind == Firefox {
						b.ReportMetric(r.Ready, "ms-to-ready")
					}
				}
			}
		})
	}
}
