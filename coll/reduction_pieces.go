package coll

import "github.com/meshmpi/meshmpi/coll/internal/topo"

// redPieces emits the messages of the allreduce, reduce-scatter and scan
// algorithms as chains of pieces of at most Args.Segment bytes (rounded
// down to whole elements, at least one element; 0 means whole messages).
// Both sides of a message cut it the same way, so the k-th piece sent
// meets the k-th piece received, and a reduction can start on piece k
// while piece k+1 is still on the wire.
type redPieces struct {
	b   *Builder
	per int // bytes per piece, a whole number of elements; 0: unbounded
}

func newRedPieces(b *Builder, a *Args) redPieces {
	p := redPieces{b: b}
	if a.Segment > 0 {
		p.per = max(1, a.Segment/a.ElemSize) * a.ElemSize
	}
	return p
}

// count returns the pieces of an n-byte message; 0 when n is 0, which
// both sides skip.
func (p redPieces) count(n int) int { return topo.Pieces(n, p.per) }

// piece returns piece k of r.
func (p redPieces) piece(r Ref, k int) Ref {
	off, n := topo.Piece(r.Len, p.per, k)
	return r.Sub(off, n)
}

// send sends r to peer as a chain of pieces, the first after deps (after
// the last fence when none) and each after the one before it. It returns
// the pieces' steps; none for an empty r.
func (p redPieces) send(peer int, r Ref, deps ...StepID) []StepID {
	return p.chain(r, deps, func(x Ref, d []StepID) StepID { return p.b.Send(peer, x, d...) })
}

// recv receives r from peer as a chain of pieces, like send.
func (p redPieces) recv(peer int, r Ref, deps ...StepID) []StepID {
	return p.chain(r, deps, func(x Ref, d []StepID) StepID { return p.b.Recv(peer, x, d...) })
}

func (p redPieces) chain(r Ref, deps []StepID, add func(Ref, []StepID) StepID) []StepID {
	ids := make([]StepID, p.count(r.Len))
	for k := range ids {
		if k > 0 {
			deps = []StepID{ids[k-1]}
		}
		ids[k] = add(p.piece(r, k), deps)
	}
	return ids
}

// reduce adds dst = src ⊕ dst piece by piece; piece k waits for piece k
// of every non-nil list in after (a receive of src, a send still reading
// dst), or for the last fence when there is none.
func (p redPieces) reduce(src, dst Ref, after ...[]StepID) []StepID {
	return p.local(src, dst, after, p.b.Reduce)
}

// copy adds dst = src piece by piece, like reduce.
func (p redPieces) copy(src, dst Ref, after ...[]StepID) []StepID {
	return p.local(src, dst, after, p.b.Copy)
}

func (p redPieces) local(src, dst Ref, after [][]StepID, add func(Ref, Ref, ...StepID) StepID) []StepID {
	ids := make([]StepID, p.count(dst.Len))
	for k := range ids {
		var deps []StepID
		for _, a := range after {
			if a != nil {
				deps = append(deps, a[k])
			}
		}
		ids[k] = add(p.piece(src, k), p.piece(dst, k), deps...)
	}
	return ids
}

// reduceIO returns the input (inLen bytes) and output (outLen bytes) of a
// reduction collective per args.go's conventions, and reports done when the
// schedule needs no exchange at all: an empty message, or a group of one
// (a copy, unless in place).
func reduceIO(b *Builder, a *Args, inLen, outLen int) (in, out Ref, done bool) {
	in, out = Ref{BufSend, 0, inLen}, Ref{BufRecv, 0, outLen}
	if a.InPlace {
		in = Ref{BufRecv, 0, inLen}
	}
	if outLen == 0 || a.Size == 1 {
		if a.Size == 1 && !a.InPlace && outLen > 0 {
			b.Copy(in.Sub(0, outLen), out)
		}
		return in, out, true
	}
	return in, out, false
}

// foldExtra is an extra rank's whole part in a folded recursive-doubling
// schedule (topo.RecDbl): its input goes to its host, rank-1, and the
// result comes back into out, after the input has left when they share
// memory (in place).
func (p redPieces) foldExtra(rank int, in, out Ref, inPlace bool) {
	sent := p.send(rank-1, in)
	var deps []StepID
	if inPlace {
		deps = sent[len(sent)-1:]
	}
	p.recv(rank-1, out, deps...)
}

// foldedStart begins a reduction over the folded recursive-doubling
// pattern (topo.RecDbl): it returns the pattern, the piece emitter and the
// input and output, and done when nothing is left to build: no exchange is
// needed (reduceIO), or the rank is an extra, whose whole part is the fold.
func foldedStart(b *Builder, a *Args, inLen, outLen int) (f topo.RecDbl, p redPieces, in, out Ref, done bool) {
	in, out, done = reduceIO(b, a, inLen, outLen)
	if done {
		return f, p, in, out, true
	}
	f, p = topo.NewRecDbl(a.Size), newRedPieces(b, a)
	if f.Role(a.Rank) == topo.Extra {
		p.foldExtra(a.Rank, in, out, a.InPlace)
		return f, p, in, out, true
	}
	return f, p, in, out, false
}
