// Package rankcheck is the rank function of the mixed-job browser tests:
// the same code runs as a browser rank (cmd/signal/testdata/checkrank,
// built for GOOS=js) and as native ranks inside the test, so every kind
// of pair (browser↔browser, browser↔native, native↔native) carries
// point-to-point traffic and a subset of collectives. Every result is
// checked against a naive sequential computation of the expected values.
package rankcheck

import (
	"context"
	"fmt"
	"time"

	"github.com/meshmpi/meshmpi"
)

// Large is the element count of the large all-pairs message: 800 KB of
// int64, many frames and the rendezvous protocol.
const Large = 100_000

// Run checks rank world.Rank() of the job and returns a one-line summary,
// or the first mismatch.
func Run(world *meshmpi.Comm) (string, error) {
	rank, n := world.Rank(), world.Size()
	for _, step := range []struct {
		name string
		fn   func(*meshmpi.Comm) error
	}{
		{"all-pairs 8 B", func(c *meshmpi.Comm) error { return allPairs(c, 1, 10) }},
		{"all-pairs 800 KB", func(c *meshmpi.Comm) error { return allPairs(c, Large, 11) }},
		{"bcast", bcast},
		{"allreduce", allreduce},
		{"reduce", reduce},
		{"allgather", allgather},
		{"alltoall", alltoall},
		{"barrier", func(c *meshmpi.Comm) error { return meshmpi.Barrier(c) }},
	} {
		if err := step.fn(world); err != nil {
			return "", fmt.Errorf("rank %d: %s: %w", rank, step.name, err)
		}
	}
	return fmt.Sprintf("rankcheck ok: rank %d of %d: all-pairs 8 B and 800 KB, bcast, allreduce, reduce, allgather, alltoall, barrier", rank, n), nil
}

// value is element i of the message from rank src to rank dst.
func value(src, dst, i int) int64 { return int64(src)*1_000_003 + int64(dst)*7_919 + int64(i) }

// allPairs sends every other rank a message of count elements and checks
// the one it receives from each.
func allPairs(c *meshmpi.Comm, count, tag int) error {
	rank, n := c.Rank(), c.Size()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var reqs []*meshmpi.Request
	recv := make([][]int64, n)
	for p := range n {
		if p == rank {
			continue
		}
		out := make([]int64, count)
		for i := range out {
			out[i] = value(rank, p, i)
		}
		s, err := meshmpi.Isend(c, out, p, tag)
		if err != nil {
			return err
		}
		recv[p] = make([]int64, count)
		r, err := meshmpi.Irecv(c, recv[p], p, tag)
		if err != nil {
			return err
		}
		reqs = append(reqs, s, r)
	}
	if err := meshmpi.Waitall(ctx, reqs, nil); err != nil {
		return err
	}
	for p := range n {
		for i, v := range recv[p] {
			if want := value(p, rank, i); v != want {
				return fmt.Errorf("from rank %d element %d = %d, want %d", p, i, v, want)
			}
		}
	}
	return nil
}

func bcast(c *meshmpi.Comm) error {
	root := c.Size() - 1
	buf := make([]float64, 1000)
	if c.Rank() == root {
		for i := range buf {
			buf[i] = float64(i) * 0.5
		}
	}
	if err := meshmpi.Bcast(c, buf, root); err != nil {
		return err
	}
	for i, v := range buf {
		if v != float64(i)*0.5 {
			return fmt.Errorf("element %d = %v, want %v", i, v, float64(i)*0.5)
		}
	}
	return nil
}

func allreduce(c *meshmpi.Comm) error {
	const count = 4096
	send := make([]int64, count)
	for i := range send {
		send[i] = value(c.Rank(), 0, i)
	}
	recv := make([]int64, count)
	if err := meshmpi.Allreduce(c, send, recv, meshmpi.Sum); err != nil {
		return err
	}
	for i, v := range recv {
		var want int64
		for r := range c.Size() {
			want += value(r, 0, i)
		}
		if v != want {
			return fmt.Errorf("element %d = %d, want %d", i, v, want)
		}
	}
	return nil
}

func reduce(c *meshmpi.Comm) error {
	const root, count = 1, 300
	send := make([]int32, count)
	for i := range send {
		send[i] = int32((c.Rank()*37 + i*11) % 101)
	}
	recv := make([]int32, count)
	if err := meshmpi.Reduce(c, send, recv, meshmpi.Max, root%c.Size()); err != nil {
		return err
	}
	if c.Rank() != root%c.Size() {
		return nil
	}
	for i, v := range recv {
		want := int32(-1)
		for r := range c.Size() {
			want = max(want, int32((r*37+i*11)%101))
		}
		if v != want {
			return fmt.Errorf("element %d = %d, want %d", i, v, want)
		}
	}
	return nil
}

func allgather(c *meshmpi.Comm) error {
	n := c.Size()
	send := []int64{value(c.Rank(), 1, 0), value(c.Rank(), 1, 1), value(c.Rank(), 1, 2)}
	recv := make([]int64, 3*n)
	if err := meshmpi.Allgather(c, send, recv); err != nil {
		return err
	}
	for r := range n {
		for i := range 3 {
			if got, want := recv[3*r+i], value(r, 1, i); got != want {
				return fmt.Errorf("block %d element %d = %d, want %d", r, i, got, want)
			}
		}
	}
	return nil
}

func alltoall(c *meshmpi.Comm) error {
	rank, n := c.Rank(), c.Size()
	send := make([]int64, 2*n)
	for p := range n {
		send[2*p], send[2*p+1] = value(rank, p, 0), value(rank, p, 1)
	}
	recv := make([]int64, 2*n)
	if err := meshmpi.Alltoall(c, send, recv); err != nil {
		return err
	}
	for p := range n {
		for i := range 2 {
			if got, want := recv[2*p+i], value(p, rank, i); got != want {
				return fmt.Errorf("from rank %d element %d = %d, want %d", p, i, got, want)
			}
		}
	}
	return nil
}
