package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/meshmpi/meshmpi"
)

// The collectives and forms -mode coll knows, in their default order.
var (
	collNames = []string{"barrier", "bcast", "reduce", "allreduce", "allgather", "alltoall", "scan", "reducescatterblock"}
	formNames = []string{"blocking", "nonblocking", "persistent"}
)

const (
	minColl     = 10   // fewest timed iterations of a collective size
	collRankDiv = 4    // above this many ranks, iterations scale down with the rank count
	collBase    = 1000 // timed iterations of small sizes with the default -iters (osu_allreduce's)
)

// collConfig is what -mode coll runs: a table per collective, rank count
// and form, a line per size.
type collConfig struct {
	colls, forms []string
	ranks, sizes []int
	iters        int    // timed iterations of sizes up to largeSize with few ranks
	alg          string // -alg: the algorithm forced on every call ("": the rules')
	segment      int    // -segment: meshmpi.Segment's bound (0: none)
}

// hints returns the hints -alg and -segment give every call.
func (c collConfig) hints() []meshmpi.Hint {
	var hs []meshmpi.Hint
	if c.alg != "" {
		hs = append(hs, meshmpi.Algorithm(c.alg))
	}
	if c.segment > 0 {
		hs = append(hs, meshmpi.Segment(c.segment))
	}
	return hs
}

// parseCollConfig checks the coll flags; iters is -iters (point-to-point
// iterations), of which the collectives run a tenth.
func parseCollConfig(colls, forms, ranks, sizes string, iters int) (collConfig, error) {
	cfg := collConfig{iters: max(iters/10, 1)}
	var err error
	if cfg.colls, err = parseNames("colls", colls, collNames); err != nil {
		return cfg, err
	}
	if cfg.forms, err = parseNames("forms", forms, formNames); err != nil {
		return cfg, err
	}
	if cfg.ranks, err = parseInts("ranks", ranks, 1, 1024); err != nil {
		return cfg, err
	}
	if cfg.sizes, err = parseInts("sizes", sizes, 1, 1<<30); err != nil {
		return cfg, err
	}
	for _, name := range []string{"reduce", "allreduce", "scan", "reducescatterblock"} {
		if !slices.Contains(cfg.colls, name) {
			continue
		}
		for _, s := range cfg.sizes {
			if s%8 != 0 {
				return cfg, fmt.Errorf("-sizes: %s reduces float64s: %d is not a multiple of 8", name, s)
			}
		}
	}
	return cfg, nil
}

func parseNames(flag, list string, known []string) ([]string, error) {
	var out []string
	for name := range strings.SplitSeq(list, ",") {
		name = strings.TrimSpace(name)
		if !slices.Contains(known, name) {
			return nil, fmt.Errorf("-%s: %q: want some of %s", flag, name, strings.Join(known, ","))
		}
		out = append(out, name)
	}
	return out, nil
}

func parseInts(flag, list string, lo, hi int) ([]int, error) {
	var out []int
	for s := range strings.SplitSeq(list, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || v < lo || v > hi {
			return nil, fmt.Errorf("-%s: %q: want integers from %d to %d", flag, s, lo, hi)
		}
		out = append(out, v)
	}
	return out, nil
}

// collIters is osu_allreduce's iteration count, base up to largeSize and
// proportionally fewer above, further divided by ranks/collRankDiv for
// large worlds: on a machine with fewer cores than ranks, a collective's
// cost grows with both.
func collIters(base, ranks, size int) int {
	it := scaled(base, size, minColl)
	if ranks > collRankDiv {
		it = it * collRankDiv / ranks
	}
	return max(it, minColl)
}

// runColl prints the coll tables.
func runColl(out io.Writer, lk *links, cfg collConfig) error {
	first := true
	for _, name := range cfg.colls {
		sizes := cfg.sizes
		if name == "barrier" {
			sizes = []int{0}
		}
		for _, n := range cfg.ranks {
			for _, form := range cfg.forms {
				if !first {
					fmt.Fprintln(out)
				}
				first = false
				ranks := "ranks"
				if n == 1 {
					ranks = "rank"
				}
				alg := ""
				if cfg.alg != "" {
					alg = ", algorithm " + cfg.alg
				}
				if cfg.segment > 0 {
					alg += fmt.Sprintf(", segment %d", cfg.segment)
				}
				fmt.Fprintf(out, "# meshmpi %s latency, %s (%s links, %d %s%s)\n", name, form, lk.name, n, ranks, alg)
				fmt.Fprintf(out, "%-10s%18s\n", "# Size", "Avg Latency(us)")
				figs, err := collTable(lk, name, form, n, sizes, cfg.iters, cfg.hints())
				if err != nil {
					return fmt.Errorf("%s %s on %d ranks: %w", name, form, n, err)
				}
				for i, size := range sizes {
					fmt.Fprintf(out, "%-10d%18.2f\n", size, figs[i])
				}
			}
		}
	}
	return nil
}

// collTable runs one table in one world of n ranks and returns its
// figure per size (µs). As in the OSU collective benchmarks, every rank
// times each call on its own, ranks meet in a barrier between calls
// (untimed; not for barrier itself), and the figure is the mean over
// ranks of each rank's mean latency.
func collTable(lk *links, name, form string, n int, sizes []int, base int, hs []meshmpi.Hint) ([]float64, error) {
	ctx := context.Background()
	figs := make([]float64, len(sizes))
	return figs, lk.run(n, func(w *meshmpi.Comm) error {
		for si, size := range sizes {
			ops, err := newCollOps(w, name, size, hs...)
			if err != nil {
				return err
			}
			var req *meshmpi.Request
			if form == "persistent" {
				if req, err = ops.persistent(); err != nil {
					return fmt.Errorf("size %d: %w", size, err)
				}
			}
			step := func() error {
				switch form {
				case "blocking":
					return ops.blocking()
				case "nonblocking":
					r, err := ops.nonblocking()
					if err != nil {
						return err
					}
					_, err = r.Wait(ctx)
					return err
				}
				if err := req.Start(); err != nil {
					return err
				}
				_, err := req.Wait(ctx)
				return err
			}

			iters := collIters(base, n, size)
			skip := max(iters/10, 1)
			if err := meshmpi.Barrier(w); err != nil {
				return err
			}
			var total time.Duration
			for i := range iters + skip {
				t0 := time.Now()
				if err := step(); err != nil {
					return fmt.Errorf("size %d: %w", size, err)
				}
				if i >= skip {
					total += time.Since(t0)
				}
				if name != "barrier" {
					if err := meshmpi.Barrier(w); err != nil {
						return err
					}
				}
			}
			if req != nil {
				if err := req.Free(); err != nil {
					return err
				}
			}

			mine, sum := []float64{total.Seconds() * 1e6 / float64(iters)}, []float64{0}
			if err := meshmpi.Reduce(w, mine, sum, meshmpi.Sum, 0); err != nil {
				return err
			}
			if w.Rank() == 0 {
				figs[si] = sum[0] / float64(n)
			}
		}
		return nil
	})
}

// collOps is one collective's three forms on one rank's buffers.
type collOps struct {
	blocking    func() error
	nonblocking func() (*meshmpi.Request, error)
	persistent  func() (*meshmpi.Request, error) // the …Init call
}

// newCollOps allocates one rank's buffers for a collective of size bytes
// per rank: the bcast buffer (root 0), the reduce (root 0) or allreduce
// vector (float64, Sum),
// the allgather contribution, the alltoall block sent to each rank
// (osu_alltoall's size), the scan vector (float64, Sum), or the
// reducescatterblock input (float64, Sum), of which each rank gets
// size/n bytes (osu_reduce_scatter's size; a remainder is left out).
func newCollOps(w *meshmpi.Comm, name string, size int, hs ...meshmpi.Hint) (collOps, error) {
	n := w.Size()
	switch name {
	case "barrier":
		return collOps{
			func() error { return meshmpi.Barrier(w, hs...) },
			func() (*meshmpi.Request, error) { return meshmpi.Ibarrier(w, hs...) },
			func() (*meshmpi.Request, error) { return meshmpi.BarrierInit(w, hs...) },
		}, nil
	case "bcast":
		buf := make([]byte, size)
		return collOps{
			func() error { return meshmpi.Bcast(w, buf, 0, hs...) },
			func() (*meshmpi.Request, error) { return meshmpi.Ibcast(w, buf, 0, hs...) },
			func() (*meshmpi.Request, error) { return meshmpi.BcastInit(w, buf, 0, hs...) },
		}, nil
	case "reduce":
		send, recv := make([]float64, size/8), make([]float64, size/8)
		for i := range send {
			send[i] = float64(w.Rank() + i)
		}
		return collOps{
			func() error { return meshmpi.Reduce(w, send, recv, meshmpi.Sum, 0, hs...) },
			func() (*meshmpi.Request, error) { return meshmpi.Ireduce(w, send, recv, meshmpi.Sum, 0, hs...) },
			func() (*meshmpi.Request, error) { return meshmpi.ReduceInit(w, send, recv, meshmpi.Sum, 0, hs...) },
		}, nil
	case "allreduce":
		send, recv := make([]float64, size/8), make([]float64, size/8)
		for i := range send {
			send[i] = float64(w.Rank() + i)
		}
		return collOps{
			func() error { return meshmpi.Allreduce(w, send, recv, meshmpi.Sum, hs...) },
			func() (*meshmpi.Request, error) { return meshmpi.Iallreduce(w, send, recv, meshmpi.Sum, hs...) },
			func() (*meshmpi.Request, error) { return meshmpi.AllreduceInit(w, send, recv, meshmpi.Sum, hs...) },
		}, nil
	case "allgather":
		send, recv := make([]byte, size), make([]byte, n*size)
		return collOps{
			func() error { return meshmpi.Allgather(w, send, recv, hs...) },
			func() (*meshmpi.Request, error) { return meshmpi.Iallgather(w, send, recv, hs...) },
			func() (*meshmpi.Request, error) { return meshmpi.AllgatherInit(w, send, recv, hs...) },
		}, nil
	case "alltoall":
		send, recv := make([]byte, n*size), make([]byte, n*size)
		return collOps{
			func() error { return meshmpi.Alltoall(w, send, recv, hs...) },
			func() (*meshmpi.Request, error) { return meshmpi.Ialltoall(w, send, recv, hs...) },
			func() (*meshmpi.Request, error) { return meshmpi.AlltoallInit(w, send, recv, hs...) },
		}, nil
	case "scan":
		send, recv := make([]float64, size/8), make([]float64, size/8)
		return collOps{
			func() error { return meshmpi.Scan(w, send, recv, meshmpi.Sum, hs...) },
			func() (*meshmpi.Request, error) { return meshmpi.Iscan(w, send, recv, meshmpi.Sum, hs...) },
			func() (*meshmpi.Request, error) { return meshmpi.ScanInit(w, send, recv, meshmpi.Sum, hs...) },
		}, nil
	case "reducescatterblock":
		block := size / 8 / n
		send, recv := make([]float64, block*n), make([]float64, block)
		return collOps{
			func() error { return meshmpi.ReduceScatterBlock(w, send, recv, meshmpi.Sum, hs...) },
			func() (*meshmpi.Request, error) {
				return meshmpi.IreduceScatterBlock(w, send, recv, meshmpi.Sum, hs...)
			},
			func() (*meshmpi.Request, error) {
				return meshmpi.ReduceScatterBlockInit(w, send, recv, meshmpi.Sum, hs...)
			},
		}, nil
	}
	return collOps{}, errors.New("no collective " + strconv.Quote(name))
}
