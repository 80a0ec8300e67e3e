//go:build !js && !wasip1

package main

import (
	"context"
	"fmt"
	"io"
	"slices"

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
	if cfg.link == linkBrowserBrowser {
		return runBrowserSeries(out, cfg, bctx, l, plan)
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
		printReady(out, cfg.link, res)
	}
	return nil
}

// printReady prints the browser ranks' time from page load to ready.
func printReady(out io.Writer, link string, res []mixedjob.Result) {
	fmt.Fprintf(out, "\n# meshmpi browser rank start (%s links): page load to rank ready\n", link)
	fmt.Fprintf(out, "%-2s%8s%12s\n", "#", "Rank", "Ready(ms)")
	for _, r := range res {
		if r.Kind == mixedjob.Browser {
			fmt.Fprintf(out, "%10d%12.1f\n", r.Rank, r.Ready)
		}
	}
}

// The bars of the browser link against the browser's own data channel.
const (
	browserLatencyBar = 1.25 // meshmpi one-way latency at most 1.25 × raw JavaScript's, every size
	browserBWBar      = 0.90 // meshmpi bandwidth at least 0.9 × raw JavaScript's, every size
)

// runBrowserSeries measures two browser ranks against the browser's own
// data channel from plain JavaScript (browsertest.RawJS) in the same
// Chromium: in two tabs, as the two browser ranks run, streaming
// 65,535-byte messages (meshmpi's frame before it took the browser's
// limit) and the largest the browser sends (262,144 in Chromium), and
// in one tab with the largest. The bar holds meshmpi to the browser at
// its best: each series' better two-tab figure. With -rounds N > 1, N
// interleaved series of meshmpi and the raw runs, each the best of 2
// runs of every size (the first run warms the page's WebAssembly tiers
// up). A shared machine's load moves from minute to minute by more than
// the gap measured, so a ratio means something only between figures
// taken side by side: each series has its own ratio, and the tables
// print the medians of the figures and of the series' ratios. With
// -rounds 1, one series of one run each.
func runBrowserSeries(out io.Writer, cfg config, bctx context.Context, l *mixedjob.Launcher, plan ranksuite.Plan) error {
	series := cfg.rounds
	plan.Rounds = min(cfg.rounds, 2)
	rp := browsertest.RawPlan{LatSizes: plan.LatSizes, Iters: plan.Iters, StreamBytes: plan.StreamBytes, Rounds: plan.Rounds}
	for _, s := range plan.BWSizes {
		if s > 0 { // an empty stream moves nothing to time
			rp.BWSizes = append(rp.BWSizes, s)
		}
	}
	type key struct {
		bench string
		size  int
	}
	// the raw runs of a series; best is the better of the two-tab ones
	variants := []struct {
		twoTabs bool
		frame   int
		name    string
	}{
		{true, 0, "two tabs of the same Chromium, 65,535-byte messages"},
		{true, browsertest.FrameLargest, "two tabs of the same Chromium, its largest messages"},
		{false, browsertest.FrameLargest, "one tab of the same Chromium, its largest messages"},
	}
	const best = 3
	mesh := map[key][]float64{}
	raw := make([]map[key][]float64, len(variants)+1)
	ratios := make([]map[key][]float64, len(variants)+1) // meshmpi/raw of each series
	frames := make([]int, len(variants))                 // the largest message each variant sent
	for i := range raw {
		raw[i], ratios[i] = map[key][]float64{}, map[key][]float64{}
	}
	var res []mixedjob.Result
	for range series {
		figs, r, err := l.Pair(context.Background(), mixedjob.Browser, mixedjob.Browser, plan)
		if err != nil {
			return fmt.Errorf("%s: %w", cfg.link, err)
		}
		res = r
		this := map[key]float64{}
		for _, f := range figs {
			k := key{f.Bench, f.Size}
			this[k] = f.Value
			mesh[k] = append(mesh[k], f.Value)
		}
		top := map[key]float64{} // this series' best two-tab figures
		for i, v := range variants {
			p := rp
			p.Frame = v.frame
			figs, err := browsertest.RawJS(bctx, v.twoTabs, p)
			if err != nil {
				return err
			}
			for _, f := range figs {
				k := key{f.Bench, f.Size}
				raw[i][k] = append(raw[i][k], f.Value)
				if m, ok := this[k]; ok && f.Value > 0 {
					ratios[i][k] = append(ratios[i][k], m/f.Value)
				}
				if f.Frame > 0 {
					frames[i] = f.Frame
				}
				if !v.twoTabs {
					continue
				}
				if t, ok := top[k]; !ok || (f.Bench == "bw") == (f.Value > t) {
					top[k] = f.Value // latency: the lower, bw: the higher
				}
			}
		}
		for k, v := range top {
			raw[best][k] = append(raw[best][k], v)
			if m, ok := this[k]; ok && v > 0 {
				ratios[best][k] = append(ratios[best][k], m/v)
			}
		}
	}

	how := ""
	if series > 1 {
		how = fmt.Sprintf(", median of %d series, each best of %d", series, plan.Rounds)
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
		fmt.Fprintf(out, "# meshmpi %s (%s links, 2 ranks%s)\n", c.b.name, cfg.link, how)
		fmt.Fprintf(out, "%-2s%8s%20s\n", "#", "Size", c.b.column)
		for _, s := range c.sizes {
			if v, ok := mesh[key{c.b.name, s}]; ok {
				fmt.Fprintf(out, "%10d%20.2f\n", s, medianOf(v))
			}
		}
	}
	for _, i := range []int{best, 0, 1, 2} {
		name := "two tabs of the same Chromium, the better of its 65,535-byte and largest messages in each series"
		if i < best {
			name = variants[i].name
			if frames[i] > 0 {
				name += fmt.Sprintf(" (%d bytes)", frames[i])
			}
		}
		fmt.Fprintf(out, "\n# meshmpi vs raw JavaScript data channel (browser-browser links; raw: %s, two RTCPeerConnections%s)\n", name, how)
		fmt.Fprintln(out, "# latency: one-way us, lower is better; bw: MB/s, higher is better; Ratio = meshmpi/raw for both")
		var rows []string
		for _, c := range []struct {
			b     string
			sizes []int
		}{{"latency", plan.LatSizes}, {"bw", rp.BWSizes}} {
			for _, s := range c.sizes {
				k := key{c.b, s}
				rs := ratios[i][k]
				if len(rs) == 0 {
					continue
				}
				ratio := medianOf(rs)
				test, bar, meets := "latency(us)", fmt.Sprintf("<=%.2f", browserLatencyBar), yesNo(ratio <= browserLatencyBar)
				if c.b == "bw" {
					test, bar, meets = "bw(MB/s)", fmt.Sprintf(">=%.2f", browserBWBar), yesNo(ratio >= browserBWBar)
				}
				if i != best {
					bar, meets = "-", "-" // for reference: the bar is against the browser at its best
				}
				if len(rs) > 1 {
					line := fmt.Sprintf("# series ratios, %s %d:", c.b, s)
					for _, r := range rs {
						line += fmt.Sprintf(" %.2f", r)
					}
					fmt.Fprintln(out, line)
				}
				rows = append(rows, fmt.Sprintf("%-13s%10d%12.2f%12.2f%8.2f%10s%7s", test, s, medianOf(mesh[k]), medianOf(raw[i][k]), ratio, bar, meets))
			}
		}
		fmt.Fprintf(out, "%-13s%10s%12s%12s%8s%10s%7s\n", "# Test", "Size", "meshmpi", "raw-js", "Ratio", "Bar", "Meets")
		for _, r := range rows {
			fmt.Fprintln(out, r)
		}
	}
	printReady(out, cfg.link, res)
	return nil
}

// medianOf is the median of v (the mean of the middle two of an even
// count).
func medianOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}
