// Scale runs the collectives a large job leans on, once each, and reports
// what they cost: how long the ranks took to be ready (from the start of
// each rank's process, or of the in-process world, to its rank function),
// an 8-byte Allreduce, a Barrier, an Alltoall of 8 bytes a pair, and the
// peak resident memory of the rank processes. It is the program issue 20's
// scale runs use (meshrun --native -n 256 ./examples/scale).
//
// Every rank checks the results against their closed forms: the Allreduce
// of the ranks' numbers is n(n-1)/2, and the Alltoall gives rank r the
// value s·n + r from each rank s. Rank 0 prints one line.
//
// Run it with
//
//	go run ./examples/scale -n 64
//	meshrun --native -n 256 ./examples/scale
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/meshmpi/meshmpi"
)

// start is when the process started, near enough: package variables are
// set before main runs.
var start = time.Now()

// withAlltoall: the Alltoall links every pair, which a job over WebRTC
// pays with n(n-1)/2 peer connections
var withAlltoall = flag.Bool("alltoall", true, "run the Alltoall")

func main() {
	n := flag.Int("n", 4, "number of in-process ranks (a rank launched by meshrun joins its job instead)")
	flag.Parse()
	if err := meshmpi.Main(*n, scale); err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}

func scale(world *meshmpi.Comm) error {
	ready := time.Since(start)
	rank, n := world.Rank(), world.Size()
	sum := []int64{0}
	t0 := time.Now()
	if err := meshmpi.Allreduce(world, []int64{int64(rank)}, sum, meshmpi.Sum); err != nil {
		return err
	}
	allreduce := time.Since(t0)
	if want := int64(n) * int64(n-1) / 2; sum[0] != want {
		return fmt.Errorf("rank %d: allreduce gave %d, want %d", rank, sum[0], want)
	}
	t0 = time.Now()
	if err := meshmpi.Barrier(world); err != nil {
		return err
	}
	barrier := time.Since(t0)
	var alltoall time.Duration
	if *withAlltoall {
		send, recv := make([]int64, n), make([]int64, n)
		for i := range send {
			send[i] = int64(rank*n + i)
		}
		t0 = time.Now()
		if err := meshmpi.Alltoall(world, send, recv); err != nil {
			return err
		}
		alltoall = time.Since(t0)
		for s, v := range recv {
			if v != int64(s*n+rank) {
				return fmt.Errorf("rank %d: alltoall gave %d from rank %d, want %d", rank, v, s, s*n+rank)
			}
		}
	}
	// the slowest rank's figures, and the memory of all of them
	mine := []int64{int64(ready), int64(allreduce), int64(barrier), int64(alltoall), peakRSS(), peakRSS()}
	all := make([]int64, len(mine))
	if err := meshmpi.Reduce(world, mine[:5], all[:5], meshmpi.Max, 0); err != nil {
		return err
	}
	if err := meshmpi.Reduce(world, mine[5:], all[5:], meshmpi.Sum, 0); err != nil {
		return err
	}
	if rank == 0 {
		fmt.Printf("%d ranks: ready %v, allreduce 8 B %v, barrier %v, alltoall 8 B %v (slowest rank); peak RSS %.1f MiB a rank at most, %.1f MiB in all\n",
			n, time.Duration(all[0]).Round(time.Millisecond), time.Duration(all[1]).Round(time.Microsecond),
			time.Duration(all[2]).Round(time.Microsecond), time.Duration(all[3]).Round(time.Microsecond),
			float64(all[4])/(1<<20), float64(all[5])/(1<<20))
	}
	return nil
}

// peakRSS is the process's peak resident memory in bytes (VmHWM), 0
// where /proc does not say. The ranks of an in-process world share one
// process, so their sum counts it n times.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			kb, err := strconv.ParseInt(string(bytes.Fields(v)[0]), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
