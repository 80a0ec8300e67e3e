package op

import "encoding/binary"

// Layouts: where the bytes of one element of a derived datatype lie, as a
// flat list of byte segments, and the pack/unpack kernels that move a
// packed byte stream in and out of such a layout.
//
// The datatype constructors (the meshmpi root package) compile a typemap
// into a Layout once, at commit; the kernels then run a tight loop over the
// segments with no allocation. The kernels work on any byte range of the
// packed stream (pos, len), not only on whole messages: a receive that is
// truncated stops mid-element, and a link that delivers a message in
// fragments can unpack each fragment where it lands.

// Segment is a run of Len bytes at byte offset Off from an element's
// origin. Pos is where the run starts in the element's packed stream.
type Segment struct{ Off, Len, Pos int }

// AppendSegment appends n bytes at off to segs in typemap order. When the
// bytes continue the last segment they extend it instead, so a layout
// whose runs follow each other in memory compiles to one segment. Runs
// are never reordered: the packed stream follows the typemap.
func AppendSegment(segs []Segment, off, n int) []Segment {
	if n <= 0 {
		return segs
	}
	if k := len(segs) - 1; k >= 0 && segs[k].Off+segs[k].Len == off {
		segs[k].Len += n
		return segs
	}
	pos := 0
	if k := len(segs) - 1; k >= 0 {
		pos = segs[k].Pos + segs[k].Len
	}
	return append(segs, Segment{Off: off, Len: n, Pos: pos})
}

// Layout is a compiled datatype: one element's segments and the distance
// between consecutive elements. The zero Layout describes an empty type.
// A Layout is immutable once made and safe for concurrent use.
type Layout struct {
	segs   []Segment
	size   int // packed bytes of one element
	extent int // bytes from one element's origin to the next one's
	lo, hi int // first byte touched and one past the last, from the origin
}

// NewLayout makes a Layout from segments built with AppendSegment (it
// keeps segs) and the element extent.
func NewLayout(segs []Segment, extent int) Layout {
	l := Layout{segs: segs, extent: extent}
	for i, s := range segs {
		l.size += s.Len
		if i == 0 || s.Off < l.lo {
			l.lo = s.Off
		}
		if i == 0 || s.Off+s.Len > l.hi {
			l.hi = s.Off + s.Len
		}
	}
	return l
}

// Size returns the packed bytes of one element.
func (l *Layout) Size() int { return l.size }

// Extent returns the distance in bytes between consecutive elements.
func (l *Layout) Extent() int { return l.extent }

// Segments returns one element's segments; the caller must not change them.
func (l *Layout) Segments() []Segment { return l.segs }

// Span returns the bytes count elements touch, relative to the first
// element's origin: [lo, hi). It is (0, 0) when they touch none.
func (l *Layout) Span(count int) (lo, hi int) {
	if count <= 0 || l.size == 0 {
		return 0, 0
	}
	step := (count - 1) * l.extent
	return l.lo + min(0, step), l.hi + max(0, step)
}

// Contiguous reports whether the packed stream of count elements is one
// run of memory, and if so where it starts relative to the origin: such
// data travels straight from and into the caller's buffer.
func (l *Layout) Contiguous(count int) (off int, ok bool) {
	switch {
	case count <= 0 || l.size == 0:
		return 0, true
	case len(l.segs) == 1 && (count == 1 || l.segs[0].Len == l.extent):
		return l.segs[0].Off, true
	}
	return 0, false
}

// Pack copies bytes [pos, pos+len(dst)) of the packed stream of the
// elements whose first origin is buf[origin] into dst. The caller has
// checked that the elements lie inside buf (Span).
func (l *Layout) Pack(dst, buf []byte, origin, pos int) {
	l.move(dst, buf, origin, pos, true)
}

// Unpack copies src, bytes [pos, pos+len(src)) of the packed stream, into
// the elements whose first origin is buf[origin]. Nothing outside the
// layout is written.
func (l *Layout) Unpack(buf []byte, origin, pos int, src []byte) {
	l.move(src, buf, origin, pos, false)
}

func (l *Layout) move(p, buf []byte, origin, pos int, pack bool) {
	if len(p) == 0 || l.size == 0 {
		return
	}
	e, r := pos/l.size, pos%l.size
	base := origin + e*l.extent
	if len(l.segs) == 1 && l.segs[0].Len == l.extent { // one run: a single copy
		o := base + l.segs[0].Off + r
		if pack {
			copy(p, buf[o:o+len(p)])
		} else {
			copy(buf[o:o+len(p)], p)
		}
		return
	}
	// the segment holding offset r of the element: the last with Pos ≤ r
	i, j := 0, len(l.segs)
	for i+1 < j {
		if m := int(uint(i+j) >> 1); l.segs[m].Pos <= r {
			i = m
		} else {
			j = m
		}
	}
	in := r - l.segs[i].Pos
	for {
		s := &l.segs[i]
		o := base + s.Off + in
		n := min(s.Len-in, len(p))
		if pack {
			CopyRun(p[:n], buf[o:o+n])
		} else {
			CopyRun(buf[o:o+n], p[:n])
		}
		p = p[n:]
		if len(p) == 0 {
			return
		}
		in = 0
		if i++; i == len(l.segs) {
			i, base = 0, base+l.extent
		}
	}
}

// CopyRun copies src to dst, equally long. The short runs of strided
// layouts (a matrix column is a run of 8 bytes per row) move as single
// loads and stores, which the compiler makes of these byte-order calls,
// instead of a memmove call each; the C binding's strided typemaps
// (package abi) pack their runs with it too.
func CopyRun(dst, src []byte) {
	switch len(src) {
	case 8:
		binary.LittleEndian.PutUint64(dst, binary.LittleEndian.Uint64(src))
	case 4:
		binary.LittleEndian.PutUint32(dst, binary.LittleEndian.Uint32(src))
	case 16:
		binary.LittleEndian.PutUint64(dst, binary.LittleEndian.Uint64(src))
		binary.LittleEndian.PutUint64(dst[8:], binary.LittleEndian.Uint64(src[8:]))
	default:
		copy(dst, src)
	}
}
