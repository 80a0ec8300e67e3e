package meshmpi

import (
	"fmt"
	"testing"
)

// newNeighborBench makes a 2-D periodic grid of w's ranks (DimsCreate)
// and one rank's NeighborAlltoall buffers: size bytes to and from each of
// the 4 neighbors, the halo exchange of a stencil. On 4 ranks (2×2) every
// neighbor is the same rank both ways, so the repeated-neighbor ordering
// is in the measured path; on 9 (3×3) the 4 neighbors are distinct.
func newNeighborBench(w *Comm, size int) (collBench, error) {
	dims, err := DimsCreate(w.Size(), []int{0, 0})
	if err != nil {
		return collBench{}, err
	}
	cart, err := w.CartCreate(dims, []bool{true, true}, false)
	if err != nil {
		return collBench{}, err
	}
	send, recv := make([]byte, 4*size), make([]byte, 4*size)
	for i := range send {
		send[i] = byte(w.Rank() + i)
	}
	return collBench{
		func() error { return NeighborAlltoall(cart, send, recv) },
		func() (*Request, error) { return IneighborAlltoall(cart, send, recv) },
		func() (*Request, error) { return NeighborAlltoallInit(cart, send, recv) },
	}, nil
}

// BenchmarkNeighborAlltoall measures the halo exchange on a 2-D periodic
// grid on memory links, as NeighborAlltoall/n=<ranks>/<bytes per
// neighbor>/<form>, with allocations per operation (all ranks'):
//
//	go test -run XXX -bench NeighborAlltoall -benchmem .
func BenchmarkNeighborAlltoall(b *testing.B) {
	for _, n := range []int{4, 9} {
		for _, s := range []struct {
			label string
			bytes int
		}{{"8B", 8}, {"64KiB", 64 << 10}} {
			for _, form := range []string{"blocking", "nonblocking", "persistent"} {
				b.Run(fmt.Sprintf("n=%d/%s/%s", n, s.label, form), func(b *testing.B) {
					collLatency(b, "NeighborAlltoall", n, s.bytes, form)
				})
			}
		}
	}
}
