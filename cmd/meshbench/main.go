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
)

// bench is one OSU-style benchmark: run performs iters timed iterations
// (after skip untimed ones) of one size between ranks 0 and 1 and returns,
// on rank 0, the figure to print.
type bench struct {
	name    string
	column  string
	iters   func(base, size int) int
	run     func(w *meshmpi.Comm, buf []byte, iters, skip int) (float64, error)
	scratch int // buffers the benchmark needs, in multiples of the largest size
}

var benches = map[string]bench{
	"latency": {"latency", "Latency (us)", latencyIters, latency, 1},
	"bw":      {"bw", "Bandwidth (MB/s)", bwIters, bandwidth, 2},
}

func main() {
	mode := flag.String("mode", "all", "benchmark: latency, bw, coll or all")
	link := flag.String("link", "memory", "link between the ranks: memory")
	minSize := flag.Int("min", 1, "smallest message size in bytes (0 adds the empty message; latency, bw)")
	maxSize := flag.Int("max", 16<<20, "largest message size in bytes (latency, bw)")
	iters := flag.Int("iters", 10000, "iterations of sizes up to 8 KiB; larger sizes run proportionally fewer, collectives a tenth")
	colls := flag.String("colls", strings.Join(collNames, ","), "collectives of -mode coll")
	forms := flag.String("forms", strings.Join(formNames, ","), "forms of -mode coll: blocking, nonblocking (I… + Wait), persistent (…Init, then Start + Wait)")
	ranks := flag.String("ranks", "2,4,8,16", "world sizes of -mode coll")
	collSizes := flag.String("sizes", "8,1024,65536,1048576", "per-rank message sizes in bytes of -mode coll")
	flag.Parse()

	cfg, err := parseCollConfig(*colls, *forms, *ranks, *collSizes, *iters)
	if err == nil {
		err = run(os.Stdout, *mode, *link, *minSize, *maxSize, *iters, cfg)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "meshbench:", err)
		os.Exit(1)
	}
}

func run(out io.Writer, mode, link string, minSize, maxSize, iters int, coll collConfig) error {
	if link != "memory" {
		return fmt.Errorf("link %q not available yet", link)
	}
	var todo []bench
	switch mode {
	case "all":
		todo = []bench{benches["latency"], benches["bw"]}
	case "latency", "bw":
		todo = []bench{benches[mode]}
	case "coll":
	default:
		return fmt.Errorf("mode %q: want latency, bw, coll or all", mode)
	}
	if minSize < 0 || maxSize < minSize || maxSize > 1<<30 {
		return fmt.Errorf("sizes %d to %d: want 0 ≤ min ≤ max ≤ 1 GiB", minSize, maxSize)
	}
	if iters < 1 {
		return fmt.Errorf("iters %d: want at least 1", iters)
	}
	for i, b := range todo {
		if i > 0 {
			fmt.Fprintln(out)
		}
		if err := runBench(out, b, link, sizes(minSize, maxSize), iters); err != nil {
			return fmt.Errorf("%s: %w", b.name, err)
		}
	}
	if mode == "coll" || mode == "all" {
		if len(todo) > 0 {
			fmt.Fprintln(out)
		}
		if err := runColl(out, link, coll); err != nil {
			return fmt.Errorf("coll: %w", err)
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

func runBench(out io.Writer, b bench, link string, sizes []int, base int) error {
	fmt.Fprintf(out, "# meshmpi %s (%s links, 2 ranks)\n", b.name, link)
	fmt.Fprintf(out, "%-2s%8s%20s\n", "#", "Size", b.column)
	largest := 0
	if len(sizes) > 0 {
		largest = sizes[len(sizes)-1]
	}
	return meshmpi.Run(2, func(w *meshmpi.Comm) error {
		buf := make([]byte, b.scratch*largest)
		for _, size := range sizes {
			iters := b.iters(base, size)
			skip := max(iters/10, 1)
			if err := barrier(w); err != nil {
				return err
			}
			figure, err := b.run(w, buf[:b.scratch*size], iters, skip)
			if err != nil {
				return fmt.Errorf("size %d: %w", size, err)
			}
			if w.Rank() == 0 {
				fmt.Fprintf(out, "%10d%20.2f\n", size, figure)
			}
		}
		return nil
	})
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

func latencyIters(base, size int) int { return scaled(base, size, minLatency) }

// bwIters runs a tenth of the latency iterations: each moves a window of
// 64 messages.
func bwIters(base, size int) int { return scaled(max(base/10, 1), size, minBW) }

// latency is osu_latency: ping-pong, one-way latency in µs.
func latency(w *meshmpi.Comm, buf []byte, iters, skip int) (float64, error) {
	var start time.Time
	for i := range iters + skip {
		if i == skip {
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
	return elapsed.Seconds() * 1e6 / float64(2*iters), nil
}

// bandwidth is osu_bw: windows of nonblocking sends, each answered by an
// ack, in MB/s (10^6 bytes). buf holds the send and the receive buffer.
func bandwidth(w *meshmpi.Comm, buf []byte, iters, skip int) (float64, error) {
	size := len(buf) / 2
	sbuf, rbuf := buf[:size], buf[size:]
	ack := make([]byte, ackBytes)
	reqs := make([]*meshmpi.Request, window)
	var start time.Time
	for i := range iters + skip {
		if i == skip {
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
	return float64(size) * window * float64(iters) / elapsed.Seconds() / 1e6, nil
}
