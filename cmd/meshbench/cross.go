//go:build !js && !wasip1

package main

import (
	"context"
	"fmt"
	"io"

	"github.com/meshmpi/meshmpi/internal/browsertest"
	"github.com/meshmpi/meshmpi/internal/mixedjob"
	"github.com/meshmpi/meshmpi/internal/ranksuite"
)

// crossPairs are the kinds of rank of each cross-target link: the driver
// (rank 0), which times, and the rank that echoes. A native rank drives
// where there is one: its clock is the finer.
var crossPairs = map[string][2]mixedjob.Kind{
	linkBrowserNative:  {mixedjob.Native, mixedjob.Browser},
	linkBrowserBrowser: {mixedjob.Browser, mixedjob.Browser},
	linkWASINative:     {mixedjob.Native, mixedjob.WASI},
}

// runCross measures a cross-target link: one job of two ranks of the
// link's kinds running ranksuite's driver and echo (mixedjob.Pair), the
// same bodies as the mixed-job benchmarks, and prints OSU tables of its
// figures and, for browser ranks, the time from page load to ready.
func runCross(out io.Writer, cfg config) error {
	kinds := crossPairs[cfg.link]
	ctx := context.Background()
	mc := mixedjob.Config{WASI: kinds[0] == mixedjob.WASI || kinds[1] == mixedjob.WASI}
	if kinds[0] == mixedjob.Browser || kinds[1] == mixedjob.Browser {
		bctx, stop, err := browsertest.Launch(ctx)
		if err != nil {
			return err
		}
		defer stop()
		mc.Browser = true
		mc.NewTab = func(_, origin string) (context.Context, error) { return browsertest.OpenTab(bctx, origin) }
	}
	l, err := mixedjob.New(ctx, mc)
	if err != nil {
		return err
	}
	defer l.Close()

	plan := ranksuite.Plan{
		Iters:       cfg.iters,
		StreamBytes: int(int64(crossStreamBytes) * int64(cfg.iters) / crossIters),
		Rounds:      cfg.rounds,
	}
	if cfg.mode != "bw" {
		plan.LatSizes = cfg.latSizes
	}
	if cfg.mode != "latency" {
		plan.BWSizes = cfg.bwSizes
	}
	figs, res, err := l.Pair(ctx, kinds[0], kinds[1], plan)
	if err != nil {
		return fmt.Errorf("%s: %w", cfg.link, err)
	}
	tables := 0
	for _, c := range []struct {
		b     bench
		sizes []int
	}{{benches["latency"], plan.LatSizes}, {benches["bw"], plan.BWSizes}} {
		if len(c.sizes) == 0 {
			continue
		}
		if tables++; tables > 1 {
			fmt.Fprintln(out)
		}
		printTitle(out, c.b, cfg.link, cfg.rounds)
		for _, f := range figs {
			if f.Bench == c.b.name {
				fmt.Fprintf(out, "%10d%20.2f\n", f.Size, f.Value)
			}
		}
	}
	if kinds[0] == mixedjob.Browser || kinds[1] == mixedjob.Browser {
		fmt.Fprintf(out, "\n# meshmpi browser rank start (%s links): page load to rank ready\n", cfg.link)
		fmt.Fprintf(out, "%-2s%8s%12s\n", "#", "Rank", "Ready(ms)")
		for _, r := range res {
			if r.Kind == mixedjob.Browser {
				fmt.Fprintf(out, "%10d%12.1f\n", r.Rank, r.Ready)
			}
		}
	}
	return nil
}
