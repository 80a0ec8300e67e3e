package coll

import "github.com/meshmpi/meshmpi/coll/internal/topo"

// Reduce "rabenseifner"
//
// Source: R. Rabenseifner, "Optimization of collective reduction operations",
// ICCS 2004; MPICH MPIR_Reduce_intra_reduce_scatter_gather. Unlike MPICH,
// the fold keeps the root among the survivors (topo.RootFold), so the
// result needs no extra hop.
//
// Schedule, with P = 2^⌊log2 n⌋ and R = n - P:
//   - fold (1 round, when R > 0): of each pair (2i, 2i+1), i < R, one rank
//     sends its whole vector to the other and sits out (the odd one, unless
//     the even one is the root). The P survivors are renumbered 0..P-1.
//   - reduce-scatter by recursive halving (log2 P rounds): the vector is cut
//     into P blocks whose sizes differ by at most one element (some empty
//     when Count < P; empty messages are skipped). At distance m = P/2, …, 1
//     survivor x swaps half of its current window of 2m blocks with x^m and
//     reduces the half it keeps; at the end it holds block x reduced.
//   - gather (log2 P rounds): a binomial tree towards the root's survivor
//     number (survivors renumbered by xor with it), at distance m = 1, 2, …
//     each sender passing its window of m blocks, so windows stay contiguous
//     and the root ends with every block in place in its receive buffer.
//
// Every message is cut into segments of at most Args.Segment bytes. The
// root receives about 2·Count·(1 - 1/P) elements and no survivor sends
// more, against Count·⌈log2 n⌉ received by the root of the binomial tree:
// the choice for large vectors. 2·log2 P rounds, plus one for the fold.
//
// Memory: a survivor other than the root works in Count elements of scratch
// (the root in its receive buffer), plus a receive area of half the vector
// (the whole vector for an in-place root that folds). The first exchange
// reduces the input straight into the working vector, so nothing is copied.
// Restrictions: Commutative (the halving pairs blocks out of rank order).
//
// Trace, n = 6, root 2 (P = 4, R = 2; survivors 1, 2, 4, 5 are 0, 1, 2, 3;
// blocks B0..B3):
//
//	fold:       0→1 all      3→2 all                (2 is the root: it stays)
//	halving 2:  1⇄4  1 keeps B0B1, 4 keeps B2B3     2⇄5  2 keeps B0B1, 5 keeps B2B3
//	halving 1:  1⇄2  1 keeps B0,   2 keeps B1       4⇄5  4 keeps B2,   5 keeps B3
//	gather 1:   1→2 B0           4→5 B2
//	gather 2:   5→2 B2B3                            (2 holds B0..B3)
func init() {
	Register(Algorithm{Coll: Reduce, Name: "rabenseifner",
		Desc:     "reduce-scatter by recursive halving, then binomial gather to the root (Rabenseifner); for large vectors",
		Requires: Commutative,
		Build:    buildReduceRabenseifner})
}

func buildReduceRabenseifner(b *Builder, a *Args) error {
	cb := a.Bytes(a.Count)
	if cb == 0 {
		return nil
	}
	f := topo.NewRootFold(a.Size, a.Root)
	seg := rtSeg(a)
	isRoot := a.Rank == a.Root
	in := Ref{BufSend, 0, cb}
	if isRoot && a.InPlace {
		in = Ref{BufRecv, 0, cb}
	}
	x, partner := f.NewRank(a.Rank), f.Partner(a.Rank)
	if x < 0 { // sits out: hand the whole input over
		prev := rtNone
		for off, l := range rtSegs(cb, seg) {
			prev = b.Send(partner, in.Sub(off, l), rtDeps(prev)...)
		}
		return nil
	}
	// at(j) is where block j of P starts; at(P) = cb
	at := func(j int) int {
		lo, _ := topo.BlockPart(j, a.Count, f.P)
		return a.Bytes(lo)
	}
	// The working vector: the root's receive buffer, else scratch. Until the
	// first exchange it holds nothing (unless in place): that exchange
	// receives into it and reduces the input in, and sends from the input.
	w := Ref{BufRecv, 0, cb}
	if !isRoot {
		w = b.Scratch(cb)
	}
	ready := in == w
	// The receive area: what the exchanges made once w is live receive.
	need, live := 0, ready
	if partner >= 0 {
		if live {
			need = cb
		}
		live = true
	}
	for m := f.P / 2; m >= 1; m /= 2 {
		_, keep, _ := f.Halving(x, m)
		if live {
			need = max(need, at(keep+m)-at(keep))
		}
		live = true
	}
	tmp := b.Scratch(need)

	// exchange receives [lo, hi) of the vector from peer and reduces it into w.
	exchange := func(peer, lo, hi int) {
		prev := rtNone
		for off, l := range rtSegs(hi-lo, seg) {
			dst := w.Sub(lo+off, l)
			if ready {
				prev = b.Recv(peer, tmp.Sub(off, l), rtDeps(prev)...)
				b.Reduce(tmp.Sub(off, l), dst, prev)
			} else {
				prev = b.Recv(peer, dst, rtDeps(prev)...)
				b.Reduce(in.Sub(lo+off, l), dst, prev)
			}
		}
	}
	send := func(peer int, src Ref, lo, hi int) {
		prev := rtNone
		for off, l := range rtSegs(hi-lo, seg) {
			prev = b.Send(peer, src.Sub(lo+off, l), rtDeps(prev)...)
		}
	}

	if partner >= 0 {
		exchange(partner, 0, cb)
		ready = true
		b.Fence()
	}
	for m := f.P / 2; m >= 1; m /= 2 {
		y, keep, give := f.Halving(x, m)
		src := w
		if !ready {
			src = in
		}
		send(f.OldRank(y), src, at(give), at(give+m))
		exchange(f.OldRank(y), at(keep), at(keep+m))
		ready = true
		b.Fence()
	}
	if !ready { // a group of one
		b.Copy(in, w)
	}
	for m := 1; m < f.P; m *= 2 {
		y, sends, active := f.Gather(x, m)
		if !active {
			break
		}
		if sends {
			lo := x &^ (m - 1)
			send(f.OldRank(y), w, at(lo), at(lo+m))
			break
		}
		lo, hi := at(y&^(m-1)), at(y&^(m-1)+m)
		prev := rtNone
		for off, l := range rtSegs(hi-lo, seg) {
			prev = b.Recv(f.OldRank(y), w.Sub(lo+off, l), rtDeps(prev)...)
		}
		b.Fence()
	}
	return nil
}
