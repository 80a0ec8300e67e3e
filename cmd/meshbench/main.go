package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/meshmpi/meshmpi"
)

const (
	window     = 64      // osu_bw's window of outstanding messages
	largeSize  = 8 << 10 // above this, iterations scale down with the size (OSU's LARGE_MESSAGE_SIZE)
	tagData    = 1
	tagAck     = 2
	ackBytes   = 4
	minLatency = 10 // fewest timed iterations of a latency size
	minBW      = 5  // fewest timed iterations of a bw size

	defaultIters = 10000 // -iters' default (osu_latency's)

	// Over WebRTC (about 60–90 MB/s on loopback) a bw window holds at
	// most webrtcWindowBytes (64 messages of 64 KiB, 4 of 1 MiB, 1 of
	// 16 MiB), and a size moves about webrtcBWBytes a round at the default
	// -iters.
	webrtcWindowBytes = 4 << 20
	webrtcBWBytes     = 48 << 20
	minBWWebRTC       = 2 // fewest timed iterations of a bw size over webrtc
	webrtcRounds      = 3 // -rounds' default over webrtc
)

// Links (-link).
const (
	linkMemory = "memory"
	linkWebRTC = "webrtc"
	// Cross-target links: one rank of each kind named, in a job of two
	// (cross.go).
	linkBrowserNative  = "browser-native"
	linkBrowserBrowser = "browser-browser"
	linkWASINative     = "wasi-native"
	// linkSameHost: two native processes of this host, over the link the
	// mesh picks for them and over WebRTC (samehost.go).
	linkSameHost = "samehost"
)

// Defaults of the cross-target links: 1000 round trips (a browser's take
// about half a millisecond) and about 16 MiB streamed per bandwidth size
// and round (browsers move 5–25 MB/s), both scaled with -iters.
const (
	crossIters       = 1000
	crossStreamBytes = 16 << 20
)

// isCross reports whether link is a cross-target link.
func isCross(link string) bool {
	return link == linkBrowserNative || link == linkBrowserBrowser || link == linkWASINative
}

// plan is how one size of a point-to-point benchmark runs: iters timed
// iterations after skip untimed ones, each moving window messages (1 for
// latency).
type plan struct {
	iters, skip, window int
}

// bench is one OSU-style benchmark: run performs one size's plan between
// ranks 0 and 1 and returns, on rank 0, the figure to print.
type bench struct {
	name    string
	column  string
	plan    func(link string, base, size int) plan
	run     func(w *meshmpi.Comm, buf []byte, p plan) (float64, error)
	scratch int  // buffers the benchmark needs, in multiples of the largest size
	lower   bool // a lower figure is better (latency)
}

// best returns the better of two figures of b; ok is false for a first.
func (b bench) best(prev, fig float64, ok bool) float64 {
	if !ok || b.lower && fig < prev || !b.lower && fig > prev {
		return fig
	}
	return prev
}

var benches = map[string]bench{
	"latency": {"latency", "Latency (us)", latencyPlan, latency, 1, true},
	"bw":      {"bw", "Bandwidth (MB/s)", bwPlan, bandwidth, 2, false},
}

// config is one meshbench run, its flags checked and the link's defaults
// applied.
type config struct {
	mode, link string
	latSizes   []int // latency and raw latency sizes
	bwSizes    []int // bw and raw bw sizes
	iters      int
	rounds     int // runs of each latency, bw and raw size; the best is printed
	coll       collConfig
	readyRanks []int  // -mode ready
	reps       int    // -mode ready
	costRanks  []int  // -mode conncost
	mpich      string // -mpich: MPICH's run.sh, for -link samehost and -mode coll
	openmpi    bool   // -openmpi: -mode coll's reference runs Open MPI too
	wasi       bool   // -wasi: WASI ranks of one process too, for -link samehost
}

func main() {
	if sameHostChild() {
		return
	}
	cfg, err := parseArgs(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err == nil {
		err = run(os.Stdout, cfg)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "meshbench:", err)
		os.Exit(1)
	}
}

// parseArgs reads the command line. Flags left unset take the link's
// defaults: over webrtc, 8 B latency, bw at 64 KiB, 1 MiB and 16 MiB, and
// allreduce of 8 B on 4 ranks.
func parseArgs(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("meshbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	mode := fs.String("mode", "all", "benchmark: latency, bw, raw, coll, ready, conncost or all")
	link := fs.String("link", linkMemory, "link between the ranks: memory, webrtc, browser-native, browser-browser, wasi-native or samehost")
	mpich := fs.String("mpich", "", "-link samehost, or -mode coll on memory links: MPICH's reference run.sh, run in every round (-mode coll: on each -ranks count, medians of -rounds, default 5)")
	openmpi := fs.Bool("openmpi", false, "-mode coll with -mpich: run the reference with Open MPI too; the ratio is to the better of the two")
	wasi := fs.Bool("wasi", false, "-link samehost: also two WASI ranks of one host process, in every round")
	minSize := fs.Int("min", 1, "smallest message size in bytes (0 adds the empty message; latency, bw, raw)")
	maxSize := fs.Int("max", 16<<20, "largest message size in bytes (latency, bw, raw)")
	iters := fs.Int("iters", defaultIters, "iterations of sizes up to 8 KiB; larger sizes run proportionally fewer, collectives a tenth")
	colls := fs.String("colls", strings.Join(collNames, ","), "collectives of -mode coll (webrtc default: allreduce)")
	forms := fs.String("forms", strings.Join(formNames, ","), "forms of -mode coll: blocking, nonblocking (I… + Wait), persistent (…Init, then Start + Wait)")
	ranks := fs.String("ranks", "2,4,8,16", "world sizes of -mode coll (webrtc default: 4)")
	collSizes := fs.String("sizes", "8,1024,65536,1048576", "per-rank message sizes in bytes of -mode coll (webrtc default: 8)")
	collAlg := fs.String("alg", "", "-mode coll: force this algorithm (meshmpi.Algorithm) on every collective of -colls; empty: the rules' choice")
	collSeg := fs.Int("segment", 0, "-mode coll: bound a message of the segmenting algorithms to this many bytes (meshmpi.Segment); 0: none")
	readyRanks := fs.String("ready-ranks", "4,16", "job sizes of -mode ready")
	rounds := fs.Int("rounds", 1, "runs of each latency, bw and raw size; the best is printed (webrtc default: 3, alternating meshmpi and raw)")
	reps := fs.Int("reps", 5, "repetitions of each job size of -mode ready")
	costRanks := fs.String("cost-ranks", "2,9", "job sizes of -mode conncost (rank 0 connects to every other rank)")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	cfg := config{mode: *mode, link: *link, iters: *iters, rounds: *rounds, reps: *reps, mpich: *mpich, openmpi: *openmpi, wasi: *wasi}
	switch cfg.mode {
	case "latency", "bw", "raw", "coll", "ready", "conncost", "all":
	default:
		return cfg, fmt.Errorf("-mode %q: want latency, bw, raw, coll, ready, conncost or all", cfg.mode)
	}
	switch {
	case cfg.link == linkMemory || cfg.link == linkWebRTC:
	case isCross(cfg.link) || cfg.link == linkSameHost:
		if cfg.mode != "latency" && cfg.mode != "bw" && cfg.mode != "all" {
			return cfg, fmt.Errorf("-link %s measures latency and bw: -mode %s is for memory and webrtc links", cfg.link, cfg.mode)
		}
	default:
		return cfg, fmt.Errorf("-link %q: want memory, webrtc, browser-native, browser-browser, wasi-native or samehost", cfg.link)
	}
	if *minSize < 0 || *maxSize < *minSize || *maxSize > 1<<30 {
		return cfg, fmt.Errorf("sizes %d to %d: want 0 ≤ min ≤ max ≤ 1 GiB", *minSize, *maxSize)
	}
	if cfg.iters < 1 {
		return cfg, fmt.Errorf("-iters %d: want at least 1", cfg.iters)
	}
	if cfg.rounds < 1 {
		return cfg, fmt.Errorf("-rounds %d: want at least 1", cfg.rounds)
	}
	if cfg.reps < 1 {
		return cfg, fmt.Errorf("-reps %d: want at least 1", cfg.reps)
	}
	cfg.latSizes = sizes(*minSize, *maxSize)
	cfg.bwSizes = cfg.latSizes
	if cfg.link == linkWebRTC || cfg.mode == "raw" { // raw pion is WebRTC whatever -link says
		if !set["min"] && !set["max"] {
			cfg.latSizes = []int{8}
			cfg.bwSizes = []int{64 << 10, 1 << 20, 16 << 20}
		}
		if !set["rounds"] {
			cfg.rounds = webrtcRounds
		}
	}
	if cfg.mpich != "" && cfg.link != linkMemory && cfg.link != linkSameHost {
		return cfg, fmt.Errorf("-mpich is for -link samehost and for -mode coll on memory links (-link %s)", cfg.link)
	}
	if cfg.mpich != "" && cfg.link == linkMemory {
		if cfg.mode != "coll" {
			return cfg, fmt.Errorf("-mpich on memory links is for -mode coll (-mode %s)", cfg.mode)
		}
		if !set["rounds"] {
			cfg.rounds = 5
		}
	}
	if cfg.openmpi && (cfg.mpich == "" || cfg.mode != "coll") {
		return cfg, fmt.Errorf("-openmpi runs -mode coll's reference: give -mpich the run.sh too")
	}
	if cfg.link == linkSameHost {
		if !set["min"] && !set["max"] {
			cfg.latSizes = []int{8}
			cfg.bwSizes = []int{64 << 10, 1 << 20}
		}
		if !set["rounds"] {
			cfg.rounds = 5
		}
	}
	if isCross(cfg.link) {
		if !set["min"] && !set["max"] {
			cfg.latSizes = []int{8}
			cfg.bwSizes = []int{64 << 10, 1 << 20}
		}
		if !set["iters"] {
			cfg.iters = crossIters
		}
		if !set["rounds"] {
			cfg.rounds = webrtcRounds
		}
	}
	if cfg.link == linkWebRTC {
		if !set["colls"] {
			*colls = "allreduce"
		}
		if !set["ranks"] {
			*ranks = "4"
		}
		if !set["sizes"] {
			*collSizes = "8"
		}
	}
	var err error
	if cfg.coll, err = parseCollConfig(*colls, *forms, *ranks, *collSizes, cfg.iters); err != nil {
		return cfg, err
	}
	if *collSeg < 0 {
		return cfg, fmt.Errorf("-segment: %d is negative", *collSeg)
	}
	cfg.coll.alg, cfg.coll.segment = *collAlg, *collSeg
	if cfg.readyRanks, err = parseInts("ready-ranks", *readyRanks, 2, 1024); err != nil {
		return cfg, err
	}
	if cfg.costRanks, err = parseInts("cost-ranks", *costRanks, 2, 1024); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// run runs cfg's benchmarks and prints their tables to out. Modes:
// latency and bw (over webrtc each followed by the raw pion baseline and
// the comparison), raw (the baseline alone), coll, ready, conncost; all is
// latency, bw and coll, and over webrtc also ready and conncost.
func run(out io.Writer, cfg config) (err error) {
	if isCross(cfg.link) {
		return runCross(out, cfg)
	}
	if cfg.link == linkSameHost {
		return runSameHost(out, cfg, cfg.mpich, cfg.wasi)
	}
	var (
		todo           []bench
		coll           bool
		ready, conncst bool
	)
	webrtc := cfg.link == linkWebRTC
	switch cfg.mode {
	case "all":
		todo, coll = []bench{benches["latency"], benches["bw"]}, true
		ready, conncst = webrtc, webrtc
	case "latency", "bw":
		todo = []bench{benches[cfg.mode]}
	case "raw": // below
	case "coll":
		coll = true
	case "ready":
		ready = true
	case "conncost":
		conncst = true
	default:
		return fmt.Errorf("mode %q: want latency, bw, raw, coll, ready, conncost or all", cfg.mode)
	}

	var jobs *jobServer // the embedded signaling server, for every WebRTC job
	if webrtc || ready || conncst {
		if jobs, err = startJobServer(); err != nil {
			return err
		}
		defer func() {
			if cerr := jobs.close(); cerr != nil && err == nil {
				err = fmt.Errorf("signaling server: %w", cerr)
			}
		}()
	}
	lk := &links{name: cfg.link}
	if webrtc {
		lk.jobs = jobs
	}

	tables := 0
	sep := func() {
		if tables > 0 {
			fmt.Fprintln(out)
		}
		tables++
	}
	if cfg.mode == "raw" { // the baseline alone
		for _, c := range []struct {
			b     bench
			sizes []int
		}{{benches["latency"], cfg.latSizes}, {benches["bw"], cfg.bwSizes}} {
			sep()
			if err := runRaw(out, c.b, c.sizes, cfg.iters, cfg.rounds); err != nil {
				return fmt.Errorf("raw %s: %w", c.b.name, err)
			}
		}
	}
	// Over webrtc the raw baseline runs interleaved: after each of
	// meshmpi's rounds of a size, rank 0 runs a round of the raw pair's
	// while rank 1 waits, so both see the same machine load and heap.
	var pair *rawPair
	if webrtc && len(todo) > 0 {
		if pair, err = newRawPair(context.Background()); err != nil {
			return err
		}
		defer pair.close()
	}
	var cmp []comparison
	for _, b := range todo {
		sz := cfg.latSizes
		if b.name == "bw" {
			sz = cfg.bwSizes
		}
		c := comparison{bench: b, sizes: sz}
		var after func(i, size, round int) error
		if pair != nil {
			rb := newRawBench(pair, b, sz, cfg.iters)
			c.raw = make([]float64, len(sz))
			after = func(i, size, round int) error {
				fig, err := rb.measure(size)
				if err != nil {
					return fmt.Errorf("raw pion, size %d: %w", size, err)
				}
				c.raw[i] = b.best(c.raw[i], fig, round > 0)
				return nil
			}
		}
		sep()
		if c.mesh, err = runBench(out, b, lk, sz, cfg.iters, cfg.rounds, after); err != nil {
			return fmt.Errorf("%s: %w", b.name, err)
		}
		if pair != nil {
			sep()
			printRaw(out, b, sz, c.raw, cfg.rounds)
		}
		cmp = append(cmp, c)
	}
	if pair != nil {
		sep()
		printComparison(out, cmp)
	}
	if coll && cfg.mpich != "" {
		impls := []string{"mpich"}
		if cfg.openmpi {
			impls = append(impls, "openmpi")
		}
		sep()
		if err := runCollReference(out, lk, cfg.coll, cfg.rounds, cfg.mpich, impls); err != nil {
			return fmt.Errorf("coll: %w", err)
		}
	} else if coll {
		sep()
		if err := runColl(out, lk, cfg.coll); err != nil {
			return fmt.Errorf("coll: %w", err)
		}
	}
	if ready {
		sep()
		if err := runReady(out, jobs, cfg.readyRanks, cfg.reps); err != nil {
			return fmt.Errorf("ready: %w", err)
		}
	}
	if conncst {
		sep()
		if err := runConnCost(out, jobs, cfg.costRanks); err != nil {
			return fmt.Errorf("conncost: %w", err)
		}
	}
	return nil
}

// sizes returns lo, 2·lo, 4·lo … up to hi; a lo of 0 gives 0, 1, 2, 4 ….
func sizes(lo, hi int) []int {
	var s []int
	if lo == 0 {
		s, lo = append(s, 0), 1
	}
	for n := lo; n <= hi; n *= 2 {
		s = append(s, n)
	}
	return s
}

// runBench prints b's table for sizes over lk's links and returns rank
// 0's figures, one per size: the best of rounds runs. after, if not nil,
// runs on rank 0 after each round of each size, while rank 1 waits.
func runBench(out io.Writer, b bench, lk *links, sizes []int, base, rounds int, after func(i, size, round int) error) ([]float64, error) {
	printTitle(out, b, lk.name, rounds)
	largest := 0
	if len(sizes) > 0 {
		largest = sizes[len(sizes)-1]
	}
	figs := make([]float64, len(sizes))
	err := lk.run(2, func(w *meshmpi.Comm) error {
		buf := make([]byte, b.scratch*largest)
		for i, size := range sizes {
			p := b.plan(lk.name, base, size)
			for r := range rounds {
				if err := barrier(w); err != nil {
					return err
				}
				if i == 0 && r == 0 && w.Rank() == 0 {
					printPath(out, w) // a comment before the rows, as OSU tables have them
				}
				figure, err := b.run(w, buf[:b.scratch*size], p)
				if err != nil {
					return fmt.Errorf("size %d: %w", size, err)
				}
				if w.Rank() != 0 {
					continue
				}
				figs[i] = b.best(figs[i], figure, r > 0)
				if after != nil {
					if err := after(i, size, r); err != nil {
						return err
					}
				}
			}
			if w.Rank() == 0 {
				fmt.Fprintf(out, "%10d%20.2f\n", size, figs[i])
			}
		}
		return nil
	})
	return figs, err
}

// printPath notes in a table's header how rank 0 reached rank 1: the link kind
// and, over WebRTC, the ICE candidate pair and its round trip.
func printPath(out io.Writer, w *meshmpi.Comm) {
	li, err := w.LinkInfo(1)
	switch {
	case err != nil:
		fmt.Fprintf(out, "# path: %v\n", err)
	case li.Local != "":
		fmt.Fprintf(out, "# path: %s %s/%s %s → %s, ICE RTT %v\n", li.Link, li.Local, li.Remote, li.LocalAddr, li.RemoteAddr, li.RTT)
	case li.Link != "":
		fmt.Fprintf(out, "# path: %s\n", li.Link)
	}
}

// printTitle prints the title and header of b's table over link.
func printTitle(out io.Writer, b bench, link string, rounds int) {
	fmt.Fprintf(out, "# meshmpi %s (%s links, 2 ranks%s)\n", b.name, link, bestOf(rounds))
	fmt.Fprintf(out, "%-2s%8s%20s\n", "#", "Size", b.column)
}

// bestOf notes in a table's title that it shows the best of several runs.
func bestOf(rounds int) string {
	if rounds == 1 {
		return ""
	}
	return fmt.Sprintf(", best of %d", rounds)
}

// barrier synchronizes the two ranks with an empty exchange.
func barrier(w *meshmpi.Comm) error {
	_, err := meshmpi.Sendrecv(w, []byte{}, 1-w.Rank(), 0, []byte{}, 1-w.Rank(), 0)
	return err
}

// scaled returns base iterations up to largeSize, proportionally fewer
// above, and at least floor.
func scaled(base, size, floor int) int {
	if size > largeSize {
		base = int(int64(base) * largeSize / int64(size))
	}
	return max(base, floor)
}

// latencyPlan runs base iterations up to 8 KiB, proportionally fewer above,
// on every link: over WebRTC 8 B take about 80 µs a round trip.
func latencyPlan(_ string, base, size int) plan {
	it := scaled(base, size, minLatency)
	return plan{iters: it, skip: max(it/10, 1), window: 1}
}

// bwPlan runs a tenth of the latency iterations, each moving a window of
// 64 messages. Over WebRTC a window holds at most webrtcWindowBytes and a
// size moves about webrtcBWBytes a round (scaled with base; at least
// minBWWebRTC windows), never more than the memory plan.
func bwPlan(link string, base, size int) plan {
	it := scaled(max(base/10, 1), size, minBW)
	win := window
	if link == linkWebRTC {
		win = min(max(webrtcWindowBytes/max(size, 1), 1), window)
		budget := int(int64(webrtcBWBytes) * int64(base) / defaultIters / int64(win*max(size, 1)))
		it = max(min(it, budget), minBWWebRTC)
	}
	return plan{iters: it, skip: max(it/10, 1), window: win}
}

// latency is osu_latency: ping-pong, one-way latency in µs.
func latency(w *meshmpi.Comm, buf []byte, p plan) (float64, error) {
	var start time.Time
	for i := range p.iters + p.skip {
		if i == p.skip {
			start = time.Now()
		}
		if w.Rank() == 0 {
			if err := meshmpi.Send(w, buf, 1, tagData); err != nil {
				return 0, err
			}
			if _, err := meshmpi.Recv(w, buf, 1, tagData); err != nil {
				return 0, err
			}
		} else {
			if _, err := meshmpi.Recv(w, buf, 0, tagData); err != nil {
				return 0, err
			}
			if err := meshmpi.Send(w, buf, 0, tagData); err != nil {
				return 0, err
			}
		}
	}
	elapsed := time.Since(start)
	return elapsed.Seconds() * 1e6 / float64(2*p.iters), nil
}

// bandwidth is osu_bw: windows of nonblocking sends, each answered by an
// ack, in MB/s (10^6 bytes). buf holds the send and the receive buffer.
func bandwidth(w *meshmpi.Comm, buf []byte, p plan) (float64, error) {
	size := len(buf) / 2
	sbuf, rbuf := buf[:size], buf[size:]
	ack := make([]byte, ackBytes)
	reqs := make([]*meshmpi.Request, p.window)
	var start time.Time
	for i := range p.iters + p.skip {
		if i == p.skip {
			start = time.Now()
		}
		for j := range reqs {
			var err error
			if w.Rank() == 0 {
				reqs[j], err = meshmpi.Isend(w, sbuf, 1, tagData)
			} else {
				reqs[j], err = meshmpi.Irecv(w, rbuf, 0, tagData)
			}
			if err != nil {
				return 0, errors.Join(err, meshmpi.Waitall(context.Background(), reqs[:j], nil))
			}
		}
		if err := meshmpi.Waitall(context.Background(), reqs, nil); err != nil {
			return 0, err
		}
		var err error
		if w.Rank() == 0 {
			_, err = meshmpi.Recv(w, ack, 1, tagAck)
		} else {
			err = meshmpi.Send(w, ack, 0, tagAck)
		}
		if err != nil {
			return 0, err
		}
	}
	elapsed := time.Since(start)
	return float64(size) * float64(p.window) * float64(p.iters) / elapsed.Seconds() / 1e6, nil
}
