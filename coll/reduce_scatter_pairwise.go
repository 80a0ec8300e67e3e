package coll

// ReduceScatter "pairwise": n-1 pairwise exchange steps that fold every
// block in rank order, so it serves non-commutative ops too.
//
// Source: MPICH's MPIR_Reduce_scatter_intra_pairwise (Thakur, Rabenseifner
// and Gropp, IJHPCA 2005). In step s = 1..n-1, rank r sends its input
// block for rank r+s to r+s and receives from r-s that rank's input block
// for r. MPICH reduces each arrival straight into the result, which is
// right only for commutative ops; here the arrivals, which come from
// r-1, r-2, …, 0 and then from n-1, n-2, …, r+1, are prepended to two
// accumulators, L = x_0 ⊕ … ⊕ x_r and H = x_{r+1} ⊕ … ⊕ x_{n-1} (each
// arrival is the left operand of its accumulator), and the result is
// L ⊕ H: the rank-order fold for any associative op. Blocks are
// Counts[k] elements at the prefix sum; messages for empty blocks are
// skipped on both sides.
//
// Schedule length: n-1 steps, one send and one receive each; every rank
// sends its whole input but its own block once.
// Memory, C = Counts[Rank] elements of scratch: C to receive into; C for
// L, except on rank 0 (whose L is its input block, never written) and,
// not in place, on rank n-1 (which builds L in the receive buffer); in
// place, C for H, except on rank n-1 (which has no H). Not in place, H is
// the receive buffer; in place, the receive buffer is input only until
// the end, when the result is copied to its start. At most 3C in all.
// Restrictions: none.
//
// 5 ranks, the arrivals at rank 2 (x_k is rank k's block 2); every rank
// sends to r+s and receives from r-s:
//
//	step 1   from 1: L = x1 ⊕ x2
//	step 2   from 0: L = x0 ⊕ x1 ⊕ x2
//	step 3   from 4: H = x4
//	step 4   from 3: H = x3 ⊕ x4
//	end      result = L ⊕ H = x0 ⊕ x1 ⊕ x2 ⊕ x3 ⊕ x4

func init() {
	Register(Algorithm{Coll: ReduceScatter, Name: "pairwise",
		Desc: "n-1 pairwise exchange steps, rank-order fold; any op",
		Build: func(b *Builder, a *Args) error {
			return buildReduceScatterPairwise(b, a, a.Counts)
		}})
}

// buildReduceScatterPairwise is ReduceScatter's pairwise algorithm over
// blocks of counts[k] elements; ReduceScatterBlock's passes Size equal
// counts.
func buildReduceScatterPairwise(b *Builder, a *Args, counts []int) error {
	n, me := a.Size, a.Rank
	offs := make([]int, n+1) // bytes
	for k := range n {
		offs[k+1] = offs[k] + a.Bytes(counts[k])
	}
	c := offs[me+1] - offs[me]
	in := Ref{BufSend, 0, offs[n]}
	if a.InPlace {
		in = Ref{BufRecv, 0, offs[n]}
	}
	out := Ref{BufRecv, 0, c}
	block := func(k int) Ref { return in.Sub(offs[k], offs[k+1]-offs[k]) }
	if n == 1 || offs[n] == 0 {
		if !a.InPlace && c > 0 {
			b.Copy(block(me), out)
			return nil
		}
		return nil
	}
	p := newRedPieces(b, a)

	// L and H, and T to receive into; see the header
	var lo, hi, tmp Ref
	if c > 0 {
		tmp = b.Scratch(c)
		switch {
		case me == 0:
			lo = block(0) // never written: no arrival comes before it
		case me == n-1 && !a.InPlace:
			lo = out
		default:
			lo = b.Scratch(c)
		}
		if me < n-1 {
			hi = out
			if a.InPlace {
				hi = b.Scratch(c)
			}
		}
		if lo != block(me) {
			b.Copy(block(me), lo)
			b.Fence()
		}
	}
	for s := 1; s < n; s++ {
		dst, src := (me+s)%n, (me-s+n)%n
		p.send(dst, block(dst))
		switch {
		case c == 0:
		case src < me: // L = x_src ⊕ L
			p.reduce(tmp, lo, p.recv(src, tmp))
		case src == n-1: // the first arrival of H
			p.recv(src, hi)
		default: // H = x_src ⊕ H
			p.reduce(tmp, hi, p.recv(src, tmp))
		}
		b.Fence()
	}
	switch {
	case c == 0:
	case me == n-1: // no H: L is the result
		if lo != out {
			b.Copy(lo, out)
		}
	default:
		p.reduce(lo, hi)
		if hi != out { // in place, after every input block was sent
			b.Fence()
			b.Copy(hi, out)
		}
	}
	return nil
}
