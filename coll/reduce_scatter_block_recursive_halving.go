package coll

// ReduceScatterBlock "recursive_halving": recursive halving over the
// blocks, with a fold for any size.
//
// Source: Thakur, Rabenseifner and Gropp, "Optimization of collective
// communication operations in MPICH" (IJHPCA 2005), MPICH's
// MPIR_Reduce_scatter_block_intra_recursive_halving; the fold is
// recursive_doubling's (topo.RecDbl). Extras hand their whole input to
// their hosts; participant v is then responsible for the blocks of the
// ranks it stands for, [OrigRank(v), OrigRank(v+1)) — one block, or two
// on a host — and halving round i gives half of the blocks still held to
// the partner at distance Pof2/2^(i+1) and folds in the partner's copy of
// the other half. Hosts finally send their extras their blocks. Halves
// are combined out of rank order, hence Requires: Commutative. It shares
// the halving with allreduce's rabenseifner (redHalving).
//
// Schedule length: log2 Pof2 rounds, plus 2 for a non-power-of-two size;
// a participant sends about Size·Count elements in all (a host twice that).
// Memory: Size·Count elements of scratch to accumulate in, plus the
// largest part received after the first reduction: about Size·Count/4
// elements, Size·Count/2 on a host (whose first reduction is the fold). The first reduction reads the input and writes the
// accumulator, where the data was received, so nothing is copied in; in
// place, the receive buffer is input only except for the result at its
// start, written last. Not in place, a participant's last fold lands in
// the receive buffer itself (redHalving.final): its part is copied there
// while the partner's is on its way and the partner's is reduced in as it
// arrives, so the block is not reduced in scratch and copied out after.
// Restrictions: Commutative.
//
// 5 ranks (Pof2 4, Rem 1), participants p0..p3 = ranks 0 2 3 4; halving
// pairs p0-p2 and p1-p3 first, then p0-p1 and p2-p3; p0 keeps blocks 0
// and 1.
// b0-2:013 is blocks 0 to 2 reduced over ranks 0, 1 and 3.
//
//	          rank 0      rank 1      rank 2      rank 3      rank 4
//	fold      b0-4:01 <-- x1
//	halve 0   b0-2:013 <------------------------> b3-4:013
//	                                  b0-2:24 <-------------> b3-4:24
//	halve 1   b0-1:all <------------> b2:all      b3:all <--> b4:all
//	unfold    b1:all ---> b1:all

import "github.com/meshmpi/meshmpi/coll/internal/topo"

func init() {
	Register(Algorithm{Coll: ReduceScatterBlock, Name: "recursive_halving",
		Desc:     "recursive halving with a fold for any size; latency-optimal",
		Requires: Commutative,
		Build:    buildReduceScatterBlockRecursiveHalving})
}

func buildReduceScatterBlockRecursiveHalving(b *Builder, a *Args) error {
	c := a.Bytes(a.Count)
	total := c * a.Size
	f, p, in, out, done := foldedStart(b, a, total, c)
	if done {
		return nil
	}
	rank := a.Rank
	// in place too, the receive buffer past the result is input only
	acc := b.Scratch(total)
	blocks := func(lo, hi int) (off, n int) {
		lo, hi = f.OrigRank(lo), f.OrigRank(hi)
		return lo * c, (hi - lo) * c
	}
	h := redHalving{b: b, p: p, f: f, rank: rank, in: in, acc: acc, holds: false, blocks: blocks}
	host := f.Role(rank) == topo.Host
	if !host && !a.InPlace {
		// the last fold lands in out, which nothing else touches (in place,
		// out is the start of the input, which the last round may send)
		h.final = out
	}
	h.reduceScatter()
	if host {
		p.send(rank+1, acc.Sub((rank+1)*c, c))
	}
	if mine := acc.Sub(rank*c, c); h.final.Len == 0 && mine != out {
		b.Copy(mine, out)
	}
	return nil
}
