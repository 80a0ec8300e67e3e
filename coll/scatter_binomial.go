package coll

import (
	"slices"

	"github.com/meshmpi/meshmpi/coll/internal/topo"
)

// Scatter "binomial"
//
// Source: MPICH MPIR_Scatter_intra_binomial.
//
// Schedule: the mirror of gather "binomial": ⌈log2 n⌉ levels of a binomial
// tree on ranks relative to the root. Relative rank v receives the blocks
// of its subtree, the run [v, v+s), as one contiguous piece, keeps block v
// and forwards each child's run, the farthest child first, each segment as
// soon as it has landed. The root sends from its send buffer at the
// absolute positions; a run that wraps past rank n-1 to rank 0 is not
// contiguous there, so it travels as two pieces cut at that point. n-1
// pieces plus at most ⌈log2 n⌉ cuts, each in segments of at most
// Args.Segment bytes.
//
// Memory: an intermediate rank with a subtree of s ranks holds s·Count
// elements of scratch (it copies its own block out); leaves receive
// straight into their receive buffer, the root sends from its send buffer.
// In place, the root's block stays in its send buffer and its receive
// buffer is not touched. Restrictions: none.
//
// Trace, n = 5, root 2 (relative ranks in brackets; rank 4's subtree is
// ranks 4, 0, which wraps):
//
//	level 1:  2→1[4] {1}   2→4[2] {4}, then {0}   2→3[1] {3}
//	level 2:  4[2]→0[3] {0}
func init() {
	Register(Algorithm{Coll: Scatter, Name: "binomial",
		Desc:  "binomial tree from the root, subtrees as contiguous pieces; ⌈log2 n⌉ levels",
		Build: buildScatterBinomial,
		// the root's first message to relative rank 1 (a leaf) is its
		// block, waiting for nothing, as in the binomial Bcast
		DataLeads: func(a *Args) bool { return a.Bytes(a.Count) > 0 }})
}

func buildScatterBinomial(b *Builder, a *Args) error {
	n, cb := a.Size, a.Bytes(a.Count)
	if a.Rank == a.Root && !a.InPlace && cb > 0 {
		b.Copy(Ref{BufSend, a.Root * cb, cb}, Ref{BufRecv, 0, cb})
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
	var scr Ref
	switch {
	case v == 0:
		span = func(lo, hi int) Ref { return Ref{BufSend, t.Abs(lo) * cb, (hi - lo) * cb} }
	case sub == 1:
		span = func(lo, hi int) Ref { return Ref{BufRecv, 0, (hi - lo) * cb} }
	default:
		scr = b.Scratch(sub * cb)
		span = func(lo, hi int) Ref { return scr.Sub((lo-v)*cb, (hi-lo)*cb) }
	}
	if v != 0 {
		parent, prev := t.Parent(a.Rank), rtNone
		for _, pc := range rtCut(v, v+sub, w) {
			dst := span(pc.lo, pc.hi)
			for off, l := range rtSegs(dst.Len, seg) {
				prev = b.Recv(parent, dst.Sub(off, l), rtDeps(prev)...)
				fills.add(pc.lo*cb+off, l, prev)
			}
		}
		if sub > 1 {
			b.Copy(scr.Sub(0, cb), Ref{BufRecv, 0, cb}, fills.over(v*cb, (v+1)*cb)...)
		}
	}
	children := t.Children(a.Rank)
	slices.Reverse(children) // farthest first, as MPICH does: it heads the deepest subtree
	for _, c := range children {
		cv, prev := t.Rel(c), rtNone
		for _, pc := range rtCut(cv, cv+t.Subtree(c), w) {
			src := span(pc.lo, pc.hi)
			for off, l := range rtSegs(src.Len, seg) {
				rel := pc.lo*cb + off
				prev = b.Send(c, src.Sub(off, l), rtDeps(append(fills.over(rel, rel+l), prev)...)...)
			}
		}
	}
	return nil
}
