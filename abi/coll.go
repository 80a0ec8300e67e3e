package abi

/*
#include <stdint.h>
*/
import "C"

import (
	"github.com/meshmpi/meshmpi"
)

// collCall is what every collective call decodes first.
type collCall struct {
	name       string
	comm       uintptr
	e          *commEntry
	rank, size int
	m          mode
	req        uintptr
	large      bool // an MPI_…_c call: MPI_Count counts, MPI_Aint displacements
}

var modeSuffix = [...]string{blocking: "", nonblocking: "", persistent: "_init"}

// begin checks the communicator and, unless blocking, the request pointer.
func begin(name string, comm uintptr, m mode, req uintptr, large bool) (*collCall, C.int) {
	if m == nonblocking {
		name = "MPI_I" + string(name[4]+'a'-'A') + name[5:]
	}
	name += modeSuffix[m]
	if large {
		name += "_c"
	}
	e, err := lookupComm(comm)
	if err != nil {
		return nil, raise(comm, name, err)
	}
	if m != blocking && req == 0 {
		return nil, raise(comm, name, errorf(errArg, "request is NULL"))
	}
	return &collCall{name: name, comm: comm, e: e, rank: e.c.Rank(), size: e.c.Size(), m: m, req: req, large: large}, errSuccess
}

// end reports the call's error, or stores its request.
func (c *collCall) end(r *meshmpi.Request, err error) C.int {
	if err == nil && c.m != blocking {
		err = addReq(r, c.comm, 1, c.req)
	}
	return raise(c.comm, c.name, err)
}

func (c *collCall) fail(err error) C.int { return raise(c.comm, c.name, err) }

// typ looks up a datatype and checks a count.
func (c *collCall) typ(h uintptr, n int64) (dtype, error) {
	d, err := lookupType(h)
	if err != nil {
		return d, err
	}
	if n < 0 {
		return d, errorf(errCount, "count %d is negative", n)
	}
	return d, nil
}

// vector reads a call's counts and displacements (size of each) and
// returns them with the elements they span.
func (c *collCall) vector(counts, displs uintptr) ([]int, []int, int, error) {
	if counts == 0 || displs == 0 {
		return nil, nil, 0, errorf(errArg, "counts or displs is NULL")
	}
	cs, ds := cints(counts, c.size), cints(displs, c.size)
	if c.large {
		cs, ds = cints64(counts, c.size), cints64(displs, c.size)
	}
	span := 0
	for i := range cs {
		if cs[i] < 0 {
			return nil, nil, 0, errorf(errCount, "count %d of rank %d is negative", cs[i], i)
		}
		if cs[i] > 0 && ds[i]+cs[i] > span {
			span = ds[i] + cs[i]
		}
	}
	return cs, ds, span, nil
}

func barrier(comm uintptr, m mode, req uintptr) C.int {
	c, rc := begin("MPI_Barrier", comm, m, req, false)
	if c == nil {
		return rc
	}
	return c.end(run(m, func() error { return meshmpi.Barrier(c.e.c) },
		func() (*meshmpi.Request, error) { return meshmpi.Ibarrier(c.e.c) },
		func() (*meshmpi.Request, error) { return meshmpi.BarrierInit(c.e.c) }))
}

func bcast(buf uintptr, n int64, dt uintptr, root int32, comm uintptr, m mode, req uintptr, large bool) C.int {
	c, rc := begin("MPI_Bcast", comm, m, req, large)
	if c == nil {
		return rc
	}
	d, err := c.typ(dt, n)
	if err != nil {
		return c.fail(err)
	}
	return c.end(d.k.bcast(c.e.c, buf, int(n), rankIn(root), m))
}

// pair looks up a send and a receive type that must move the same Go
// type; a side that is not significant (its flag false) is skipped.
func (c *collCall) pair(st uintptr, sn int64, useSend bool, rt uintptr, rn int64, useRecv bool) (kind, error) {
	var k kind
	var sd, rd dtype
	var err error
	if useSend {
		if sd, err = c.typ(st, sn); err != nil {
			return nil, err
		}
		k = sd.k
	}
	if useRecv {
		if rd, err = c.typ(rt, rn); err != nil {
			return nil, err
		}
		if useSend {
			if err := sameType(sd, rd); err != nil {
				return nil, err
			}
		}
		k = rd.k
	}
	if k == nil {
		k = tk[uint8]{}
	}
	return k, nil
}

func gather(s uintptr, sn int64, st uintptr, r uintptr, rn int64, rt uintptr, root int32, comm uintptr, m mode, req uintptr, large bool) C.int {
	c, rc := begin("MPI_Gather", comm, m, req, large)
	if c == nil {
		return rc
	}
	atRoot := c.rank == int(root)
	k, err := c.pair(st, sn, s != inPlace, rt, rn, atRoot)
	if err != nil {
		return c.fail(err)
	}
	rlen := 0
	if atRoot {
		rlen = int(rn) * c.size
	} else {
		r = 0
	}
	return c.end(k.gather(c.e.c, s, int(sn), r, rlen, rankIn(root), m))
}

func gatherv(s uintptr, sn int64, st uintptr, r, counts, displs uintptr, rt uintptr, root int32, comm uintptr, m mode, req uintptr, large bool) C.int {
	c, rc := begin("MPI_Gatherv", comm, m, req, large)
	if c == nil {
		return rc
	}
	atRoot := c.rank == int(root)
	k, err := c.pair(st, sn, s != inPlace, rt, 0, atRoot)
	if err != nil {
		return c.fail(err)
	}
	var cs, ds []int
	span := 0
	if atRoot {
		if cs, ds, span, err = c.vector(counts, displs); err != nil {
			return c.fail(err)
		}
	} else {
		r = 0
	}
	return c.end(k.gatherv(c.e.c, s, int(sn), r, span, cs, ds, rankIn(root), m))
}

func scatter(s uintptr, sn int64, st uintptr, r uintptr, rn int64, rt uintptr, root int32, comm uintptr, m mode, req uintptr, large bool) C.int {
	c, rc := begin("MPI_Scatter", comm, m, req, large)
	if c == nil {
		return rc
	}
	atRoot := c.rank == int(root)
	k, err := c.pair(st, sn, atRoot, rt, rn, r != inPlace)
	if err != nil {
		return c.fail(err)
	}
	slen := 0
	if atRoot {
		slen = int(sn) * c.size
	} else {
		s = 0
	}
	return c.end(k.scatter(c.e.c, s, slen, r, int(rn), rankIn(root), m))
}

func scatterv(s, counts, displs uintptr, st uintptr, r uintptr, rn int64, rt uintptr, root int32, comm uintptr, m mode, req uintptr, large bool) C.int {
	c, rc := begin("MPI_Scatterv", comm, m, req, large)
	if c == nil {
		return rc
	}
	atRoot := c.rank == int(root)
	k, err := c.pair(st, 0, atRoot, rt, rn, r != inPlace)
	if err != nil {
		return c.fail(err)
	}
	var cs, ds []int
	span := 0
	if atRoot {
		if cs, ds, span, err = c.vector(counts, displs); err != nil {
			return c.fail(err)
		}
	} else {
		s = 0
	}
	return c.end(k.scatterv(c.e.c, s, span, cs, ds, r, int(rn), rankIn(root), m))
}

func allgather(s uintptr, sn int64, st uintptr, r uintptr, rn int64, rt uintptr, comm uintptr, m mode, req uintptr, large bool) C.int {
	c, rc := begin("MPI_Allgather", comm, m, req, large)
	if c == nil {
		return rc
	}
	k, err := c.pair(st, sn, s != inPlace, rt, rn, true)
	if err != nil {
		return c.fail(err)
	}
	return c.end(k.allgather(c.e.c, s, int(sn), r, int(rn)*c.size, m))
}

func allgatherv(s uintptr, sn int64, st uintptr, r, counts, displs uintptr, rt uintptr, comm uintptr, m mode, req uintptr, large bool) C.int {
	c, rc := begin("MPI_Allgatherv", comm, m, req, large)
	if c == nil {
		return rc
	}
	k, err := c.pair(st, sn, s != inPlace, rt, 0, true)
	if err != nil {
		return c.fail(err)
	}
	cs, ds, span, err := c.vector(counts, displs)
	if err != nil {
		return c.fail(err)
	}
	return c.end(k.allgatherv(c.e.c, s, int(sn), r, span, cs, ds, m))
}

func alltoall(s uintptr, sn int64, st uintptr, r uintptr, rn int64, rt uintptr, comm uintptr, m mode, req uintptr, large bool) C.int {
	c, rc := begin("MPI_Alltoall", comm, m, req, large)
	if c == nil {
		return rc
	}
	k, err := c.pair(st, sn, s != inPlace, rt, rn, true)
	if err != nil {
		return c.fail(err)
	}
	return c.end(k.alltoall(c.e.c, s, int(sn)*c.size, r, int(rn)*c.size, m))
}

func alltoallv(s, scounts, sdispls, st, r, rcounts, rdispls, rt, comm uintptr, m mode, req uintptr, large bool) C.int {
	c, rc := begin("MPI_Alltoallv", comm, m, req, large)
	if c == nil {
		return rc
	}
	k, err := c.pair(st, 0, s != inPlace, rt, 0, true)
	if err != nil {
		return c.fail(err)
	}
	var scs, sds []int
	sspan := 0
	if s != inPlace {
		if scs, sds, sspan, err = c.vector(scounts, sdispls); err != nil {
			return c.fail(err)
		}
	}
	rcs, rds, rspan, err := c.vector(rcounts, rdispls)
	if err != nil {
		return c.fail(err)
	}
	return c.end(k.alltoallv(c.e.c, s, sspan, scs, sds, r, rspan, rcs, rds, m))
}

// reduction looks up a reduction's datatype, count and operation.
func (c *collCall) reduction(dt uintptr, n int64, o uintptr) (dtype, *meshmpi.Op, error) {
	d, err := c.typ(dt, n)
	if err != nil {
		return d, nil, err
	}
	op, err := lookupOp(o, dt, d)
	return d, op, err
}

func reduce(s, r uintptr, n int64, dt, o uintptr, root int32, comm uintptr, m mode, req uintptr, large bool) C.int {
	c, rc := begin("MPI_Reduce", comm, m, req, large)
	if c == nil {
		return rc
	}
	d, op, err := c.reduction(dt, n, o)
	if err != nil {
		return c.fail(err)
	}
	rn := int(n)
	if c.rank != int(root) {
		r, rn = 0, 0
	}
	return c.end(d.k.reduce(c.e.c, s, r, int(n), rn, op, rankIn(root), m))
}

func allreduce(s, r uintptr, n int64, dt, o, comm uintptr, m mode, req uintptr, large bool) C.int {
	c, rc := begin("MPI_Allreduce", comm, m, req, large)
	if c == nil {
		return rc
	}
	d, op, err := c.reduction(dt, n, o)
	if err != nil {
		return c.fail(err)
	}
	return c.end(d.k.allreduce(c.e.c, s, r, int(n), op, m))
}

func reduceScatterBlock(s, r uintptr, n int64, dt, o, comm uintptr, m mode, req uintptr, large bool) C.int {
	c, rc := begin("MPI_Reduce_scatter_block", comm, m, req, large)
	if c == nil {
		return rc
	}
	d, op, err := c.reduction(dt, n, o)
	if err != nil {
		return c.fail(err)
	}
	return c.end(d.k.reduceScatterBlock(c.e.c, s, r, int(n)*c.size, int(n), op, m))
}

func reduceScatter(s, r, counts, dt, o, comm uintptr, m mode, req uintptr, large bool) C.int {
	c, rc := begin("MPI_Reduce_scatter", comm, m, req, large)
	if c == nil {
		return rc
	}
	d, op, err := c.reduction(dt, 0, o)
	if err != nil {
		return c.fail(err)
	}
	if counts == 0 {
		return c.fail(errorf(errArg, "recvcounts is NULL"))
	}
	cs := cints(counts, c.size)
	if c.large {
		cs = cints64(counts, c.size)
	}
	total := 0
	for i, n := range cs {
		if n < 0 {
			return c.fail(errorf(errCount, "count %d of rank %d is negative", n, i))
		}
		total += n
	}
	return c.end(d.k.reduceScatter(c.e.c, s, r, total, cs[c.rank], cs, op, m))
}

func scan(name string, s, r uintptr, n int64, dt, o, comm uintptr, exclusive bool, m mode, req uintptr, large bool) C.int {
	c, rc := begin(name, comm, m, req, large)
	if c == nil {
		return rc
	}
	d, op, err := c.reduction(dt, n, o)
	if err != nil {
		return c.fail(err)
	}
	return c.end(d.k.scan(c.e.c, s, r, int(n), op, exclusive, m))
}

func reduceLocal(call string, in, inout uintptr, n int64, dt, o uintptr) C.int {
	d, err := lookupType(dt)
	if err == nil && n < 0 {
		err = errorf(errCount, "count %d is negative", n)
	}
	var op *meshmpi.Op
	if err == nil {
		op, err = lookupOp(o, dt, d)
	}
	if err == nil {
		err = d.k.reduceLocal(in, inout, int(n), op)
	}
	return raise(self, call, err)
}
