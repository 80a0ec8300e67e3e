package coll

// Allreduce "ring": a ring reduce-scatter followed by a ring allgather,
// bandwidth-optimal for large messages.
//
// Source: Patarasuk and Yuan, "Bandwidth optimal all-reduce algorithms for
// clusters of workstations" (JPDC 2009); MPICH's iallreduce_tsp_ring.c,
// Gloo's allreduce_ring_chunked.h and libNBC's allred_sched_ring. The
// Count elements are cut into Size near-equal blocks (topo.Block; some
// are empty when Count < Size, and those messages are skipped on both
// sides). In reduce-scatter step s, rank r sends block r-s to r+1 and
// folds block r-s-1 from r-1 into its own, so after Size-1 steps it holds
// block r+1 reduced over every rank; allgather step t then passes block
// r+1-t on and receives block r-t. Blocks are reduced in ring order, not
// rank order, hence Requires: Commutative.
//
// The schedule is a DAG, not rounds: with a.Segment each block travels
// as a chain of pieces, and piece k of a block goes on as soon as piece k
// was reduced, so pieces of consecutive steps overlap on the ring.
//
// Schedule length: 2(p-1) steps; each rank sends and receives 2(p-1)/p of
// Count elements in all.
// Memory: none, or one block of scratch in place. Not in place, a
// received block lands in the receive buffer at its place and is reduced
// with the rank's own block from the send buffer; the reduce-scatter
// receives every block but the rank's own exactly once, so nothing is
// copied.
// Restrictions: Commutative.
//
// 5 ranks, blocks 0..4; after the reduce-scatter rank r holds block r+1.
// bK: xs is block K reduced over ranks xs.
//
//	step   rank 0         rank 1         rank 2         rank 3         rank 4
//	rs 0   b0:0 → 1       b1:1 → 2       b2:2 → 3       b3:3 → 4       b4:4 → 0
//	rs 1   b4:40 → 1      b0:01 → 2      b1:12 → 3      b2:23 → 4      b3:34 → 0
//	rs 2   b3:340 → 1     b4:401 → 2     b0:012 → 3     b1:123 → 4     b2:234 → 0
//	rs 3   b2:2340 → 1    b3:3401 → 2    b4:4012 → 3    b0:0123 → 4    b1:1234 → 0
//	holds  b1 (all)       b2 (all)       b3 (all)       b4 (all)       b0 (all)
//	ag 0   b1 → 1         b2 → 2         b3 → 3         b4 → 4         b0 → 0
//	ag 1..3: pass on the block received in the step before

import "github.com/meshmpi/meshmpi/coll/internal/topo"

func init() {
	Register(Algorithm{Coll: Allreduce, Name: "ring",
		Desc:     "ring reduce-scatter + ring allgather; bandwidth-optimal, pipelined by Segment",
		Requires: Commutative,
		Build:    buildAllreduceRing})
}

func buildAllreduceRing(b *Builder, a *Args) error {
	total := a.Bytes(a.Count)
	in, out, done := reduceIO(b, a, total, total)
	if done {
		return nil
	}
	n := a.Size
	p := newRedPieces(b, a)
	ring := topo.Ring{Rank: a.Rank, Size: n}
	// the allgather passes blocks as a ring allgather would from a rank
	// that starts with block r+1
	agRing := topo.Ring{Rank: (a.Rank + 1) % n, Size: n}
	blk := func(r Ref, i int) Ref {
		off, l := topo.Block(a.Count, n, i)
		return r.Sub(a.Bytes(off), a.Bytes(l))
	}
	var tmp Ref
	if a.InPlace {
		_, l := topo.Block(a.Count, n, 0) // block 0 is a largest one
		tmp = b.Scratch(a.Bytes(l))
	}

	// Per block and piece, the step that last wrote it (a reduction or
	// an allgather receive) and the reduce-scatter send that read it.
	wrote := make([][]StepID, n)
	sentRS := make([][]StepID, n)
	tmpRead := make([]StepID, p.count(tmp.Len)) // in place: last reduction reading tmp piece k
	for k := range tmpRead {
		tmpRead[k] = -1
	}
	lastSend, lastRecv := StepID(-1), StepID(-1) // chains: one tag per pair
	deps := func(ids ...StepID) []StepID {
		var d []StepID
		for _, id := range ids {
			if id >= 0 {
				d = append(d, id)
			}
		}
		return d
	}
	sendBlock := func(src Ref, i int, first bool) []StepID {
		r := blk(src, i)
		ids := make([]StepID, p.count(r.Len))
		for k := range ids {
			ready := StepID(-1)
			if !first {
				ready = wrote[i][k]
			}
			ids[k] = b.Send(ring.Right(), p.piece(r, k), deps(lastSend, ready)...)
			lastSend = ids[k]
		}
		return ids
	}

	for s := range ring.Steps() {
		si, ri := ring.SendBlock(s), ring.RecvBlock(s)
		if s == 0 {
			sentRS[si] = sendBlock(in, si, true)
		} else {
			sentRS[si] = sendBlock(out, si, false)
		}
		dst := blk(out, ri)
		wrote[ri] = make([]StepID, p.count(dst.Len))
		for k := range wrote[ri] {
			dk := p.piece(dst, k)
			if a.InPlace {
				tk := p.piece(tmp.Sub(0, dst.Len), k)
				lastRecv = b.Recv(ring.Left(), tk, deps(lastRecv, tmpRead[k])...)
				wrote[ri][k] = b.Reduce(tk, dk, lastRecv)
				tmpRead[k] = wrote[ri][k]
			} else { // the block's place in out is unused until now
				lastRecv = b.Recv(ring.Left(), dk, deps(lastRecv)...)
				wrote[ri][k] = b.Reduce(p.piece(blk(in, ri), k), dk, lastRecv)
			}
		}
	}
	for t := range ring.Steps() {
		si, ri := agRing.SendBlock(t), agRing.RecvBlock(t)
		sendBlock(out, si, false)
		// block ri was sent in reduce-scatter step t; its place is free
		// once that send has read it
		dst := blk(out, ri)
		wrote[ri] = make([]StepID, p.count(dst.Len))
		for k := range wrote[ri] {
			lastRecv = b.Recv(ring.Left(), p.piece(dst, k), deps(lastRecv, sentRS[ri][k])...)
			wrote[ri][k] = lastRecv
		}
	}
	return nil
}
