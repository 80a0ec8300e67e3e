package coll

// Allgather "ring".
//
// Source: MPICH allgather_intra_ring.c; Open MPI
// ompi_coll_base_allgather_intra_ring (coll_base_allgather.c). Pipelined
// by segments: a piece is forwarded as soon as it has arrived.
//
// Schedule length: n-1 steps of one send right and one receive left;
// with a.Segment each block is split into pieces, and piece i of a block
// is forwarded as soon as it has arrived, so the steps overlap. Every
// link carries n-1 blocks: bandwidth-optimal, latency (n-1)·α.
//
// Memory: none beyond the receive buffer. In place: yes.
//
// Restrictions: none (any n, count 0 gives an empty plan).
//
// At step s rank r sends block r-s to r+1 and receives block r-s-1 from
// r-1 (mod n), writing it in place; 5 ranks:
//
//	step   rank 0    rank 1    rank 2    rank 3    rank 4
//	0      b0 → 1    b1 → 2    b2 → 3    b3 → 4    b4 → 0
//	1      b4 → 1    b0 → 2    b1 → 3    b2 → 4    b3 → 0
//	2      b3 → 1    b4 → 2    b0 → 3    b1 → 4    b2 → 0
//	3      b2 → 1    b3 → 2    b4 → 3    b0 → 4    b1 → 0

import "github.com/meshmpi/meshmpi/coll/internal/topo"

func init() {
	Register(Algorithm{
		Coll: Allgather,
		Name: "ring",
		Desc: "n-1 steps around a ring, pipelined by segments; bandwidth-optimal for large messages",
		Build: func(b *Builder, a *Args) error {
			cb := a.Bytes(a.Count)
			if cb == 0 {
				return nil
			}
			ringAllgather(b, a, func(k int) Ref { return Ref{BufRecv, k * cb, cb} })
			return nil
		},
	})
}

// ringAllgather emits a ring allgather of the blocks block(k) of BufRecv
// (shared with Allgatherv, whose blocks differ in size and may be empty).
// Sends to the right are chained, and so are receives from the left,
// because one pair shares a tag; beyond that, piece i of step s waits only
// for piece i of step s-1 to have arrived.
func ringAllgather(b *Builder, a *Args, block func(k int) Ref) {
	r, n := a.Rank, a.Size
	mine, src := block(r), block(r)
	if !a.InPlace {
		src = Ref{BufSend, 0, mine.Len}
		if mine.Len > 0 {
			b.Copy(src, mine) // nothing else touches our own block
		}
	}
	g := topo.Ring{Rank: r, Size: n}
	sp := newMsgSplitter(b, a)
	lastSend, lastRecv := StepID(-1), StepID(-1)
	var prev, cur []StepID // the receive of each piece of the block that arrived at the previous step
	for s := range g.Steps() {
		from := src // step 0 forwards our own block straight from its source
		if s > 0 {
			from = block(g.SendBlock(s))
		}
		for i := range sp.pieces(from.Len) {
			deps := liveSteps(lastSend)
			if s > 0 {
				deps = append(deps, prev[i])
			}
			lastSend = b.Send(g.Right(), sp.piece(from, i), deps...)
		}
		into := block(g.RecvBlock(s))
		cur = cur[:0]
		for i := range sp.pieces(into.Len) {
			lastRecv = b.Recv(g.Left(), sp.piece(into, i), liveSteps(lastRecv)...)
			cur = append(cur, lastRecv)
		}
		prev, cur = cur, prev
	}
}

// msgSplitter emits transfers as chains of messages no longer than
// Args.Segment allows, shared by the all-to-all family's algorithms.
type msgSplitter struct {
	b   *Builder
	max int // bytes per message; 0: no bound
}

// newMsgSplitter bounds messages by a.Segment rounded down to whole
// elements, but at least one element.
func newMsgSplitter(b *Builder, a *Args) msgSplitter {
	if a.Segment <= 0 {
		return msgSplitter{b, 0}
	}
	e := max(a.ElemSize, 1)
	return msgSplitter{b, max(e, a.Segment/e*e)}
}

// pieces is the number of messages n bytes take; none for n = 0, so empty
// transfers are skipped on both sides alike.
func (sp msgSplitter) pieces(n int) int {
	switch {
	case n == 0:
		return 0
	case sp.max == 0:
		return 1
	}
	return (n + sp.max - 1) / sp.max
}

// piece is message i of r.
func (sp msgSplitter) piece(r Ref, i int) Ref {
	if sp.max == 0 {
		return r
	}
	off := i * sp.max
	return r.Sub(off, min(sp.max, r.Len-off))
}

// send emits r to peer as a chain of messages, the first after deps (or
// the last fence), and returns the last one, or -1 if r is empty.
func (sp msgSplitter) send(peer int, r Ref, deps ...StepID) StepID {
	last := StepID(-1)
	for i := range sp.pieces(r.Len) {
		if i > 0 {
			deps = []StepID{last}
		}
		last = sp.b.Send(peer, sp.piece(r, i), liveSteps(deps...)...)
	}
	return last
}

// recv is send's counterpart: it receives r from peer as a chain.
func (sp msgSplitter) recv(peer int, r Ref, deps ...StepID) StepID {
	last := StepID(-1)
	for i := range sp.pieces(r.Len) {
		if i > 0 {
			deps = []StepID{last}
		}
		last = sp.b.Recv(peer, sp.piece(r, i), liveSteps(deps...)...)
	}
	return last
}

// liveSteps drops the -1s standing for steps that were not emitted.
func liveSteps(ids ...StepID) []StepID {
	out := make([]StepID, 0, len(ids))
	for _, id := range ids {
		if id >= 0 {
			out = append(out, id)
		}
	}
	return out
}
