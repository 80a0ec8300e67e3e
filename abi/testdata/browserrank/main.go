// Command browserrank is the Go side of the C-in-WASI and browser job
// (cmd/meshrun's TestCWASIAndBrowser): built for GOOS=js it runs in a
// run page, the job's other ranks being testdata/browsermixed.c under
// WASI. It makes the calls of browsermixed.c in the same order through
// the Go API, checks every result, and then that its link to each other
// rank is a direct WebRTC link (a data channel, no TURN relay): the
// all-pairs step spoke to every rank, so each link has opened. It prints
// "mixed ok: Go rank R of N, K direct WebRTC links" and exits 0, or says
// what failed and exits 1.
package main

import (
	"context"
	"fmt"
	"os"
	"slices"

	"github.com/meshmpi/meshmpi"
)

// big is the all-pairs step's big message and the Reduce's length, in
// float64s: browsermixed.c's BIG.
const big = 50000

// word is what rank from sends rank to in element i of the all-pairs
// step's big message (browsermixed.c's word).
func word(from, to, i int) float64 { return float64(from)*1e6 + float64(to)*1e3 + float64(i%997) }

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "browserrank:", err)
		os.Exit(1)
	}
}

func run() error {
	w, err := meshmpi.Init()
	if err != nil {
		return err
	}
	rank, size := w.Rank(), w.Size()
	if err := allPairs(w); err != nil {
		return err
	}

	got := []int64{-1}
	next, prev := (rank+1)%size, (rank+size-1)%size
	st, err := meshmpi.Sendrecv(w, []int64{int64(rank)}, next, 5, got, prev, 5)
	if err != nil {
		return err
	}
	if got[0] != int64(prev) || st.Source != prev || st.Tag != 5 || st.Count != 1 {
		return fmt.Errorf("ring: %d from %d tag %d count %d", got[0], st.Source, st.Tag, st.Count)
	}

	sum := []int32{0}
	if err := meshmpi.Allreduce(w, []int32{int32(rank)}, sum, meshmpi.Sum); err != nil {
		return err
	}
	if int(sum[0]) != size*(size-1)/2 {
		return fmt.Errorf("allreduce %d", sum[0])
	}
	x := make([]float64, 4)
	if rank == 0 {
		for i := range x {
			x[i] = 1.5 * float64(i)
		}
	}
	if err := meshmpi.Bcast(w, x, 0); err != nil {
		return err
	}
	if x[3] != 4.5 {
		return fmt.Errorf("bcast %g", x[3])
	}
	mine, all := make([]float64, big), make([]float64, big)
	for i := range mine {
		mine[i] = float64(rank + i)
	}
	if err := meshmpi.Reduce(w, mine, all, meshmpi.Max, size-1); err != nil {
		return err
	}
	for i := 0; rank == size-1 && i < big; i++ {
		if all[i] != float64(size-1+i) {
			return fmt.Errorf("reduce[%d] %g", i, all[i])
		}
	}
	ranks := make([]int32, size)
	if err := meshmpi.Allgather(w, []int32{int32(rank)}, ranks); err != nil {
		return err
	}
	for i, r := range ranks {
		if int(r) != i {
			return fmt.Errorf("allgather[%d] = %d", i, r)
		}
	}
	if err := meshmpi.Barrier(w); err != nil {
		return err
	}

	links, err := directLinks(w)
	if err != nil {
		return err
	}
	fmt.Printf("mixed ok: Go rank %d of %d, %d direct WebRTC links\n", rank, size, links)
	return meshmpi.Finalize()
}

// allPairs sends every other rank a small message (tag 1) and a big one
// (tag 2) and receives the same from each, all posted at once, and
// checks what came.
func allPairs(w *meshmpi.Comm) error {
	rank, size := w.Rank(), w.Size()
	small := make([][]int32, size)
	bigIn := make([][]float64, size)
	var reqs []*meshmpi.Request
	for p := range size {
		if p == rank {
			continue
		}
		small[p], bigIn[p] = []int32{-1, -1}, make([]float64, big)
		r1, err := meshmpi.Irecv(w, small[p], p, 1)
		if err != nil {
			return err
		}
		r2, err := meshmpi.Irecv(w, bigIn[p], p, 2)
		if err != nil {
			return err
		}
		reqs = append(reqs, r1, r2)
	}
	for p := range size {
		if p == rank {
			continue
		}
		out := make([]float64, big)
		for i := range out {
			out[i] = word(rank, p, i)
		}
		r1, err := meshmpi.Isend(w, []int32{int32(rank), int32(size)}, p, 1)
		if err != nil {
			return err
		}
		r2, err := meshmpi.Isend(w, out, p, 2)
		if err != nil {
			return err
		}
		reqs = append(reqs, r1, r2)
	}
	if err := meshmpi.Waitall(context.Background(), reqs, nil); err != nil {
		return fmt.Errorf("all pairs: %w", err)
	}
	for p := range size {
		if p == rank {
			continue
		}
		if !slices.Equal(small[p], []int32{int32(p), int32(size)}) {
			return fmt.Errorf("small from %d: %v", p, small[p])
		}
		for i, v := range bigIn[p] {
			if v != word(p, rank, i) {
				return fmt.Errorf("big from %d [%d]: %g", p, i, v)
			}
		}
	}
	return nil
}

// directLinks checks that this rank reaches every other one over a
// WebRTC link that no TURN relay carries, prints each, and returns how
// many there are.
func directLinks(w *meshmpi.Comm) (int, error) {
	n := 0
	for p := range w.Size() {
		if p == w.Rank() {
			continue
		}
		l, err := w.LinkInfo(p)
		if err != nil {
			return n, err
		}
		fmt.Printf("link to rank %d: %s %s-%s %s-%s\n", p, l.Link, l.Local, l.Remote, l.LocalAddr, l.RemoteAddr)
		if l.Link != "webrtc" || l.Relayed() {
			return n, fmt.Errorf("the link to rank %d is %q (%s-%s), not a direct WebRTC link", p, l.Link, l.Local, l.Remote)
		}
		n++
	}
	return n, nil
}
