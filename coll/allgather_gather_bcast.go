package coll

// Allgather "gather_bcast": a binomial gather to rank 0, then a binomial
// broadcast of the whole result from it.
//
// Source: MPICH's MPIR_Allgather_intra_smp shape and Open MPI's
// ompi_coll_base_allgather_intra_basic_linear (gather to 0, then bcast),
// with this package's binomial Gather and Bcast, as Allreduce's
// reduce_bcast pairs its Reduce and Bcast.
//
// Schedule: 2·⌈log2 n⌉ message times, twice recursive doubling's depth,
// but 2(n-1) messages against n·log2 n (14 against 24 at 8 ranks) and
// every rank wakes twice at most. That is the trade for ranks that share
// cores (Args.Oversubscribed), where the processors' total work, not the
// latency, bounds the time. The broadcast moves n-1 copies of the whole
// result, about what recursive doubling and the ring move in all.
//
// Memory: the binomial Gather's scratch (an intermediate rank's subtree of
// blocks). In place: a rank's block is already at its place in the receive
// buffer, which the gather then reads instead of the send buffer.
// Restrictions: none.
//
// Trace, n = 5 (gather at 0: 1→0 {1}, 3→2 {3}, 4→0 {4}, then 2→0 {2,3};
// bcast: 0→4, 0→2, 0→1, then 2→3, each the whole of b0-4).
func init() {
	Register(Algorithm{Coll: Allgather, Name: "gather_bcast",
		Desc:  "binomial gather to rank 0, then binomial bcast of the result; fewest messages, for ranks that share cores",
		Build: buildAllgatherGatherBcast})
}

func buildAllgatherGatherBcast(b *Builder, a *Args) error {
	cb := a.Bytes(a.Count)
	if cb == 0 || a.Size == 1 && a.InPlace {
		return nil
	}
	g := *a
	g.Coll, g.Root = Gather, 0
	first := len(b.steps)
	if err := buildGatherBinomial(b, &g); err != nil {
		return err
	}
	if a.InPlace && a.Rank != 0 {
		// the gather reads this rank's block from the send buffer (rank
		// 0's in place is already where it belongs): here it is the
		// rank's own block of the receive buffer
		for i := first; i < len(b.steps); i++ {
			s := &b.steps[i]
			for _, r := range []*Ref{&s.A, &s.B} {
				if r.Buf == BufSend {
					r.Buf, r.Off = BufRecv, a.Rank*cb+r.Off
				}
			}
		}
	}
	// the broadcast overwrites the receive buffer, which the gather may
	// still read (in place) on a rank whose blocks are on their way up
	b.Fence()
	bc := *a
	bc.Coll, bc.Root, bc.Count = Bcast, 0, a.Count*a.Size
	bcastBinomial(b, &bc)
	return nil
}
