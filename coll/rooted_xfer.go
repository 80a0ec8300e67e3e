package coll

import "iter"

// Helpers shared by the rooted collectives (bcast, gather, scatter, reduce):
// segmenting a contiguous span into messages, and remembering which step
// filled which bytes so that forwarding waits for exactly the data it sends.

// rtNone stands for "no step" in dependency lists.
const rtNone StepID = -1

// rtDeps returns ids without rtNone. An empty result makes the step a root
// (or, after a Fence, depend on the fence).
func rtDeps(ids ...StepID) []StepID {
	out := ids[:0:0]
	for _, id := range ids {
		if id != rtNone {
			out = append(out, id)
		}
	}
	return out
}

// rtSeg returns the largest message a may send: Segment rounded down to
// whole elements but at least one element, or 0 for no bound.
func rtSeg(a *Args) int {
	if a.Segment <= 0 || a.ElemSize <= 0 {
		return 0
	}
	return max(a.ElemSize, a.Segment/a.ElemSize*a.ElemSize)
}

// rtSegs yields the (offset, length) of the messages that carry n bytes in
// messages of at most seg bytes (one message when seg is 0). It yields
// nothing for n == 0: both sides of a transfer skip empty messages.
func rtSegs(n, seg int) iter.Seq2[int, int] {
	return func(yield func(int, int) bool) {
		if seg <= 0 {
			seg = n
		}
		for off := 0; off < n; off += seg {
			if !yield(off, min(seg, n-off)) {
				return
			}
		}
	}
}

// rtFills records which step writes which bytes of an algorithm's logical
// byte space (for the tree collectives: blocks in relative rank order), so
// that a forwarded segment waits for exactly the steps that filled it. A
// receive fills its span in consecutive segments, so the record is a list
// of runs of equal segments, and a lookup costs one division per run
// rather than a scan of every segment: plans of many segments stay linear
// to build.
type rtFills []rtRun

// rtRun is a run of segments: ids[k] writes [lo + k·seg, lo + (k+1)·seg),
// the last one cut at hi.
type rtRun struct {
	lo, hi, seg int
	ids         []StepID
}

// add records that step id writes [lo, lo+n), n > 0.
func (f *rtFills) add(lo, n int, id StepID) {
	if k := len(*f) - 1; k >= 0 {
		r := &(*f)[k]
		if r.hi == lo && (r.hi-r.lo)%r.seg == 0 && n <= r.seg {
			r.hi += n
			r.ids = append(r.ids, id)
			return
		}
	}
	*f = append(*f, rtRun{lo, lo + n, n, []StepID{id}})
}

// over returns the steps that write any byte of [lo, hi).
func (f rtFills) over(lo, hi int) []StepID {
	var ids []StepID
	for _, r := range f {
		if r.lo < hi && lo < r.hi {
			ids = append(ids, r.ids[(max(lo, r.lo)-r.lo)/r.seg:(min(hi, r.hi)-1-r.lo)/r.seg+1]...)
		}
	}
	return ids
}

// rtPiece is a run [lo, hi) of blocks moved as one contiguous piece.
type rtPiece struct{ lo, hi int }

// rtCut returns [lo, hi) as pieces cut at w when lo < w < hi. The tree
// collectives cut a subtree's run of relative blocks where it wraps past
// rank N-1 to rank 0, which is where the root's buffer stops being
// contiguous in relative order; both sides of a transfer cut alike.
func rtCut(lo, hi, w int) []rtPiece {
	if lo < w && w < hi {
		return []rtPiece{{lo, w}, {w, hi}}
	}
	return []rtPiece{{lo, hi}}
}
