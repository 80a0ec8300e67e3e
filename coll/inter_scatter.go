package coll

// Scatter "inter_remote_send_local_scatter" (intercommunicators)
//
// Source: MPICH MPIR_Scatter_inter_remote_send_local_scatter.
//
// Schedule: the root sends all n blocks to rank 0 of the other group as one
// message (cut into segments of at most Args.Segment bytes), which
// scatters them in its group with the intracommunicator algorithm the rules
// pick (root 0). 1 + local scatter message times; the root's group-mates do
// nothing. Memory: n·Count elements of scratch at the receiving group's
// rank 0, plus the local scatter's. Restrictions: none.
//
// Trace, root a1 in a group of 2, other group of 3 (binomial locally):
//
//	a1→b0 {0 1 2}          remote send
//	b0→b2 {2}  b0→b1 {1}   local scatter
func init() {
	Register(Algorithm{Coll: Scatter, Name: "inter_remote_send_local_scatter", Requires: Inter,
		Desc:  "the root sends everything to the other group's rank 0, which scatters locally",
		Build: buildInterScatter})
}

func buildInterScatter(b *Builder, a *Args) error {
	if err := interCheckRoot(a); err != nil {
		return err
	}
	cb := a.Bytes(a.Count)
	switch {
	case a.Root == InterRootSelf:
		interSegs(b, a, true, a.remote(0), Ref{BufSend, 0, a.RemoteSize * cb}, false)
	case a.Root == InterRootNone || cb == 0:
	default:
		var all Ref
		got := rtNone
		if a.Rank == 0 {
			all = b.Scratch(a.Size * cb)
			got = interSegs(b, a, false, a.remote(a.Root), all, false)
		}
		la := Args{Coll: Scatter, Rank: a.Rank, Size: a.Size, Count: a.Count, ElemSize: a.ElemSize, Type: a.Type, Segment: a.Segment}
		_, err := interLocal(b, la, all, Ref{BufRecv, 0, cb}, got)
		return err
	}
	return nil
}
