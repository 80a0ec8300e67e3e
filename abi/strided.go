//go:build cgo

package abi

import (
	"github.com/meshmpi/meshmpi/op"
)

// Strided typemaps. A vector of 10⁸–10⁹ blocks (MPICH's large_vec sends
// one of 135M longs, large_count asks a vector of 1G blocks its elements)
// cannot be flattened: a run takes 24 bytes in the binding and a segment
// 24 more in the Go type's layout, gigabytes where the data itself may
// be smaller. Past maxRuns a type made by repetition (contiguous, vector,
// hvector, resized and dup, of a flattened or strided old type) keeps its
// shape instead: nested levels of (count, stride) over one flattened
// inner block, walked by the pack, unpack, span and element paths in
// memory O(depth). Smaller types keep the flat typemap, and with it every
// path they had (Go's typed point-to-point on the buffer in place).
//
// A strided type is not compiled by the Go API (its Commit would flatten
// it): point-to-point and collectives move it through a packed copy the
// binding makes (typed.go's staging), and the calls that take the Go type
// itself (Alltoallw's w-forms, external32) refuse it with an error naming
// the type.

// repeat is a constructor's typemap when it is a repetition: n blocks of
// bl consecutive elements of old, block i at byte i*step. Contiguous is
// one block of n; resized one block of one.
type repeat struct {
	n, bl, step int
	old         *typeEntry
}

// nest is one nesting of a strided typemap: n children, child i at byte
// i*step from the level's origin, each size packed bytes and basics basic
// elements.
type nest struct {
	n, step, size, basics int
}

// strided is a typemap kept as levels (outermost first) over an inner
// block, flattened.
type strided struct {
	lv     []nest
	in     *flat // the inner block: runs and layout, one element of it
	runs   int   // basic runs of one element, saturated at satMax
	lo, hi int   // the bytes one element touches, from its origin
	// the inner block as one segment (off, n), n > 0: the common case of a
	// vector of basic elements, moved with a copy, not a layout walk
	off, n int
}

const (
	satMax   = 1 << 62 // saturated products of counts
	maxInner = 1 << 16 // runs an inner block may flatten into
)

// mulSat is a·b for non-negative a, b, satMax when it would exceed it.
func mulSat(a, b int) int {
	if a == 0 || b == 0 {
		return 0
	}
	if a > satMax/b {
		return satMax
	}
	return a * b
}

// runsOf is the count of basic runs of one element of a flattened (or
// strided) type.
func (e *typeEntry) runsOf() int {
	if e.str != nil {
		return e.str.runs
	}
	return len(e.runs)
}

// repeatRuns is an upper bound of the runs r flattens into.
func (r *repeat) runs() int {
	if r.old.dense() {
		return mulSat(r.n, min(r.bl, 1))
	}
	return mulSat(mulSat(r.n, r.bl), r.old.runsOf())
}

// buildStrided makes e's strided typemap from its repetition: the old
// type is flattened (or strided) already.
func (e *typeEntry) buildStrided() error {
	f, r := e.flat, e.flat.rep
	o := r.old
	s := &strided{runs: r.runs()}
	add := func(l nest) {
		if l.n != 1 { // one child: the level adds nothing but its origin, 0
			s.lv = append(s.lv, l)
		}
	}
	add(nest{r.n, r.step, r.bl * o.size(), r.bl * o.basics})
	switch {
	case o.str == nil && (o.dense() || mulSat(r.bl, len(o.runs)) <= maxInner):
		// bl elements of old flatten into the inner block
		in := &flat{basics: r.bl * o.basics}
		var segs []op.Segment
		if o.dense() {
			in.runs = []brun{{0, r.bl * o.runs[0].n, o.runs[0].h}}
		} else {
			for i := range r.bl {
				for _, b := range o.runs {
					in.runs = appendBrun(in.runs, i*o.extent()+b.off, b.n, b.h)
				}
			}
		}
		for _, b := range in.runs {
			segs = op.AppendSegment(segs, b.off, b.n*dtypes[b.h].size)
		}
		in.lay = op.NewLayout(segs, r.bl*o.extent())
		s.in = in
	case o.str == nil:
		add(nest{r.bl, o.extent(), o.size(), o.basics})
		s.in = o.flat
	default:
		add(nest{r.bl, o.extent(), o.size(), o.basics})
		s.lv = append(s.lv, o.str.lv...)
		s.in = o.str.in
	}
	if segs := s.in.lay.Segments(); len(segs) == 1 {
		s.off, s.n = segs[0].Off, segs[0].Len
	}
	s.lo = e.g.TrueLowerBound()
	s.hi = s.lo + e.g.TrueExtent()
	f.basics = mulSat(mulSat(r.n, r.bl), o.basics)
	if o.basics > 0 {
		f.basic, f.mixed = o.basic, o.mixed
	}
	if f.mixed {
		f.basic = dtype{}
	}
	f.str = s
	return nil
}

// move packs (or unpacks) bytes [pos, pos+len(p)) of the packed stream of
// the elements whose first origin is buf[origin], as op.Layout's kernels
// do, walking the levels.
func (s *strided) move(p, buf []byte, origin, pos, size, extent int, pack bool) {
	if len(p) == 0 || size == 0 {
		return
	}
	k, r := pos/size, pos%size
	base := origin + k*extent
	for len(p) > 0 {
		p = s.walk(0, p, buf, base, r, pack)
		r, base = 0, base+extent
	}
}

// walk moves p from and to level i's children at base, starting r packed
// bytes into the level, and returns what is left of p.
func (s *strided) walk(i int, p, buf []byte, base, r int, pack bool) []byte {
	if i == len(s.lv) {
		in := &s.in.lay
		n := min(len(p), in.Size()-r)
		switch {
		case s.n > 0:
			o := base + s.off + r
			if pack {
				copy(p[:n], buf[o:o+n])
			} else {
				copy(buf[o:o+n], p[:n])
			}
		case pack:
			in.Pack(p[:n], buf, base, r)
		default:
			in.Unpack(buf, base, r, p[:n])
		}
		return p[n:]
	}
	l := &s.lv[i]
	k := r / l.size
	r -= k * l.size
	if s.n > 0 && i == len(s.lv)-1 { // children of one segment each: a copy apiece
		return s.runs1(l, k, p, buf, base, r, pack)
	}
	for ; k < l.n && len(p) > 0; k++ {
		p = s.walk(i+1, p, buf, base+k*l.step, r, pack)
		r = 0
	}
	return p
}

// runs1 is walk over the last level when the inner block is one
// segment: child k on, r bytes into it.
func (s *strided) runs1(l *nest, k int, p, buf []byte, base, r int, pack bool) []byte {
	sz := s.n
	o := base + s.off + k*l.step
	for ; k < l.n && len(p) > 0; k++ {
		n := min(len(p), sz-r)
		m := buf[o+r : o+r+n]
		if pack {
			op.CopyRun(p[:n], m)
		} else {
			op.CopyRun(m, p[:n])
		}
		p, r, o = p[n:], 0, o+l.step
	}
	return p
}

// span is the bytes count elements touch from the first one's origin,
// as op.Layout.Span.
func (e *typeEntry) span(count int) (lo, hi int) {
	s := e.str
	if s == nil {
		return e.lay.Span(count)
	}
	if count <= 0 || e.size() == 0 {
		return 0, 0
	}
	step := (count - 1) * e.extent()
	return s.lo + min(0, step), s.hi + max(0, step)
}

// pack copies bytes [pos, pos+len(dst)) of the packed stream of the
// elements whose first origin is buf[origin] into dst.
func (e *typeEntry) pack(dst, buf []byte, origin, pos int) {
	if e.str != nil {
		e.str.move(dst, buf, origin, pos, e.size(), e.extent(), true)
		return
	}
	e.lay.Pack(dst, buf, origin, pos)
}

// unpack copies src, bytes [pos, pos+len(src)) of the packed stream, into
// the elements whose first origin is buf[origin].
func (e *typeEntry) unpack(buf []byte, origin, pos int, src []byte) {
	if e.str != nil {
		e.str.move(src, buf, origin, pos, e.size(), e.extent(), false)
		return
	}
	e.lay.Unpack(buf, origin, pos, src)
}

// contiguous reports whether count elements are one run of memory
// (op.Layout.Contiguous); a strided type never is.
func (e *typeEntry) contiguous(count int) (int, bool) {
	if e.str != nil {
		return 0, false
	}
	return e.lay.Contiguous(count)
}

// elementsIn counts the basic elements in the first rest bytes of runs,
// added to n: MPI_UNDEFINED when rest ends inside a basic element.
func elementsIn(runs []brun, rest, n int64) int64 {
	for _, r := range runs {
		if rest == 0 {
			break
		}
		bs := int64(dtypes[r.h].size)
		if k := rest / bs; k < int64(r.n) {
			if rest%bs != 0 {
				return undefined
			}
			return n + k
		}
		n += int64(r.n)
		rest -= int64(r.n) * bs
	}
	return n
}

// bytesIn is the bytes of the first rest basic elements of runs, added
// to b.
func bytesIn(runs []brun, rest, b int64) int64 {
	for _, r := range runs {
		if rest == 0 {
			break
		}
		k := min(rest, int64(r.n))
		b += k * int64(dtypes[r.h].size)
		rest -= k
	}
	return b
}

// descend walks the levels of a strided element for the first rest packed
// bytes (bytes true) or basic elements: the whole children it passes add
// their basic elements (or bytes) to acc; the rest falls in the inner
// block.
func (s *strided) descend(rest, acc int64, bytes bool) (int64, int64) {
	for _, l := range s.lv {
		unit, other := int64(l.basics), int64(l.size)
		if bytes {
			unit, other = other, unit
		}
		if unit == 0 {
			continue
		}
		k := rest / unit
		acc += k * other
		rest -= k * unit
	}
	return rest, acc
}
