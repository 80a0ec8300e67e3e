package main

import (
	"fmt"
	"io"
)

// The bars meshmpi over WebRTC must meet against the raw pion baseline.
const (
	latencyBar   = 1.25 // meshmpi 8 B latency at most 1.25 × raw
	latencyBarAt = 8    // the size the latency bar applies to
	bwBar        = 0.80 // meshmpi bandwidth at least 80% of raw, every size
)

// comparison is one benchmark's figures over meshmpi and over the raw
// pair, one per size.
type comparison struct {
	bench     bench
	sizes     []int
	mesh, raw []float64
}

// printComparison prints one line per size of every comparison: both
// figures, their ratio (meshmpi/raw for both benchmarks: below 1 is better
// for latency, above 1 for bandwidth) and the bar, if one applies.
func printComparison(out io.Writer, cmp []comparison) {
	fmt.Fprintln(out, "# meshmpi vs raw pion data channel (webrtc links, loopback, one process)")
	fmt.Fprintln(out, "# latency: one-way us, lower is better; bw: MB/s, higher is better; Ratio = meshmpi/raw for both")
	fmt.Fprintf(out, "%-13s%10s%12s%12s%8s%10s%7s\n", "# Test", "Size", "meshmpi", "raw-pion", "Ratio", "Bar", "Meets")
	for _, c := range cmp {
		for i, size := range c.sizes {
			if size == 0 || i >= len(c.mesh) || i >= len(c.raw) || c.raw[i] <= 0 {
				continue
			}
			ratio := c.mesh[i] / c.raw[i]
			bar, meets := "-", "-"
			switch {
			case c.bench.name == "latency" && size == latencyBarAt:
				bar, meets = fmt.Sprintf("<=%.2f", latencyBar), yesNo(ratio <= latencyBar)
			case c.bench.name == "bw":
				bar, meets = fmt.Sprintf(">=%.2f", bwBar), yesNo(ratio >= bwBar)
			}
			test := "latency(us)"
			if c.bench.name == "bw" {
				test = "bw(MB/s)"
			}
			fmt.Fprintf(out, "%-13s%10d%12.2f%12.2f%8.2f%10s%7s\n", test, size, c.mesh[i], c.raw[i], ratio, bar, meets)
		}
	}
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "NO"
}
