//go:build !js && !wasip1

package main

import (
	"context"
	"fmt"
	"io"
	"strconv"

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
	var bctx context.Context
	if kinds[0] == mixedjob.Browser || kinds[1] == mixedjob.Browser {
		var stop context.CancelFunc
		var err error
		if bctx, stop, err = browsertest.Launch(ctx); err != nil {
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
	if cfg.link == linkBrowserBrowser {
		if err := printRawJS(out, bctx, plan, figs); err != nil {
			return err
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

// The bars of the browser link against the browser's own data channel.
const (
	browserLatencyBar = 1.25 // meshmpi one-way latency at most 1.25 × raw JavaScript's, every size
	browserBWBar      = 0.90 // meshmpi bandwidth at least 0.9 × raw JavaScript's, every size
)

// printRawJS measures the same sizes over the browser's own data channel
// from plain JavaScript, in the same Chromium (browsertest.RawJS), in two
// tabs, as the two browser ranks ran, and in one, and prints them beside
// meshmpi's figures with the ratio and the bar.
func printRawJS(out io.Writer, bctx context.Context, plan ranksuite.Plan, figs []ranksuite.Figure) error {
	rp := browsertest.RawPlan{LatSizes: plan.LatSizes, Iters: plan.Iters, StreamBytes: plan.StreamBytes, Rounds: plan.Rounds}
	for _, s := range plan.BWSizes {
		if s > 0 { // an empty stream moves nothing to time
			rp.BWSizes = append(rp.BWSizes, s)
		}
	}
	mesh := map[[2]string]float64{}
	for _, f := range figs {
		mesh[[2]string{f.Bench, strconv.Itoa(f.Size)}] = f.Value
	}
	for _, tabs := range []struct {
		two  bool
		name string
	}{{true, "two tabs"}, {false, "one tab"}} {
		raw, err := browsertest.RawJS(bctx, tabs.two, rp)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "\n# meshmpi vs raw JavaScript data channel (browser-browser links; raw: %s of the same Chromium, two RTCPeerConnections)\n", tabs.name)
		fmt.Fprintln(out, "# latency: one-way us, lower is better; bw: MB/s, higher is better; Ratio = meshmpi/raw for both")
		fmt.Fprintf(out, "%-13s%10s%12s%12s%8s%10s%7s\n", "# Test", "Size", "meshmpi", "raw-js", "Ratio", "Bar", "Meets")
		for _, r := range raw {
			m, ok := mesh[[2]string{r.Bench, strconv.Itoa(r.Size)}]
			if !ok || r.Value <= 0 {
				continue
			}
			ratio := m / r.Value
			test, bar, meets := "latency(us)", fmt.Sprintf("<=%.2f", browserLatencyBar), yesNo(ratio <= browserLatencyBar)
			if r.Bench == "bw" {
				test, bar, meets = "bw(MB/s)", fmt.Sprintf(">=%.2f", browserBWBar), yesNo(ratio >= browserBWBar)
			}
			if !tabs.two {
				bar, meets = "-", "-" // meshmpi's ranks ran in two tabs: one tab is for reference
			}
			fmt.Fprintf(out, "%-13s%10d%12.2f%12.2f%8.2f%10s%7s\n", test, r.Size, m, r.Value, ratio, bar, meets)
		}
	}
	return nil
}
