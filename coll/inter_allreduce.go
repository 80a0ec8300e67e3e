package coll

// Allreduce "inter_reduce_exchange_bcast" (intercommunicators)
//
// Source: MPICH MPIR_Allreduce_inter_reduce_exchange_bcast.
//
// Schedule: each group reduces its send buffers to its rank 0 with the
// intracommunicator algorithm the rules pick (rank order for
// non-commutative ops); the rank 0s exchange their results (one message
// each way, in segments of at most Args.Segment bytes), each into its
// receive buffer; each rank 0 broadcasts the other group's result in its
// group. So each group gets the reduction of the other group's data
// (MPI-4.1 §6.9.6). Local reduce + 1 + local broadcast message times.
// Memory: Count elements of scratch at rank 0, plus the local phases'.
// Restrictions: none.
//
// Trace, groups of 2 (a) and 3 (b), binomial locally:
//
//	a1→a0            b1→b0  b2→b0        local reduces: A = a0⊕a1, B = b0⊕b1⊕b2
//	a0→b0 A          b0→a0 B             exchange
//	a0→a1 B          b0→b2 A  b0→b1 A    local broadcasts
func init() {
	Register(Algorithm{Coll: Allreduce, Name: "inter_reduce_exchange_bcast", Requires: Inter,
		Desc:  "local reduce to rank 0, rank 0s exchange, local broadcast",
		Build: buildInterAllreduce})
}

func buildInterAllreduce(b *Builder, a *Args) error {
	cb := a.Bytes(a.Count)
	if cb == 0 {
		return nil
	}
	sum, done, err := interLocalReduce(b, a, cb)
	if err != nil {
		return err
	}
	got, out := rtNone, Ref{BufRecv, 0, cb}
	if a.Rank == 0 {
		interSegs(b, a, true, a.remote(0), sum, false, done)
		got = interSegs(b, a, false, a.remote(0), out, false)
	}
	la := Args{Coll: Bcast, Rank: a.Rank, Size: a.Size, Count: a.Count, ElemSize: a.ElemSize, Type: a.Type, Segment: a.Segment}
	// after the local reduce on every rank, not only after the exchange
	// at rank 0: both local phases run on one tag, and a broadcast receive
	// posted while the reduce's are pending could match a reduce message
	_, err = interLocal(b, la, Ref{}, out, got, done)
	return err
}
