package coll

// Scan "linear": the prefix travels down the ranks in one pipelined chain,
// in rank order, so it serves non-commutative ops too.
//
// Source: Open MPI's ompi_coll_base_scan_intra_linear (rank r waits for
// r-1's result, folds its own input in on the right and passes the result
// to r+1), pipelined by segment as Open MPI's chain broadcast is: a rank
// forwards piece k of its result while piece k+1 of r-1's is on its way.
//
// Why: where ranks share cores (Args.Oversubscribed) the cores' total work
// is what costs, not the rounds. Recursive doubling reduces up to twice per
// round on every rank, ⌈log2 p⌉ rounds, some 2·p·log2 p vector reductions
// in all; the chain does p-1, one per rank, and each reduction lands in the
// result as the message arrives (a fused receive-reduce, fuse.go). With a
// core per rank its p-1 hops are the longer path, so the rules pick it only
// for oversubscribed worlds.
//
// Schedule length: p-1 hops plus S-1 pieces of pipeline (S pieces of at
// most Args.Segment bytes, scanSegment without a bound). Messages: p-1 of
// Count elements, in S pieces. Memory: Count elements of scratch, the
// landing area of transports that cannot reduce as they receive.
// Restrictions: none.
//
// 4 ranks, 2 pieces (x[a..b] is x_a ⊕ … ⊕ x_b, piece k in brackets):
//
//	rank 0       rank 1             rank 2             rank 3
//	x0[0] -----> x[0..1][0] ------> x[0..2][0] ------> x[0..3][0]
//	x0[1] -----> x[0..1][1] ------> x[0..2][1] ------> x[0..3][1]
//	(piece 1 leaves rank 0 while rank 1 reduces piece 0)

func init() {
	Register(Algorithm{Coll: Scan, Name: "linear",
		Desc:  "a pipelined chain in rank order (Open MPI's linear scan); fewest reductions, for ranks that share cores",
		Build: buildScanLinear})
}

// scanSegment is the piece size of a linear scan without Args.Segment:
// small enough that the next rank starts reducing while this one works
// on the rest, large enough that a piece's hand-over (on a shared core,
// a goroutine switch) is small beside its reduction. It is under the
// eager limit of every link (peer.LazyFrame), so a piece that arrives
// before its receive is buffered rather than announced.
const scanSegment = 16 << 10

func buildScanLinear(b *Builder, a *Args) error {
	c := a.Bytes(a.Count)
	n, rank := a.Size, a.Rank
	out := Ref{BufRecv, 0, c}
	in := Ref{BufSend, 0, c}
	if a.InPlace {
		in = out
	}
	if c == 0 || n == 1 && a.InPlace {
		return nil
	}
	if rank == 0 || n == 1 {
		if !a.InPlace {
			b.Copy(in, out)
		}
		if n > 1 { // the input leaves as it is: it is rank 0's result
			p := scanPieces(b, a)
			p.send(1, in)
		}
		return nil
	}
	p := scanPieces(b, a)
	// R = x_r first, then the prefix is folded in on its left piece by
	// piece: R_k = P_k ⊕ R_k
	var mine []StepID
	if !a.InPlace {
		mine = p.copy(in, out)
	}
	// piece k is received after piece k-1 is reduced, so the receive and
	// its reduction fuse (fuse.go: no other receive from r-1 in between),
	// and leaves after piece k-1 left: the receiver matches pieces in the
	// order they were sent
	prefix := b.Scratch(c)
	reduced, sent := rtNone, rtNone
	for k := range p.count(c) {
		got := b.Recv(rank-1, p.piece(prefix, k), rtDeps(reduced)...)
		deps := []StepID{got}
		if mine != nil {
			deps = append(deps, mine[k])
		}
		reduced = b.Reduce(p.piece(prefix, k), p.piece(out, k), deps...)
		if rank < n-1 {
			sent = b.Send(rank+1, p.piece(out, k), rtDeps(reduced, sent)...)
		}
	}
	return nil
}

// scanPieces is the piece emitter of the linear scan: Args.Segment's
// pieces, or scanSegment's without one.
func scanPieces(b *Builder, a *Args) redPieces {
	p := newRedPieces(b, a)
	if p.per == 0 {
		p.per = max(1, scanSegment/a.ElemSize) * a.ElemSize
	}
	return p
}
