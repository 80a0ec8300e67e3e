package coll

// Reduce "inter_local_reduce_remote_send" (intercommunicators)
//
// Source: MPICH MPIR_Reduce_inter_local_reduce_remote_send.
//
// Schedule: the group without the root reduces its send buffers to its rank
// 0 with the intracommunicator algorithm the rules pick (in rank order for
// non-commutative ops), and rank 0 sends the result to the root, which
// receives it straight into its receive buffer (in segments of at most
// Args.Segment bytes); the root's group-mates do nothing. Local reduce + 1
// message times. Memory: Count elements of scratch at the sending group's
// rank 0, plus the local reduce's. Restrictions: none.
//
// Trace, root a0 in a group of 2, other group of 3 (binomial locally):
//
//	b1→b0  b2→b0 (after b0 ⊕ b1)     local reduce: (b0 ⊕ b1) ⊕ b2 at b0
//	b0→a0                            remote send
func init() {
	Register(Algorithm{Coll: Reduce, Name: "inter_local_reduce_remote_send", Requires: Inter,
		Desc:  "local reduce to rank 0, which sends the result to the root",
		Build: buildInterReduce})
}

func buildInterReduce(b *Builder, a *Args) error {
	if err := interCheckRoot(a); err != nil {
		return err
	}
	cb := a.Bytes(a.Count)
	switch {
	case a.Root == InterRootSelf:
		interSegs(b, a, false, a.remote(0), Ref{BufRecv, 0, cb}, false)
	case a.Root == InterRootNone || cb == 0:
	default:
		sum, done, err := interLocalReduce(b, a, cb)
		if err == nil && a.Rank == 0 {
			interSegs(b, a, true, a.remote(a.Root), sum, false, done)
		}
		return err
	}
	return nil
}

// interLocalReduce adds the reduction of the group's first n bytes of send
// buffers into scratch at rank 0: it returns that scratch (empty elsewhere)
// and the step that ends the local phase.
func interLocalReduce(b *Builder, a *Args, n int) (Ref, StepID, error) {
	var sum Ref
	if a.Rank == 0 {
		sum = b.Scratch(n)
	}
	la := Args{Coll: Reduce, Rank: a.Rank, Size: a.Size, Count: n / max(a.ElemSize, 1), ElemSize: a.ElemSize, Type: a.Type, Op: a.Op, Segment: a.Segment}
	done, err := interLocal(b, la, Ref{BufSend, 0, n}, sum)
	return sum, done, err
}
