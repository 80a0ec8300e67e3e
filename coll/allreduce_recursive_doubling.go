package coll

// Allreduce "recursive_doubling": recursive doubling that keeps rank order,
// so it serves non-commutative ops too.
//
// Source: libNBC's allred_sched_recursivedoubling (nbc_iallreduce.c) and
// MPICH's MPIR_Allreduce_intra_recursive_doubling, with the fold of
// MPICH's recexchalgo (radix 2): for a non-power-of-two size the first
// 2·Rem ranks pair up and odd rank 2i+1 (an extra) hands its data to rank
// 2i (its host), which reduces them as x_2i ⊕ x_2i+1; the Pof2
// participants then exchange their whole accumulators for log2 Pof2
// rounds, and hosts send the result back to their extras. A participant
// always stands for a run of consecutive ranks (topo.RecDbl), and every
// reduction puts the lower side's data on the left, so the result is the
// rank-order fold for any associative op.
//
// Schedule length: ⌊log2 p⌋ rounds, plus 2 for a non-power-of-two p; each
// participant sends and receives Count elements per round.
// Memory: Count elements of scratch on participants, none on extras. The
// accumulator alternates between the receive buffer and the scratch, so a
// reduction with our own data on the left writes into the buffer just
// received instead of being copied back (MPICH copies); at most one local
// copy, at the start.
// Restrictions: none.
//
// 5 ranks (Pof2 4, Rem 1): rank 1 is the extra of rank 0; ranks 0 2 3 4
// are participants 0 1 2 3. x[a..b] is x_a ⊕ … ⊕ x_b in rank order.
//
//	          rank 0      rank 1      rank 2      rank 3      rank 4
//	fold      x[0..1] <-- x1
//	round 0   x[0..2] <-------------> x[0..2]     x[3..4] <-> x[3..4]
//	round 1   x[0..4] <-------------------------> x[0..4]
//	                                  x[0..4] <-------------> x[0..4]
//	unfold    x[0..4] --> x[0..4]

import "github.com/meshmpi/meshmpi/coll/internal/topo"

func init() {
	Register(Algorithm{Coll: Allreduce, Name: "recursive_doubling",
		Desc:  "recursive doubling with an order-keeping fold; any op, latency-optimal",
		Build: buildAllreduceRecursiveDoubling})
}

func buildAllreduceRecursiveDoubling(b *Builder, a *Args) error {
	n := a.Bytes(a.Count)
	f, p, in, out, done := foldedStart(b, a, n, n)
	if done {
		return nil
	}
	rank := a.Rank

	// The exchanges: the host's fold (receive only) and one per round.
	// left: our data is the left operand.
	type exchange struct {
		peer       int
		left, send bool
	}
	var xs []exchange
	if f.Role(rank) == topo.Host {
		xs = append(xs, exchange{rank + 1, true, false})
	}
	v := f.NewRank(rank)
	for i := range f.Rounds {
		q := f.Partner(v, i)
		xs = append(xs, exchange{f.OrigRank(q), q > v, true})
	}
	swaps := 0
	for _, x := range xs {
		if x.left {
			swaps++
		}
	}

	// A swap (left exchange) makes the buffer just received the
	// accumulator; pick the starting buffers so that the last one is out.
	tmp := b.Scratch(n)
	acc, free, spare := out, tmp, Ref{}
	switch {
	case a.InPlace && swaps%2 == 0:
	case a.InPlace:
		b.Copy(out, tmp)
		b.Fence()
		acc, free = tmp, out
	case xs[0].left: // the first reduction reads in; no copy
		acc, free, spare = in, out, tmp
		if swaps%2 == 0 {
			free, spare = tmp, out
		}
	default:
		acc, free = out, tmp
		if swaps%2 == 1 {
			acc, free = tmp, out
		}
		b.Copy(in, acc)
		b.Fence()
	}

	for _, x := range xs {
		var sent []StepID
		if x.send {
			sent = p.send(x.peer, acc)
		}
		got := p.recv(x.peer, free)
		if x.left { // free = acc ⊕ free, which becomes the accumulator
			p.reduce(acc, free, got)
			if spare.Len > 0 { // acc was the read-only input
				acc, free, spare = free, spare, Ref{}
			} else {
				acc, free = free, acc
			}
		} else { // acc = free ⊕ acc, once the send has read acc
			p.reduce(free, acc, got, sent)
		}
		b.Fence()
	}
	if f.Role(rank) == topo.Host {
		p.send(rank+1, acc)
	}
	return nil
}
