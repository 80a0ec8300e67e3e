package coll

// Bcast "inter_remote_send_local_bcast" (intercommunicators)
//
// Source: MPICH MPIR_Bcast_inter_remote_send_local_bcast.
//
// Schedule: the root sends the buffer to rank 0 of the other group, which
// broadcasts it in its group with the intracommunicator algorithm the rules
// pick (root 0). 1 + the local broadcast's message times; the root's other
// group-mates do nothing. Memory: that of the local broadcast.
// Restrictions: none.
//
// Trace, root a1 in a group of 2, other group of 3 (binomial locally):
//
//	a1→b0                  remote send
//	b0→b2  b0→b1           local bcast, level 1 (farthest child first)
func init() {
	Register(Algorithm{Coll: Bcast, Name: "inter_remote_send_local_bcast", Requires: Inter,
		Desc:  "the root sends to the other group's rank 0, which broadcasts locally",
		Build: buildInterBcast})
}

func buildInterBcast(b *Builder, a *Args) error {
	if err := interCheckRoot(a); err != nil {
		return err
	}
	buf := Ref{BufRecv, 0, a.Bytes(a.Count)}
	switch {
	case a.Root == InterRootSelf:
		interSegs(b, a, true, a.remote(0), buf, false)
	case a.Root == InterRootNone || buf.Len == 0:
	default:
		got := rtNone
		if a.Rank == 0 {
			got = interSegs(b, a, false, a.remote(a.Root), buf, false)
		}
		la := Args{Coll: Bcast, Rank: a.Rank, Size: a.Size, Count: a.Count, ElemSize: a.ElemSize, Type: a.Type, Segment: a.Segment}
		_, err := interLocal(b, la, Ref{}, buf, got)
		return err
	}
	return nil
}
