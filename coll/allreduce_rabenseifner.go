package coll

// Allreduce "rabenseifner": a recursive-halving reduce-scatter followed by
// a recursive-doubling allgather.
//
// Source: R. Rabenseifner, "Optimization of collective reduction
// operations" (ICCS 2004), and Thakur, Rabenseifner and Gropp,
// "Optimization of collective communication operations in MPICH" (IJHPCA
// 2005); MPICH's MPIR_Allreduce_intra_reduce_scatter_allgather and
// libNBC's allred_sched_redscat_allgather. For a non-power-of-two size the
// extras hand their whole input to their hosts first and get the result
// last (topo.RecDbl, the same fold as recursive_doubling). The Count
// elements are cut into Pof2 near-equal blocks, one per participant
// (topo.Block; empty ones when Count < Pof2, whose messages both sides
// skip, so no CountGESize restriction is needed). Halving round i
// exchanges half of the range still held with the partner at distance
// Pof2/2^(i+1), so each participant ends with its own block reduced over
// everyone; doubling retraces the rounds backwards and gathers the blocks.
// Halves are combined out of rank order, hence Requires: Commutative.
//
// Schedule length: 2·log2 Pof2 rounds, plus 2 for a non-power-of-two
// size; a participant sends and receives about 2·Count elements in all,
// against Count·log2 p for recursive doubling.
// Memory: the largest half received, Count/2 elements of scratch (Count
// on a host in place, which receives its extra's whole input). Not in
// place, the first reduction reads the send buffer and writes the
// receive buffer, so nothing is copied.
// Restrictions: Commutative.
//
// 6 ranks (Pof2 4, Rem 2), participants p0..p3 = ranks 0 2 4 5; halving
// pairs p0-p2 and p1-p3 first (distance 2), then p0-p1 and p2-p3. x01 is x0 ⊕ x1; b0-1:014 is
// blocks 0 to 1 reduced over ranks 0, 1 and 4.
//
//	          rank 0      rank 1      rank 2      rank 3      rank 4      rank 5
//	fold      x01 <------ x1          x23 <------ x3
//	halve 0   b0-1:014 <------------------------------------> b2-3:014
//	                                  b0-1:235 <------------------------> b2-3:235
//	halve 1   b0:all <--------------> b1:all                  b2:all <--> b3:all
//	double 1  b0-1 <----------------> b0-1                    b2-3 <----> b2-3
//	double 0  b0-3 <----------------------------------------> b0-3
//	                                  b0-3 <----------------------------> b0-3
//	unfold    b0-3 -----> b0-3        b0-3 -----> b0-3

import "github.com/meshmpi/meshmpi/coll/internal/topo"

func init() {
	Register(Algorithm{Coll: Allreduce, Name: "rabenseifner",
		Desc:     "recursive-halving reduce-scatter + recursive-doubling allgather; large messages",
		Requires: Commutative,
		Build:    buildAllreduceRabenseifner})
}

func buildAllreduceRabenseifner(b *Builder, a *Args) error {
	total := a.Bytes(a.Count)
	f, p, in, out, done := foldedStart(b, a, total, total)
	if done {
		return nil
	}
	rank := a.Rank
	blocks := func(lo, hi int) (off, n int) {
		lo, hi = topo.BlockOff(a.Count, f.Pof2, lo), topo.BlockOff(a.Count, f.Pof2, hi)
		return a.Bytes(lo), a.Bytes(hi - lo)
	}
	h := redHalving{b: b, p: p, f: f, rank: rank, in: in, acc: out, holds: a.InPlace, blocks: blocks}
	h.reduceScatter()
	v := f.NewRank(rank)
	for i := f.Rounds - 1; i >= 0; i-- { // doubling: gather the blocks back
		q := f.HalvingPartner(v, i)
		p.send(f.OrigRank(q), h.part(out, v, i))
		p.recv(f.OrigRank(q), h.part(out, q, i))
		b.Fence()
	}
	if f.Role(rank) == topo.Host {
		p.send(rank+1, out)
	}
	return nil
}

// redHalving emits the fold and the recursive-halving reduce-scatter of
// a participant: Rabenseifner's first half, and ReduceScatterBlock's
// recursive_halving.
type redHalving struct {
	b     *Builder
	p     redPieces
	f     topo.RecDbl
	rank  int
	in    Ref  // the rank's input
	acc   Ref  // where the blocks are reduced, laid out as in
	holds bool // acc holds the input already (allreduce in place)
	// blocks returns the byte range, in in and in acc, of the blocks of
	// the participants [lo, hi)
	blocks func(lo, hi int) (off, n int)
	// final, if set, is where the last round's fold lands instead of its
	// part of acc: the caller's output, exactly that part's size, which no
	// step reads. The part's current contents are copied there while the
	// partner's copy is on its way, and the received data is reduced
	// straight in (a fused receive-reduce): no later copy out of acc.
	final Ref
}

// part returns the part of r (in or acc) holding the blocks participant w
// keeps after halving round i.
func (h *redHalving) part(r Ref, w, i int) Ref {
	off, n := h.blocks(h.f.HalvingRange(w, i))
	return r.Sub(off, n)
}

// reduceScatter leaves in acc, at its own offset, the participant's block
// reduced over every rank, and on a host its extra's too. Until the first
// reduction acc need not hold the input (holds false): that reduction
// reads in and writes into acc, where the data was received, so nothing
// is copied. Rounds are fenced: the scratch is reused every round.
func (h *redHalving) reduceScatter() {
	b, p, f := h.b, h.p, h.f
	v := f.NewRank(h.rank)
	host := f.Role(h.rank) == topo.Host
	tmp := h.scratch(v, host)
	// fold folds into r, a part of acc, the same part of peer's data
	fold := func(peer int, r Ref) {
		if h.holds {
			got := p.recv(peer, tmp.Sub(0, r.Len))
			p.reduce(tmp.Sub(0, r.Len), r, got)
		} else { // r is unused yet: receive there, reduce the input in
			got := p.recv(peer, r)
			p.reduce(Ref{h.in.Buf, h.in.Off + r.Off - h.acc.Off, r.Len}, r, got)
		}
		h.holds = true
		b.Fence()
	}
	if host {
		fold(h.rank+1, h.acc)
	}
	for i := range f.Rounds {
		q := f.HalvingPartner(v, i)
		src := h.in
		if h.holds {
			src = h.acc
		}
		// the halves are disjoint: the send and the fold do not meet
		p.send(f.OrigRank(q), h.part(src, q, i))
		if i == f.Rounds-1 && h.final.Len > 0 {
			h.foldFinal(f.OrigRank(q), h.part(src, v, i), tmp)
			continue
		}
		fold(f.OrigRank(q), h.part(h.acc, v, i))
	}
}

// foldFinal is the last round's fold into h.final: what this rank holds
// of its part (cur, in the input or in acc) is copied there, and peer's
// copy of the part is received into tmp (or fresh scratch) and reduced in.
// The reduction waits for the receive and the copy only, so it fuses with
// the receive.
func (h *redHalving) foldFinal(peer int, cur, tmp Ref) {
	p, n := h.p, h.final.Len
	if tmp.Len < n {
		tmp = h.b.Scratch(n)
	}
	tmp = tmp.Sub(0, n)
	copied := p.copy(cur, h.final)
	got := p.recv(peer, tmp)
	p.reduce(tmp, h.final, got, copied)
	h.holds = true
	h.b.Fence()
}

// scratch reserves the receive buffer of reduceScatter: what the first
// fold that finds acc holding the input receives, the largest.
func (h *redHalving) scratch(v int, host bool) Ref {
	need, holds := 0, h.holds
	if host {
		if holds {
			need = h.in.Len
		}
		holds = true
	}
	for i := range h.f.Rounds {
		if holds {
			_, n := h.blocks(h.f.HalvingRange(v, i))
			need = max(need, n)
			break
		}
		holds = true
	}
	if need == 0 {
		return Ref{}
	}
	return h.b.Scratch(need)
}
