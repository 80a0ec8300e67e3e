package coll

import "github.com/meshmpi/meshmpi/coll/internal/topo"

// Gather "binomial"
//
// Source: MPICH MPIR_Gather_intra_binomial; libnbc nbc_igather.c is linear.
//
// Schedule: ⌈log2 n⌉ levels of a binomial tree on ranks relative to the
// root. Relative rank v's subtree is the run of relative ranks [v, v+s), so
// v forwards its subtree's s blocks to its parent as one contiguous piece,
// each segment as soon as it has landed. The root receives straight into
// its receive buffer at the absolute positions; a run that wraps past rank
// n-1 to rank 0 is not contiguous there, so it travels as two pieces cut
// at that point (one run per level at most). n-1 pieces plus at most
// ⌈log2 n⌉ cuts, each in segments of at most Args.Segment bytes.
//
// Memory: an intermediate rank with a subtree of s ranks holds s·Count
// elements of scratch (its own block copied in first, so its piece goes in
// one message); leaves and the root none. In place at the root its block is
// already where it belongs. Restrictions: none.
//
// Trace, n = 5, root 2 (relative ranks in brackets; rank 4's subtree is
// ranks 4, 0, which wraps):
//
//	level 1:  3[1]→2 {3}   0[3]→4[2] {0}   1[4]→2 {1}
//	level 2:  4[2]→2 {4}, then {0}
func init() {
	Register(Algorithm{Coll: Gather, Name: "binomial",
		Desc:  "binomial tree to the root, subtrees as contiguous pieces; ⌈log2 n⌉ levels",
		Build: buildGatherBinomial,
		// the rank before the root (relative n-1, a leaf) sends its block
		// straight to the root, waiting for nothing, when n-1 is a power
		// of two (its parent is relative 0)
		DataEnds: func(a *Args) bool { return a.Bytes(a.Count) > 0 && (a.Size-1)&(a.Size-2) == 0 }})
}

func buildGatherBinomial(b *Builder, a *Args) error {
	n, cb := a.Size, a.Bytes(a.Count)
	if a.Rank == a.Root && !a.InPlace && cb > 0 {
		b.Copy(Ref{BufSend, 0, cb}, Ref{BufRecv, a.Root * cb, cb})
	}
	if n == 1 || cb == 0 {
		return nil
	}
	t := topo.Binomial{N: n, Root: a.Root}
	v, sub := t.Rel(a.Rank), t.Subtree(a.Rank)
	w := n - a.Root // the relative number of rank 0, where runs wrap
	seg := rtSeg(a)
	// span returns where relative blocks [lo, hi) live here (contiguous:
	// callers cut at w); fills says which steps filled which of them, in
	// relative bytes j·cb.
	var span func(lo, hi int) Ref
	var fills rtFills
	switch {
	case v == 0:
		span = func(lo, hi int) Ref { return Ref{BufRecv, t.Abs(lo) * cb, (hi - lo) * cb} }
	case sub == 1:
		span = func(lo, hi int) Ref { return Ref{BufSend, 0, (hi - lo) * cb} }
	default:
		scr := b.Scratch(sub * cb)
		span = func(lo, hi int) Ref { return scr.Sub((lo-v)*cb, (hi-lo)*cb) }
		fills.add(v*cb, cb, b.Copy(Ref{BufSend, 0, cb}, scr.Sub(0, cb)))
	}
	for _, c := range t.Children(a.Rank) {
		cv := t.Rel(c)
		prev := rtNone
		for _, pc := range rtCut(cv, cv+t.Subtree(c), w) {
			dst := span(pc.lo, pc.hi)
			for off, l := range rtSegs(dst.Len, seg) {
				prev = b.Recv(c, dst.Sub(off, l), rtDeps(prev)...)
				fills.add(pc.lo*cb+off, l, prev)
			}
		}
	}
	if v == 0 {
		return nil
	}
	parent, prev := t.Parent(a.Rank), rtNone
	for _, pc := range rtCut(v, v+sub, w) {
		src := span(pc.lo, pc.hi)
		for off, l := range rtSegs(src.Len, seg) {
			rel := pc.lo*cb + off
			prev = b.Send(parent, src.Sub(off, l), rtDeps(append(fills.over(rel, rel+l), prev)...)...)
		}
	}
	return nil
}
