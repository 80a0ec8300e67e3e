package coll

import (
	"slices"

	"github.com/meshmpi/meshmpi/coll/internal/topo"
)

// Bcast "binomial"
//
// Source: MPICH MPIR_Bcast_intra_binomial (ranks renumbered relative to the
// root, the farthest child first); the segment pipeline is Open MPI's
// ompi_coll_base_bcast_intra_generic with a binomial tree.
//
// Schedule: ⌈log2 n⌉ levels. The buffer goes in S segments of at most
// Args.Segment bytes (S = 1 without a bound); a rank forwards segment k to
// its children as soon as it has it, while segment k+1 is on its way, so
// the depth is ⌈log2 n⌉ + S - 1 message times rather than S·⌈log2 n⌉.
// (n-1)·S messages. Memory: none. Restrictions: none.
//
// Trace, n = 5, root 1 (relative ranks in brackets; one segment):
//
//	1[0] → 0[4]   1[0] → 3[2]   1[0] → 2[1]     level 1 (farthest child first)
//	3[2] → 4[3]                                 level 2
func init() {
	Register(Algorithm{Coll: Bcast, Name: "binomial",
		Desc:  "binomial tree from the root, pipelined by segment; latency-optimal for small messages",
		Build: buildBcastBinomial,
		// the root sends to relative rank 1 first thing (its nearest
		// child, last of the farthest-first order but waiting for nothing)
		DataLeads: func(a *Args) bool { return a.Bytes(a.Count) > 0 }})
}

func buildBcastBinomial(b *Builder, a *Args) error {
	bcastBinomial(b, a)
	return nil
}

// bcastBinomial adds the binomial broadcast of the receive buffer from
// the root; its first steps wait for the last fence.
func bcastBinomial(b *Builder, a *Args) {
	cb := a.Bytes(a.Count)
	if a.Size == 1 || cb == 0 {
		return
	}
	t := topo.Binomial{N: a.Size, Root: a.Root}
	buf := Ref{BufRecv, 0, cb}
	parent := t.Parent(a.Rank)
	children := t.Children(a.Rank)
	slices.Reverse(children) // farthest first (MPICH): its subtree is the deepest
	prevRecv := rtNone
	prevSend := make([]StepID, len(children))
	for i := range prevSend {
		prevSend[i] = rtNone
	}
	for off, n := range rtSegs(cb, rtSeg(a)) {
		got := rtNone
		if parent >= 0 {
			got = b.Recv(parent, buf.Sub(off, n), rtDeps(prevRecv)...)
			prevRecv = got
		}
		for i, c := range children {
			prevSend[i] = b.Send(c, buf.Sub(off, n), rtDeps(got, prevSend[i])...)
		}
	}
}
