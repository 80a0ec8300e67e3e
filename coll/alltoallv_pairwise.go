package coll

// Alltoallv "pairwise".
//
// Source: MPICH alltoallv_intra_pairwise_sendrecv_replace.c and
// alltoallv_intra_scattered.c; Open MPI
// ompi_coll_base_alltoallv_intra_pairwise and
// mca_coll_base_alltoallv_intra_basic_inplace (coll_base_alltoallv.c).
//
// Schedule length: n-1 steps as in Alltoall "pairwise" (see
// alltoall_pairwise.go, whose schedule this shares), with rank k's block
// SendCounts[k] elements at SendDispls[k] and its incoming block Counts[k]
// at Displs[k]. Empty blocks are not sent: the sender's SendCounts[k] and
// the receiver's Counts[r] agree, as MPI requires, so both skip them.
// Each message split by a.Segment.
//
// Memory: none out of place; in place, one block of the largest count as
// scratch for the swaps.
//
// In place (MPI-4.1 §6.8): the data for rank k is in the receive buffer,
// Counts[k] at Displs[k], and is replaced by rank k's data; the counts are
// symmetric (Counts[k] at rank r equals Counts[r] at rank k).
//
// Restrictions: none.
//
// 5 ranks out of place, step k: rank r sends its block for r+k to r+k and
// receives r-k's block for it:
//
//	step   rank 0    rank 1    rank 2    rank 3    rank 4
//	k=1    → 1       → 2       → 3       → 4       → 0
//	k=2    → 2       → 3       → 4       → 0       → 1
//	k=3    → 3       → 4       → 0       → 1       → 2
//	k=4    → 4       → 0       → 1       → 2       → 3

import "fmt"

func init() {
	Register(Algorithm{
		Coll:  Alltoallv,
		Name:  "pairwise",
		Desc:  "n-1 steps of one send and one receive with per-rank counts; in place by symmetric swaps",
		Build: buildAlltoallvPairwise,
	})
}

func buildAlltoallvPairwise(b *Builder, a *Args) error {
	n := a.Size
	if len(a.Counts) != n || len(a.Displs) != n {
		return fmt.Errorf("%d counts and %d displacements for %d ranks", len(a.Counts), len(a.Displs), n)
	}
	if !a.InPlace && (len(a.SendCounts) != n || len(a.SendDispls) != n) {
		return fmt.Errorf("%d send counts and %d send displacements for %d ranks", len(a.SendCounts), len(a.SendDispls), n)
	}
	for k := range n {
		if a.Counts[k] < 0 || a.Displs[k] < 0 || !a.InPlace && (a.SendCounts[k] < 0 || a.SendDispls[k] < 0) {
			return fmt.Errorf("rank %d: negative count or displacement", k)
		}
	}
	return pairwiseAlltoall(b, a,
		func(k int) Ref { return Ref{BufSend, a.Bytes(a.SendDispls[k]), a.Bytes(a.SendCounts[k])} },
		func(k int) Ref { return Ref{BufRecv, a.Bytes(a.Displs[k]), a.Bytes(a.Counts[k])} })
}
