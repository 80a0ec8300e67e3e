package abi

/*
#include <stdint.h>
#include <stdlib.h>
*/
import "C"

import (
	"sync"

	"github.com/meshmpi/meshmpi"
)

// Communication with derived datatypes. Point-to-point goes through the
// Go API's typed calls (SendTyped, RecvTyped, IsendTyped, IrecvTyped and
// their persistent forms) on the C buffer in place. The calls the Go API
// has no typed form of (synchronous nonblocking and persistent sends,
// matched receives, Sendrecv_replace, buffered sends) and every
// collective go through a staging: the binding packs the derived side
// into a scratch buffer of its basic element type, runs the Go API's
// element-typed call on it, and unpacks into the receive side when the
// operation completes (requests.go calls back at Wait/Test, and packs
// again at each Start of a persistent request). Predefined types keep
// their direct path, with no copy.

// typedView is n elements of e at the C address addr as the Go API's
// typed calls take them: a byte slice whose first byte is the origin and
// that holds every byte the elements touch. Data below the origin (a
// negative lower bound, MPI_BOTTOM with absolute addresses) is reached by
// wrapping the type in an Hindexed that shifts it up.
func typedView(e *typeEntry, addr uintptr, n int) ([]byte, int, *meshmpi.Datatype, error) {
	lo, hi := e.span(n)
	if hi <= lo {
		return nil, n, e.g, nil
	}
	if addr != 0 && lo >= 0 {
		return cbytes(addr, hi), n, e.g, nil
	}
	g, err := meshmpi.Hindexed([]int{n}, []int{-lo}, e.g)
	if err == nil {
		err = g.Commit()
	}
	if err != nil {
		return nil, 0, nil, err
	}
	return cbytes(uintptr(int(addr)+lo), hi-lo), 1, g, nil
}

// derivedArgs checks a point-to-point call on a derived type.
func derivedArgs(comm, buf uintptr, n int64, e *typeEntry) (*commEntry, error) {
	c, err := lookupComm(comm)
	if err != nil {
		return nil, err
	}
	types.mu.Lock()
	ok := e.committed
	types.mu.Unlock()
	switch {
	case !ok:
		return nil, errorf(errType, "datatype %s is not committed (MPI_Type_commit)", e)
	case n < 0:
		return nil, errorf(errCount, "count %d is negative", n)
	case n > 1<<40:
		return nil, errorf(errCount, "count %d is too large", n)
	case buf == inPlace:
		return nil, errorf(errBuffer, "MPI_IN_PLACE is not a point-to-point buffer")
	}
	if err := e.flatten(); err != nil {
		return nil, err
	}
	return c, nullBuffer(e, buf, int(n))
}

// nullBuffer is the error of n elements of e at addr whose memory starts
// at address 0 or below: a NULL buffer (MPI_BOTTOM reaches memory only
// through absolute displacements).
func nullBuffer(e *typeEntry, addr uintptr, n int) error {
	if lo, hi := e.span(n); hi > lo && int(addr)+lo <= 0 {
		return errorf(errBuffer, "buffer is NULL with %d elements of %s", n, e)
	}
	return nil
}

func sendDerived(e *typeEntry, buf uintptr, n int64, dest, tag int32, comm uintptr, sync bool) error {
	c, err := derivedArgs(comm, buf, n, e)
	if err != nil {
		return err
	}
	if e.str != nil { // the Go type is not compiled: send a packed copy
		var s staging
		p, pn := s.add(e, buf, int(n), true, false)
		defer s.release()
		s.pack()
		if sync {
			return meshmpi.Ssend(c.c, view[byte](p, pn), rankIn(dest), tagIn(tag))
		}
		return meshmpi.Send(c.c, view[byte](p, pn), rankIn(dest), tagIn(tag))
	}
	b, k, g, err := typedView(e, buf, int(n))
	if err != nil {
		return err
	}
	if sync {
		return meshmpi.SsendTyped(c.c, b, k, g, rankIn(dest), tagIn(tag))
	}
	return meshmpi.SendTyped(c.c, b, k, g, rankIn(dest), tagIn(tag))
}

func recvDerived(e *typeEntry, buf uintptr, n int64, src, tag int32, comm uintptr) (meshmpi.Status, error) {
	c, err := derivedArgs(comm, buf, n, e)
	if err != nil {
		return meshmpi.Status{}, err
	}
	if e.str != nil { // into a packed copy, then only the bytes received out of it
		var s staging
		p, pn := s.add(e, buf, int(n), false, false)
		defer s.release()
		st, err := meshmpi.Recv(c.c, view[byte](p, pn), rankIn(src), tagIn(tag))
		if got := min(st.Bytes, pn); got > 0 {
			mem, origin := span(e, buf, int(n))
			e.unpack(mem, origin, 0, cbytes(p, got))
		}
		return st, err
	}
	b, k, g, err := typedView(e, buf, int(n))
	if err != nil {
		return meshmpi.Status{}, err
	}
	return meshmpi.RecvTyped(c.c, b, k, g, rankIn(src), tagIn(tag))
}

// isendDerived starts a send: IsendTyped and SendTypedInit where the Go
// API has them, a packed copy sent as bytes for the synchronous forms and
// strided types.
func isendDerived(e *typeEntry, buf uintptr, n int64, dest, tag int32, comm uintptr, sync bool, m mode) (*meshmpi.Request, *staging, error) {
	c, err := derivedArgs(comm, buf, n, e)
	if err != nil {
		return nil, nil, err
	}
	if !sync && e.str == nil {
		b, k, g, err := typedView(e, buf, int(n))
		if err != nil {
			return nil, nil, err
		}
		var r *meshmpi.Request
		if m == persistent {
			r, err = meshmpi.SendTypedInit(c.c, b, k, g, rankIn(dest), tagIn(tag))
		} else {
			r, err = meshmpi.IsendTyped(c.c, b, k, g, rankIn(dest), tagIn(tag))
		}
		return r, nil, err
	}
	s := &staging{persistent: m == persistent}
	p, pn := s.add(e, buf, int(n), true, false)
	if m != persistent {
		s.pack()
	}
	pb := view[byte](p, pn)
	var r *meshmpi.Request
	switch {
	case m == persistent && sync:
		r, err = meshmpi.SsendInit(c.c, pb, rankIn(dest), tagIn(tag))
	case m == persistent:
		r, err = meshmpi.SendInit(c.c, pb, rankIn(dest), tagIn(tag))
	case sync:
		r, err = meshmpi.Issend(c.c, pb, rankIn(dest), tagIn(tag))
	default:
		r, err = meshmpi.Isend(c.c, pb, rankIn(dest), tagIn(tag))
	}
	if err != nil {
		s.release()
		return nil, nil, err
	}
	return r, s, nil
}

// irecvDerived starts a receive: IrecvTyped and RecvTypedInit on the
// buffer in place, or for a strided type a packed copy, unpacked at
// completion (the staging it returns).
func irecvDerived(e *typeEntry, buf uintptr, n int64, src, tag int32, comm uintptr, m mode) (*meshmpi.Request, *staging, error) {
	c, err := derivedArgs(comm, buf, n, e)
	if err != nil {
		return nil, nil, err
	}
	if e.str != nil {
		// the copy starts as the buffer is (packed at each start), so
		// that a shorter message leaves the rest of the buffer as it
		// was when the whole copy is unpacked (MPI-4.1 §3.2.4)
		s := &staging{persistent: m == persistent}
		p, pn := s.add(e, buf, int(n), true, true)
		if m != persistent {
			s.pack()
		}
		var r *meshmpi.Request
		if m == persistent {
			r, err = meshmpi.RecvInit(c.c, view[byte](p, pn), rankIn(src), tagIn(tag))
		} else {
			r, err = meshmpi.Irecv(c.c, view[byte](p, pn), rankIn(src), tagIn(tag))
		}
		if err != nil {
			s.release()
			return nil, nil, err
		}
		return r, s, nil
	}
	b, k, g, err := typedView(e, buf, int(n))
	if err != nil {
		return nil, nil, err
	}
	var r *meshmpi.Request
	if m == persistent {
		r, err = meshmpi.RecvTypedInit(c.c, b, k, g, rankIn(src), tagIn(tag))
	} else {
		r, err = meshmpi.IrecvTyped(c.c, b, k, g, rankIn(src), tagIn(tag))
	}
	return r, nil, err
}

// staging is the packed copies of an operation's derived-type buffers:
// C memory (so the Go calls take its address as they take the program's),
// packed from the program's buffers before the operation starts and
// unpacked into them once it completes.
type staging struct {
	mu         sync.Mutex
	sides      []*stageSide
	persistent bool
	owed       bool // an unpack is owed: the operation runs
}

// stageSide is one buffer: blocks of elements of a type in C memory and
// their packed stream at p.
type stageSide struct {
	e       *typeEntry
	blocks  []stageBlock
	p       uintptr
	bytes   int
	in, out bool // pack before the operation, unpack after
}

type stageBlock struct {
	addr uintptr // the first element's origin
	n    int
	pos  int // where its packed bytes start
}

// add stages n elements of e at addr and returns the packed buffer's
// address and its length in bytes.
func (s *staging) add(e *typeEntry, addr uintptr, n int, in, out bool) (uintptr, int) {
	return s.addBlocks(e, []uintptr{addr}, []int{n}, in, out)
}

// addBlocks stages several blocks of elements of e, packed one after the
// other (the v-forms of the collectives).
func (s *staging) addBlocks(e *typeEntry, addrs []uintptr, ns []int, in, out bool) (uintptr, int) {
	side := &stageSide{e: e, in: in, out: out}
	pos := 0
	for i, a := range addrs {
		side.blocks = append(side.blocks, stageBlock{a, ns[i], pos})
		pos += ns[i] * e.size()
	}
	side.bytes = pos
	side.p = uintptr(C.malloc(C.size_t(max(pos, 1))))
	s.sides = append(s.sides, side)
	return side.p, pos
}

// span is the C memory n elements of e at addr touch, and the origin's
// offset in it.
func span(e *typeEntry, addr uintptr, n int) ([]byte, int) {
	lo, hi := e.span(n)
	if hi <= lo {
		return nil, 0
	}
	return cbytes(uintptr(int(addr)+lo), hi-lo), -lo
}

// check refuses blocks in NULL buffers.
func (s *staging) check() error {
	for _, side := range s.sides {
		for _, b := range side.blocks {
			if err := nullBuffer(side.e, b.addr, b.n); err != nil {
				return err
			}
		}
	}
	return nil
}

// pack fills the packed buffers of the sides read by the operation.
func (s *staging) pack() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, side := range s.sides {
		if !side.in {
			continue
		}
		p := cbytes(side.p, side.bytes)
		for _, b := range side.blocks {
			mem, origin := span(side.e, b.addr, b.n)
			side.e.pack(p[b.pos:b.pos+b.n*side.e.size()], mem, origin, 0)
		}
	}
	s.owed = true
}

// unpack writes the received sides into the program's buffers, once per
// run of the operation.
func (s *staging) unpack() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.owed {
		return
	}
	s.owed = false
	for _, side := range s.sides {
		if !side.out {
			continue
		}
		p := cbytes(side.p, side.bytes)
		for _, b := range side.blocks {
			mem, origin := span(side.e, b.addr, b.n)
			side.e.unpack(mem, origin, 0, p[b.pos:b.pos+b.n*side.e.size()])
		}
	}
}

// release frees the packed buffers.
func (s *staging) release() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, side := range s.sides {
		C.free(ptr(side.p))
		side.p = 0
	}
	s.sides = nil
}

// active reports whether the operation may still be running on the
// packed buffers: started and not yet unpacked.
func (s *staging) active() bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.owed
}
