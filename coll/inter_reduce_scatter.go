package coll

import "fmt"

// ReduceScatterBlock "inter_reduce_exchange_scatter" and ReduceScatter
// "inter_reduce_exchange_scatterv" (intercommunicators)
//
// Source: MPICH MPIR_Reduce_scatter_block_inter_remote_reduce_local_scatter
// and MPIR_Reduce_scatter_inter_remote_reduce_local_scatter, with the two
// one-way reduces done as one exchange of the rank 0s.
//
// Schedule: each group reduces its whole send vector (n·Count elements, or
// the sum of Counts; MPI-4.1 §6.11 makes it the same length in both
// groups) to its rank 0 with the intracommunicator algorithm the rules pick;
// the rank 0s exchange the results; each rank 0 scatters the other group's
// result in its group, Count elements (or Counts[r]) to rank r, with the
// rules' scatter (scatterv). Local reduce + 1 + local scatter message
// times. Memory: two vectors of scratch at rank 0, plus the local phases'.
// Restrictions: none.
//
// Trace, ReduceScatterBlock, groups of 2 (a, Count 3) and 3 (b, Count 2):
// both vectors are 6 elements.
//
//	a1→a0            b1→b0  b2→b0               local reduces: A, B
//	a0→b0 A          b0→a0 B                    exchange
//	a0→a1 B[3:6]     b0→b2 A[4:6]  b0→b1 A[2:4] local scatters
func init() {
	Register(Algorithm{Coll: ReduceScatterBlock, Name: "inter_reduce_exchange_scatter", Requires: Inter,
		Desc:  "local reduce to rank 0, rank 0s exchange, local scatter",
		Build: buildInterReduceScatter})
	Register(Algorithm{Coll: ReduceScatter, Name: "inter_reduce_exchange_scatterv", Requires: Inter,
		Desc:  "local reduce to rank 0, rank 0s exchange, local scatterv",
		Build: buildInterReduceScatter})
}

func buildInterReduceScatter(b *Builder, a *Args) error {
	la := Args{Coll: Scatter, Rank: a.Rank, Size: a.Size, Count: a.Count, ElemSize: a.ElemSize, Type: a.Type, Segment: a.Segment}
	total := a.Size * a.Count
	if a.Coll == ReduceScatter {
		if len(a.Counts) < a.Size {
			return fmt.Errorf("reduce_scatter needs %d counts, got %d", a.Size, len(a.Counts))
		}
		la.Coll, la.Counts, la.Displs, total = Scatterv, a.Counts, make([]int, a.Size), 0
		for r := range a.Size {
			la.Displs[r] = total
			total += a.Counts[r]
		}
	}
	n := a.Bytes(total)
	if n == 0 {
		return nil
	}
	sum, done, err := interLocalReduce(b, a, n)
	if err != nil {
		return err
	}
	got, theirs := rtNone, Ref{}
	if a.Rank == 0 {
		theirs = b.Scratch(n)
		interSegs(b, a, true, a.remote(0), sum, false, done)
		got = interSegs(b, a, false, a.remote(0), theirs, false)
	}
	mine := a.Count
	if la.Counts != nil {
		mine = a.Counts[a.Rank]
	}
	// after the local reduce on every rank (see inter_allreduce.go)
	_, err = interLocal(b, la, theirs, Ref{BufRecv, 0, a.Bytes(mine)}, got, done)
	return err
}
