package coll

// Allgather "inter_gather_exchange_bcast" (intercommunicators)
//
// Source: MPICH MPIR_Allgather_inter_local_gather_remote_bcast, with the
// two one-way broadcasts between the groups done as one exchange of the
// rank 0s.
//
// Schedule: each group gathers its blocks to its rank 0 with the
// intracommunicator algorithm the rules pick; the rank 0s exchange their
// gathered buffers (one message each way, cut into segments of at most
// Args.Segment bytes); each rank 0 then broadcasts what it got in its group
// into every receive buffer. Local gather + 1 + local broadcast message
// times. Memory: n·Count elements of scratch at rank 0, plus the local
// phases'. Restrictions: none.
//
// Trace, groups of 2 (a) and 3 (b), binomial locally:
//
//	a1→a0 {a1}            b1→b0 {b1}  b2→b0 {b2}     local gathers
//	a0→b0 {a0 a1}         b0→a0 {b0 b1 b2}           exchange
//	a0→a1 {b0 b1 b2}      b0→b2 {a0 a1}  b0→b1       local broadcasts
func init() {
	Register(Algorithm{Coll: Allgather, Name: "inter_gather_exchange_bcast", Requires: Inter,
		Desc:  "local gather to rank 0, rank 0s exchange, local broadcast",
		Build: buildInterAllgather})
}

func buildInterAllgather(b *Builder, a *Args) error {
	cb, in := a.Bytes(a.Count), Ref{BufRecv, 0, a.Bytes(a.RemoteSize * a.RemoteCount)}
	var all Ref
	if a.Rank == 0 {
		all = b.Scratch(a.Size * cb)
	}
	la := Args{Coll: Gather, Rank: a.Rank, Size: a.Size, Count: a.Count, ElemSize: a.ElemSize, Type: a.Type, Segment: a.Segment}
	gathered, err := interLocal(b, la, Ref{BufSend, 0, cb}, all)
	if err != nil {
		return err
	}
	got := rtNone
	if a.Rank == 0 {
		interSegs(b, a, true, a.remote(0), all, false, gathered)
		got = interSegs(b, a, false, a.remote(0), in, false)
	}
	la = Args{Coll: Bcast, Rank: a.Rank, Size: a.Size, Count: a.RemoteSize * a.RemoteCount, ElemSize: a.ElemSize, Type: a.Type, Segment: a.Segment}
	// after the local gather on every rank (see inter_allreduce.go)
	_, err = interLocal(b, la, Ref{}, in, got, gathered)
	return err
}
