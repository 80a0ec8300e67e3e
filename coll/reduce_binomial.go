package coll

import "github.com/meshmpi/meshmpi/coll/internal/topo"

// Reduce "binomial"
//
// Source: MPICH MPIR_Reduce_intra_binomial, including its handling of
// non-commutative ops (reduce to rank 0 along ranks in order, then send the
// result to the root); Open MPI's segmented ompi_coll_base_reduce_generic
// for the pipeline.
//
// Schedule: a binomial tree (⌈log2 n⌉ levels). Rank v's children are
// v+1, v+2, v+4, …, and child v+m brings the fold of the ranks
// [v+m, v+2m), so folding them in that order onto v's own data gives the
// fold of v's subtree [v, v+s) in rank order. For a commutative op the tree
// is rooted at the root (ranks relative to it); for a non-commutative one it
// is rooted at rank 0 on the ranks as they are, and rank 0 sends the result
// to the root: one more message when the root is not 0. The data goes in
// segments of at most Args.Segment bytes, each reduced and forwarded up the
// tree on its own, so the levels pipeline. n-1 messages per segment (n with
// the hop to a root ≠ 0).
//
// The partial result moves rather than accumulating in place: child k is
// received into its own slot and reduced there as acc ⊕ child (the lower
// ranks on the left, as Builder.Reduce wants), which makes that slot the
// new acc. So no copy is needed, and the input is never written.
//
// Memory: one Count-element slot per child, ⌈log2 n⌉ at most (the root's
// last child, out of place, lands in its receive buffer). In place at the
// root: the input is its receive buffer, the result goes back there.
// Restrictions: none.
//
// Trace, n = 5, root 2, one segment. Commutative (relative ranks in
// brackets; 4[2] folds in 0[3]):
//
//	level 1:  3[1]→2   0[3]→4[2]   1[4]→2
//	level 2:  4[2]→2                              2 = ((x2 ⊕ x3) ⊕ (x4 ⊕ x0)) ⊕ x1
//
// Non-commutative, tree at rank 0 on the ranks in order:
//
//	1→0   3→2   4→0     at once
//	2→0                 once 2 has x2 ⊕ x3
//	0→2                 0 folds ((x0 ⊕ x1) ⊕ (x2 ⊕ x3)) ⊕ x4 and hands it to the root
func init() {
	Register(Algorithm{Coll: Reduce, Name: "binomial",
		Desc:  "binomial tree to the root, pipelined by segment; rank-order tree at 0 for non-commutative ops",
		Build: buildReduceBinomial,
		// the rank before the root (relative n-1, a leaf) sends its data
		// straight to the root, waiting for nothing, when n-1 is a power
		// of two (its parent is relative 0) and the tree is rooted at the
		// root (a non-commutative op roots it at rank 0)
		DataEnds: func(a *Args) bool {
			return a.Bytes(a.Count) > 0 && (a.Size-1)&(a.Size-2) == 0 && (a.Commutative() || a.Root == 0)
		}})
}

func buildReduceBinomial(b *Builder, a *Args) error {
	cb := a.Bytes(a.Count)
	in := Ref{BufSend, 0, cb}
	if a.InPlace && a.Rank == a.Root {
		in = Ref{BufRecv, 0, cb}
	}
	reduceBinomial(b, a, in)
	return nil
}

// reduceBinomial adds the binomial reduce of in (this rank's input) to the
// root's receive buffer.
func reduceBinomial(b *Builder, a *Args, in Ref) {
	cb := a.Bytes(a.Count)
	if cb == 0 {
		return
	}
	treeRoot := a.Root
	if !a.Commutative() {
		treeRoot = 0
	}
	t := topo.Binomial{N: a.Size, Root: treeRoot}
	out := Ref{BufRecv, 0, cb} // at the root
	children, parent := t.Children(a.Rank), t.Parent(a.Rank)
	slots := make([]Ref, len(children))
	for k := range slots {
		if k == len(slots)-1 && a.Rank == a.Root && a.Rank == treeRoot && !a.InPlace {
			slots[k] = out // the last fold lands where the result goes
		} else {
			slots[k] = b.Scratch(cb)
		}
	}
	recvPrev := make([]StepID, len(children)) // chains per peer and direction
	for k := range recvPrev {
		recvPrev[k] = rtNone
	}
	sendPrev, finalPrev, finalRecvPrev := rtNone, rtNone, rtNone
	for off, l := range rtSegs(cb, rtSeg(a)) {
		acc, accStep := in.Sub(off, l), rtNone
		for k, c := range children {
			recvPrev[k] = b.Recv(c, slots[k].Sub(off, l), rtDeps(recvPrev[k])...)
			accStep = b.Reduce(acc, slots[k].Sub(off, l), rtDeps(recvPrev[k], accStep)...)
			acc = slots[k].Sub(off, l)
		}
		switch {
		case parent >= 0:
			sendPrev = b.Send(parent, acc, rtDeps(accStep, sendPrev)...)
		case a.Rank == a.Root: // the tree's root is the root
			if acc != out.Sub(off, l) {
				b.Copy(acc, out.Sub(off, l), rtDeps(accStep)...)
			}
		default: // rank 0 of a non-commutative op's tree: hand over
			finalPrev = b.Send(a.Root, acc, rtDeps(accStep, finalPrev)...)
		}
		if a.Rank == a.Root && a.Rank != treeRoot {
			// after this segment of the input has gone up the tree (in
			// place, the result overwrites it)
			finalRecvPrev = b.Recv(treeRoot, out.Sub(off, l), rtDeps(sendPrev, finalRecvPrev)...)
		}
	}
}
