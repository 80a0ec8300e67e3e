package coll

// Allgatherv "ring".
//
// Source: MPICH allgatherv_intra_ring.c; Open MPI
// ompi_coll_base_allgatherv_intra_ring (coll_base_allgatherv.c).
//
// Schedule length: n-1 steps of one send right and one receive left, each
// block split by a.Segment and forwarded piece by piece (see
// allgather_ring.go). Empty blocks are never sent: both sides know the
// counts, so both skip them.
//
// Memory: none beyond the receive buffer. In place: yes (the rank's block
// is already at Displs[Rank]).
//
// Restrictions: none. Counts may be zero and displacements may leave gaps,
// which stay untouched.
//
// 5 ranks, block k of Counts[k] elements at Displs[k]; step s: rank r
// sends block r-s right and receives block r-s-1 from the left:
//
//	step   rank 0    rank 1    rank 2    rank 3    rank 4
//	0      b0 → 1    b1 → 2    b2 → 3    b3 → 4    b4 → 0
//	1      b4 → 1    b0 → 2    b1 → 3    b2 → 4    b3 → 0
//	2      b3 → 1    b4 → 2    b0 → 3    b1 → 4    b2 → 0
//	3      b2 → 1    b3 → 2    b4 → 3    b0 → 4    b1 → 0

import "fmt"

func init() {
	Register(Algorithm{
		Coll: Allgatherv,
		Name: "ring",
		Desc: "n-1 steps around a ring with per-rank counts, pipelined by segments",
		Build: func(b *Builder, a *Args) error {
			if len(a.Counts) != a.Size || len(a.Displs) != a.Size {
				return fmt.Errorf("%d counts and %d displacements for %d ranks", len(a.Counts), len(a.Displs), a.Size)
			}
			for k, c := range a.Counts {
				if c < 0 || a.Displs[k] < 0 {
					return fmt.Errorf("rank %d: count %d at displacement %d", k, c, a.Displs[k])
				}
			}
			ringAllgather(b, a, func(k int) Ref {
				return Ref{BufRecv, a.Bytes(a.Displs[k]), a.Bytes(a.Counts[k])}
			})
			return nil
		},
	})
}
