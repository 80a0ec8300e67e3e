package abi

/*
#include <stdint.h>
*/
import "C"

import (
	"unsafe"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/op"
)

// The pair types of MINLOC and MAXLOC (MPI-4.1 §6.9.4): MPI_DOUBLE_INT is
// the C struct {double; int}, and its typemap is {(double, 0), (int, 8)}.
// Their size is their parts' (12 for MPI_DOUBLE_INT, 6 for MPI_SHORT_INT,
// 20 for MPI_LONG_DOUBLE_INT) and their extent the C struct's, padding
// included (16, 8, 32). A message of two MPI_DOUBLE_INT carries 24 bytes
// and matches a send of any type of the signature double, int, double,
// int; MPI_Get_elements counts two basic elements a pair.
//
// The Go API's Loc[T] pairs have the C struct's layout, so the pairs
// without padding (MPI_FLOAT_INT, MPI_2INT, MPI_2INTEGER) are Loc[T]
// everywhere. The padded ones (MPI_DOUBLE_INT, MPI_LONG_INT,
// MPI_SHORT_INT) move in point-to-point as their typemap (pk: the Go
// API's typed calls on a struct datatype), and in collectives as Loc[T]
// in place, the C struct whole, which every rank of a collective shares:
// MINLOC and MAXLOC reduce them there. A derived type of a padded pair is
// a mixed type: collectives move it as bytes of its typemap and cannot
// reduce it. MPI_LONG_DOUBLE_INT has no Go value type: it moves like the
// padded pairs, as the C struct's bytes in collectives, and is never
// reduced (bytekind.go).

// pairMap is a pair type's typemap: first at 0, second at off.
type pairMap struct {
	first  uintptr
	off    int
	second uintptr
}

// size is the pair's MPI size: its two parts' bytes.
func (p *pairMap) size() int { return dtypes[p.first].size + dtypes[p.second].size }

// dpair is the pair type of Go element type L, Loc[V]: a V and a C int
// (the Fortran MPI_2INTEGER's second part is MPI_INTEGER, second), the
// int at the C struct's offset, V's size rounded up to the int's
// alignment.
func dpair[L meshmpi.Element, V meshmpi.Numeric](name string, first, second uintptr) dtype {
	var l L
	var v V
	vsize := int(unsafe.Sizeof(v))
	d := dtype{name: name, size: int(unsafe.Sizeof(l)), pair: &pairMap{first, max(vsize, 4), second}}
	if vsize+4 == d.size {
		d.k = tk[L]{}
		return d
	}
	d.k = newPK(tk[L]{}, meshmpi.DatatypeOf[V](), vsize, d.pair.off, d.size)
	return d
}

// dpairLongDouble is MPI_LONG_DOUBLE_INT: a pair whose value has no Go
// type, moved in collectives as the C struct's bytes (bk) and never
// reduced.
func dpairLongDouble() dtype {
	ld := dtype{name: "MPI_LONG_DOUBLE", size: 16, align: 16}
	d := dtype{name: "MPI_LONG_DOUBLE_INT", size: 32, pair: &pairMap{0x220, 16, 0x209}}
	d.k = newPK(bk{name: d.name, size: d.size, g: opaque(d)}, opaque(ld), ld.size, d.pair.off, d.size)
	return d
}

// newPK is the kind of a padded pair: k in collectives, the typemap
// {(first, 0), (C int, off)} of the given extent in point-to-point.
func newPK(k kind, first *meshmpi.Datatype, firstSize, off, extent int) pk {
	g := pairDatatype(first, meshmpi.Int32, off, extent)
	lay := op.NewLayout(op.AppendSegment(op.AppendSegment(nil, 0, firstSize), off, 4), extent)
	return pk{kind: k, g: g, lay: &lay}
}

// pairDatatype is the Go API's datatype of a pair: first at 0, second at
// off, extent the C struct's.
func pairDatatype(first, second *meshmpi.Datatype, off, extent int) *meshmpi.Datatype {
	s, err := meshmpi.Struct([]int{1, 1}, []int{0, off}, []*meshmpi.Datatype{first, second})
	if err != nil {
		panic("abi: pair datatype: " + err.Error()) // constant arguments: a bug, at package init
	}
	g, err := meshmpi.Resized(s, 0, extent)
	if err == nil {
		err = g.Commit()
	}
	if err != nil {
		panic("abi: pair datatype: " + err.Error())
	}
	return g
}

// pairFlat is the flat typemap of a predefined pair type.
func pairFlat(d dtype) *flat {
	p := d.pair
	runs := appendBrun(appendBrun(nil, 0, 1, p.first), p.off, 1, p.second)
	var segs []op.Segment
	for _, r := range runs {
		segs = op.AppendSegment(segs, r.off, r.n*dtypes[r.h].size)
	}
	f := &flat{runs: runs, basics: 2, lay: op.NewLayout(segs, d.size)}
	if p.size() == d.size && d.k != nil {
		f.basic = d // Loc[T] byte for byte: reduced as pairs in derived types too
	} else {
		f.mixed = true
	}
	return f
}

// pk is the kind of a padded pair type: the Go API's Loc pair in
// collectives (tk's methods; bk's for MPI_LONG_DOUBLE_INT), its MPI
// typemap g in point-to-point.
type pk struct {
	kind
	g   *meshmpi.Datatype
	lay *op.Layout // g's, for the calls that stage a packed copy
}

// mem is the C memory n pairs at buf touch.
func (p pk) mem(buf uintptr, n int) []byte {
	if buf == 0 || n <= 0 {
		return nil
	}
	_, hi := p.lay.Span(n)
	return cbytes(buf, hi)
}

// packed is a packed copy of n pairs at buf.
func (p pk) packed(buf uintptr, n int) []byte {
	b := make([]byte, max(n, 0)*p.lay.Size())
	if len(b) > 0 {
		p.lay.Pack(b, p.mem(buf, n), 0, 0)
	}
	return b
}

// unpack writes the packed bytes a receive got into n pairs at buf.
func (p pk) unpack(buf uintptr, n int, b []byte, st meshmpi.Status) {
	if k := min(st.Bytes, len(b)); k > 0 {
		p.lay.Unpack(p.mem(buf, n), 0, 0, b[:k])
	}
}

func (p pk) send(c *meshmpi.Comm, buf uintptr, n, dest, tag int, sync bool) error {
	if sync {
		return meshmpi.SsendTyped(c, p.mem(buf, n), n, p.g, dest, tag)
	}
	return meshmpi.SendTyped(c, p.mem(buf, n), n, p.g, dest, tag)
}

func (p pk) isend(c *meshmpi.Comm, buf uintptr, n, dest, tag int, sync bool, m mode) (*meshmpi.Request, error) {
	b := p.mem(buf, n)
	switch {
	case m == persistent && sync:
		return meshmpi.SsendTypedInit(c, b, n, p.g, dest, tag)
	case m == persistent:
		return meshmpi.SendTypedInit(c, b, n, p.g, dest, tag)
	case sync:
		return meshmpi.IssendTyped(c, b, n, p.g, dest, tag)
	}
	return meshmpi.IsendTyped(c, b, n, p.g, dest, tag)
}

func (p pk) recv(c *meshmpi.Comm, buf uintptr, n, src, tag int) (meshmpi.Status, error) {
	return meshmpi.RecvTyped(c, p.mem(buf, n), n, p.g, src, tag)
}

func (p pk) irecv(c *meshmpi.Comm, buf uintptr, n, src, tag int, m mode) (*meshmpi.Request, error) {
	if m == persistent {
		return meshmpi.RecvTypedInit(c, p.mem(buf, n), n, p.g, src, tag)
	}
	return meshmpi.IrecvTyped(c, p.mem(buf, n), n, p.g, src, tag)
}

// sendrecvReplace, mrecv and isendCopy have no typed form in the Go API:
// they are blocking or copy anyway, so they go through a packed copy.
func (p pk) sendrecvReplace(c *meshmpi.Comm, buf uintptr, n, dest, stag, src, rtag int) (meshmpi.Status, error) {
	b := p.packed(buf, n)
	st, err := meshmpi.SendrecvReplace(c, b, dest, stag, src, rtag)
	p.unpack(buf, n, b, st)
	return st, err
}

func (p pk) mrecv(msg *meshmpi.Message, buf uintptr, n int) (meshmpi.Status, error) {
	b := make([]byte, max(n, 0)*p.lay.Size())
	st, err := meshmpi.Mrecv(msg, b)
	p.unpack(buf, n, b, st)
	return st, err
}

// imrecv would unpack when the request completes, which the Go API's
// Imrecv has no hook for.
func (p pk) imrecv(msg *meshmpi.Message, buf uintptr, n int) (*meshmpi.Request, error) {
	return nil, errorf(errUnsupported, "MPI_Imrecv into a padded pair type (%s) is not supported; MPI_Mrecv is", p.g)
}

func (p pk) isendCopy(c *meshmpi.Comm, buf uintptr, n, dest, tag int) (*meshmpi.Request, error) {
	return meshmpi.Isend(c, p.packed(buf, n), dest, tag)
}

func (p pk) datatype() *meshmpi.Datatype { return p.g }
