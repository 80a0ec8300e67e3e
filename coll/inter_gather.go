package coll

// Gather "inter_local_gather_remote_send" (intercommunicators)
//
// Source: MPICH MPIR_Gather_inter_local_gather_remote_send.
//
// Schedule: the group without the root gathers its blocks to its rank 0
// with the intracommunicator algorithm the rules pick (root 0), and rank 0
// sends all n blocks to the root as one message (cut into segments of at
// most Args.Segment bytes). The root receives them straight into its
// receive buffer; its group-mates do nothing. Local gather + 1 message
// times. Memory: n·Count elements of scratch at the sending group's rank 0,
// plus the local gather's. Restrictions: none.
//
// Trace, root a0 in a group of 2, other group of 3 (binomial locally):
//
//	b1→b0 {1}  b2→b0 {2}   local gather
//	b0→a0 {0 1 2}          remote send
func init() {
	Register(Algorithm{Coll: Gather, Name: "inter_local_gather_remote_send", Requires: Inter,
		Desc:  "local gather to rank 0, which sends everything to the root",
		Build: buildInterGather})
}

func buildInterGather(b *Builder, a *Args) error {
	if err := interCheckRoot(a); err != nil {
		return err
	}
	cb := a.Bytes(a.Count)
	switch {
	case a.Root == InterRootSelf:
		interSegs(b, a, false, a.remote(0), Ref{BufRecv, 0, a.RemoteSize * cb}, false)
	case a.Root == InterRootNone || cb == 0:
	default:
		var all Ref
		if a.Rank == 0 {
			all = b.Scratch(a.Size * cb)
		}
		la := Args{Coll: Gather, Rank: a.Rank, Size: a.Size, Count: a.Count, ElemSize: a.ElemSize, Type: a.Type, Segment: a.Segment}
		done, err := interLocal(b, la, Ref{BufSend, 0, cb}, all)
		if err != nil || a.Rank != 0 {
			return err
		}
		interSegs(b, a, true, a.remote(a.Root), all, false, done)
	}
	return nil
}
