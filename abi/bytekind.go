package abi

/*
#include <stdint.h>
*/
import "C"

import (
	"github.com/meshmpi/meshmpi"
)

// bk is the kind of a predefined type that has no Go element type: C's
// long double (80-bit extended precision in 16 bytes on x86-64, IEEE
// binary128 on arm64 and wasm32) and long double _Complex, the 16-byte
// Fortran types, MPI_REAL2, MPI_COMPLEX4, MPI_2REAL and
// MPI_2DOUBLE_PRECISION. Its elements move as their bytes, size each, in
// every point-to-point call and every collective that does not compute
// (a transfer is bytes, whatever their meaning); the reductions refuse it
// with MPI_ERR_UNSUPPORTED_OPERATION, since Go has no arithmetic on these
// formats.
type bk struct {
	name string
	size int
	g    *meshmpi.Datatype // its layout in derived types (opaque)
}

// dbytes is the predefined type name of size bytes, aligned to align in C
// (0: the largest power of two up to 8 that divides size).
func dbytes(name string, size, align int) dtype {
	d := dtype{name: name, size: size, align: align}
	d.k = bk{name: name, size: size, g: opaque(d)}
	return d
}

var u8 tk[uint8]

func (b bk) n(n int) int { return n * b.size }

// scale turns counts or displacements in elements into bytes.
func (b bk) scale(s []int) []int {
	if s == nil {
		return nil
	}
	out := make([]int, len(s))
	for i, v := range s {
		out[i] = v * b.size
	}
	return out
}

func (b bk) noArithmetic(o *meshmpi.Op) error {
	return errorf(errUnsupported, "%v on %s: Go has no arithmetic on this type; it moves, it does not reduce", o, b.name)
}

func (b bk) send(c *meshmpi.Comm, buf uintptr, n, dest, tag int, sync bool) error {
	return u8.send(c, buf, b.n(n), dest, tag, sync)
}

func (b bk) isend(c *meshmpi.Comm, buf uintptr, n, dest, tag int, sync bool, m mode) (*meshmpi.Request, error) {
	return u8.isend(c, buf, b.n(n), dest, tag, sync, m)
}

func (b bk) recv(c *meshmpi.Comm, buf uintptr, n, src, tag int) (meshmpi.Status, error) {
	return u8.recv(c, buf, b.n(n), src, tag)
}

func (b bk) irecv(c *meshmpi.Comm, buf uintptr, n, src, tag int, m mode) (*meshmpi.Request, error) {
	return u8.irecv(c, buf, b.n(n), src, tag, m)
}

func (b bk) sendrecvReplace(c *meshmpi.Comm, buf uintptr, n, dest, stag, src, rtag int) (meshmpi.Status, error) {
	return u8.sendrecvReplace(c, buf, b.n(n), dest, stag, src, rtag)
}

func (b bk) mrecv(msg *meshmpi.Message, buf uintptr, n int) (meshmpi.Status, error) {
	return u8.mrecv(msg, buf, b.n(n))
}

func (b bk) isendCopy(c *meshmpi.Comm, buf uintptr, n, dest, tag int) (*meshmpi.Request, error) {
	return u8.isendCopy(c, buf, b.n(n), dest, tag)
}

func (b bk) datatype() *meshmpi.Datatype { return b.g }

func (b bk) imrecv(msg *meshmpi.Message, buf uintptr, n int) (*meshmpi.Request, error) {
	return u8.imrecv(msg, buf, b.n(n))
}

func (b bk) bcast(c *meshmpi.Comm, buf uintptr, n, root int, m mode) (*meshmpi.Request, error) {
	return u8.bcast(c, buf, b.n(n), root, m)
}

func (b bk) gather(c *meshmpi.Comm, s uintptr, sn int, r uintptr, rn, root int, m mode) (*meshmpi.Request, error) {
	return u8.gather(c, s, b.n(sn), r, b.n(rn), root, m)
}

func (b bk) gatherv(c *meshmpi.Comm, s uintptr, sn int, r uintptr, rn int, counts, displs []int, root int, m mode) (*meshmpi.Request, error) {
	return u8.gatherv(c, s, b.n(sn), r, b.n(rn), b.scale(counts), b.scale(displs), root, m)
}

func (b bk) scatter(c *meshmpi.Comm, s uintptr, sn int, r uintptr, rn, root int, m mode) (*meshmpi.Request, error) {
	return u8.scatter(c, s, b.n(sn), r, b.n(rn), root, m)
}

func (b bk) scatterv(c *meshmpi.Comm, s uintptr, sn int, counts, displs []int, r uintptr, rn, root int, m mode) (*meshmpi.Request, error) {
	return u8.scatterv(c, s, b.n(sn), b.scale(counts), b.scale(displs), r, b.n(rn), root, m)
}

func (b bk) allgather(c *meshmpi.Comm, s uintptr, sn int, r uintptr, rn int, m mode) (*meshmpi.Request, error) {
	return u8.allgather(c, s, b.n(sn), r, b.n(rn), m)
}

func (b bk) allgatherv(c *meshmpi.Comm, s uintptr, sn int, r uintptr, rn int, counts, displs []int, m mode) (*meshmpi.Request, error) {
	return u8.allgatherv(c, s, b.n(sn), r, b.n(rn), b.scale(counts), b.scale(displs), m)
}

func (b bk) alltoall(c *meshmpi.Comm, s uintptr, sn int, r uintptr, rn int, m mode) (*meshmpi.Request, error) {
	return u8.alltoall(c, s, b.n(sn), r, b.n(rn), m)
}

func (b bk) alltoallv(c *meshmpi.Comm, s uintptr, sn int, scounts, sdispls []int, r uintptr, rn int, rcounts, rdispls []int, m mode) (*meshmpi.Request, error) {
	return u8.alltoallv(c, s, b.n(sn), b.scale(scounts), b.scale(sdispls), r, b.n(rn), b.scale(rcounts), b.scale(rdispls), m)
}

func (b bk) reduce(c *meshmpi.Comm, s, r uintptr, sn, rn int, o *meshmpi.Op, root int, m mode, hs ...meshmpi.Hint) (*meshmpi.Request, error) {
	return nil, b.noArithmetic(o)
}

func (b bk) allreduce(c *meshmpi.Comm, s, r uintptr, n int, o *meshmpi.Op, m mode, hs ...meshmpi.Hint) (*meshmpi.Request, error) {
	return nil, b.noArithmetic(o)
}

func (b bk) reduceScatterBlock(c *meshmpi.Comm, s, r uintptr, sn, rn int, o *meshmpi.Op, m mode) (*meshmpi.Request, error) {
	return nil, b.noArithmetic(o)
}

func (b bk) reduceScatter(c *meshmpi.Comm, s, r uintptr, sn, rn int, counts []int, o *meshmpi.Op, m mode) (*meshmpi.Request, error) {
	return nil, b.noArithmetic(o)
}

func (b bk) scan(c *meshmpi.Comm, s, r uintptr, n int, o *meshmpi.Op, exclusive bool, m mode) (*meshmpi.Request, error) {
	return nil, b.noArithmetic(o)
}

func (b bk) reduceLocal(in, inout uintptr, n int, o *meshmpi.Op) error { return b.noArithmetic(o) }
