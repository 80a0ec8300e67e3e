package coll

// Scan "recursive_doubling": MPICH's recursive-doubling prefix reduction,
// in rank order, so it serves non-commutative ops too.
//
// Source: MPICH's MPIR_Scan_intra_recursive_doubling (after Thakur, Gropp
// and Toonen). In round i rank r exchanges with r^2^i, when that rank
// exists (topo.XorPartner; no fold is needed, a rank without a partner
// sits the round out). Each rank carries a partial P, the fold of its
// aligned group of 2^i ranks, which it sends; from a lower partner it
// prepends the received partial to both P and its result R, and from a
// higher partner it appends it to P alone. Every reduction has the lower
// ranks' data on the left, so R ends as x_0 ⊕ … ⊕ x_r.
//
// Schedule length: ⌈log2 p⌉ rounds, one exchange of Count elements each.
// Memory: 2·Count elements of scratch: P and the receive buffer alternate
// roles (appending to P writes the received buffer, which becomes P, where
// MPICH copies it back), and P starts as the input itself unless a lower
// partner's prepend comes before any append. P is not updated in a rank's
// last exchange, which nothing reads after.
// Restrictions: none.
//
// 5 ranks; x[a..b] is x_a ⊕ … ⊕ x_b, R after each round:
//
//	          rank 0    rank 1    rank 2    rank 3    rank 4
//	round 0   0 <-> 1             2 <-> 3             (no 5)
//	  R       x0        x[0..1]   x2        x[2..3]   x4
//	round 1   0 <-----------> 2   1 <-----------> 3   (no 6)
//	  R       x0        x[0..1]   x[0..2]   x[0..3]   x4
//	round 2   0 <---------------------------------------> 4
//	  R       x0        x[0..1]   x[0..2]   x[0..3]   x[0..4]

import "github.com/meshmpi/meshmpi/coll/internal/topo"

func init() {
	Register(Algorithm{Coll: Scan, Name: "recursive_doubling",
		Desc: "recursive doubling in rank order (MPICH); any op",
		Build: func(b *Builder, a *Args) error {
			return buildScanRecursiveDoubling(b, a, false)
		}})
}

// buildScanRecursiveDoubling builds Scan, or Exscan when exclusive: then
// R starts empty, the first lower partner's partial is copied into it,
// and rank 0's receive buffer is never written.
func buildScanRecursiveDoubling(b *Builder, a *Args, exclusive bool) error {
	c := a.Bytes(a.Count)
	n, rank := a.Size, a.Rank
	out := Ref{BufRecv, 0, c}
	in := Ref{BufSend, 0, c}
	if a.InPlace {
		in = out
	}
	if c == 0 || n == 1 && (a.InPlace || exclusive) {
		return nil
	}
	if n == 1 {
		b.Copy(in, out)
		return nil
	}
	p := newRedPieces(b, a)

	// The rounds this rank takes part in; P is needed after round k if a
	// later round sends it.
	var peers []int
	for i := range topo.XorRounds(n) {
		if q := topo.XorPartner(rank, n, i); q >= 0 {
			peers = append(peers, q)
		}
	}
	needP := func(k int) bool { return k < len(peers)-1 }
	// P can start as the input, which is never written, unless a
	// prepend to P comes before the first append moves P to scratch.
	copyP := false
	for k, q := range peers {
		if needP(k) {
			copyP = q < rank
			break
		}
	}
	s0, s1 := b.Scratch(c), b.Scratch(c)
	P, F, spare := in, s0, s1
	if copyP {
		P, F, spare = s0, s1, Ref{}
		b.Copy(in, P)
	}
	var copied []StepID // R = x_r, piece by piece, until the first fence
	if !a.InPlace && !exclusive {
		if copyP {
			b.Copy(in, out)
		} else {
			// the first round sends the input and receives into scratch
			// while this copy runs; only its fold into R waits for it
			copied = p.copy(in, out)
		}
	}
	if copyP {
		b.Fence()
	}
	haveR := !exclusive // R holds something to prepend to
	for k, q := range peers {
		sent := p.send(q, P)
		got := p.recv(q, F)
		switch {
		case q < rank:
			// R may be P itself (in place, P not yet moved), so it is
			// written after the send has read it
			if haveR {
				p.reduce(F, out, got, sent, copied)
			} else {
				p.copy(F, out, got, sent)
				haveR = true
			}
			if needP(k) { // P = F ⊕ P
				p.reduce(F, P, got, sent)
			}
		case needP(k): // F = P ⊕ F becomes P
			p.reduce(P, F, got)
			if spare.Len > 0 { // P was the input
				P, F, spare = F, spare, Ref{}
			} else {
				P, F = F, P
			}
		}
		b.Fence()
	}
	return nil
}
