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
}

var modeSuffix = [...]string{blocking: "", nonblocking: "", persistent: "_init"}

// begin checks the communicator and, unless blocking, the request pointer.
func begin(name string, comm uintptr, m mode, req uintptr) (*collCall, C.int) {
	if m == nonblocking {
		name = "MPI_I" + string(name[4]+'a'-'A') + name[5:]
	}
	name += modeSuffix[m]
	e, err := lookupComm(comm)
	if err != nil {
		return nil, raise(comm, name, err)
	}
	if m != blocking && req == 0 {
		return nil, raise(comm, name, errorf(errArg, "request is NULL"))
	}
	return &collCall{name: name, comm: comm, e: e, rank: e.c.Rank(), size: e.c.Size(), m: m, req: req}, errSuccess
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
func (c *collCall) typ(h uintptr, n int32) (dtype, error) {
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
	c, rc := begin("MPI_Barrier", comm, m, req)
	if c == nil {
		return rc
	}
	return c.end(run(m, func() error { return meshmpi.Barrier(c.e.c) },
		func() (*meshmpi.Request, error) { return meshmpi.Ibarrier(c.e.c) },
		func() (*meshmpi.Request, error) { return meshmpi.BarrierInit(c.e.c) }))
}

//export mpiabi_Barrier
func mpiabi_Barrier(comm uintptr) C.int { return barrier(comm, blocking, 0) }

//export mpiabi_Ibarrier
func mpiabi_Ibarrier(comm, req uintptr) C.int { return barrier(comm, nonblocking, req) }

//export mpiabi_Barrier_init
func mpiabi_Barrier_init(comm, info, req uintptr) C.int { return barrier(comm, persistent, req) }

func bcast(buf uintptr, n int32, dt uintptr, root int32, comm uintptr, m mode, req uintptr) C.int {
	c, rc := begin("MPI_Bcast", comm, m, req)
	if c == nil {
		return rc
	}
	d, err := c.typ(dt, n)
	if err != nil {
		return c.fail(err)
	}
	return c.end(d.k.bcast(c.e.c, buf, int(n), rankIn(root), m))
}

//export mpiabi_Bcast
func mpiabi_Bcast(buf uintptr, n int32, dt uintptr, root int32, comm uintptr) C.int {
	return bcast(buf, n, dt, root, comm, blocking, 0)
}

//export mpiabi_Ibcast
func mpiabi_Ibcast(buf uintptr, n int32, dt uintptr, root int32, comm, req uintptr) C.int {
	return bcast(buf, n, dt, root, comm, nonblocking, req)
}

//export mpiabi_Bcast_init
func mpiabi_Bcast_init(buf uintptr, n int32, dt uintptr, root int32, comm, info, req uintptr) C.int {
	return bcast(buf, n, dt, root, comm, persistent, req)
}

// pair looks up a send and a receive type that must move the same Go
// type; a side that is not significant (its flag false) is skipped.
func (c *collCall) pair(st uintptr, sn int32, useSend bool, rt uintptr, rn int32, useRecv bool) (kind, error) {
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

func gather(s uintptr, sn int32, st uintptr, r uintptr, rn int32, rt uintptr, root int32, comm uintptr, m mode, req uintptr) C.int {
	c, rc := begin("MPI_Gather", comm, m, req)
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

//export mpiabi_Gather
func mpiabi_Gather(s uintptr, sn int32, st uintptr, r uintptr, rn int32, rt uintptr, root int32, comm uintptr) C.int {
	return gather(s, sn, st, r, rn, rt, root, comm, blocking, 0)
}

//export mpiabi_Igather
func mpiabi_Igather(s uintptr, sn int32, st uintptr, r uintptr, rn int32, rt uintptr, root int32, comm, req uintptr) C.int {
	return gather(s, sn, st, r, rn, rt, root, comm, nonblocking, req)
}

//export mpiabi_Gather_init
func mpiabi_Gather_init(s uintptr, sn int32, st uintptr, r uintptr, rn int32, rt uintptr, root int32, comm, info, req uintptr) C.int {
	return gather(s, sn, st, r, rn, rt, root, comm, persistent, req)
}

func gatherv(s uintptr, sn int32, st uintptr, r, counts, displs uintptr, rt uintptr, root int32, comm uintptr, m mode, req uintptr) C.int {
	c, rc := begin("MPI_Gatherv", comm, m, req)
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

//export mpiabi_Gatherv
func mpiabi_Gatherv(s uintptr, sn int32, st uintptr, r, counts, displs uintptr, rt uintptr, root int32, comm uintptr) C.int {
	return gatherv(s, sn, st, r, counts, displs, rt, root, comm, blocking, 0)
}

//export mpiabi_Igatherv
func mpiabi_Igatherv(s uintptr, sn int32, st uintptr, r, counts, displs uintptr, rt uintptr, root int32, comm, req uintptr) C.int {
	return gatherv(s, sn, st, r, counts, displs, rt, root, comm, nonblocking, req)
}

//export mpiabi_Gatherv_init
func mpiabi_Gatherv_init(s uintptr, sn int32, st uintptr, r, counts, displs uintptr, rt uintptr, root int32, comm, info, req uintptr) C.int {
	return gatherv(s, sn, st, r, counts, displs, rt, root, comm, persistent, req)
}

func scatter(s uintptr, sn int32, st uintptr, r uintptr, rn int32, rt uintptr, root int32, comm uintptr, m mode, req uintptr) C.int {
	c, rc := begin("MPI_Scatter", comm, m, req)
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

//export mpiabi_Scatter
func mpiabi_Scatter(s uintptr, sn int32, st uintptr, r uintptr, rn int32, rt uintptr, root int32, comm uintptr) C.int {
	return scatter(s, sn, st, r, rn, rt, root, comm, blocking, 0)
}

//export mpiabi_Iscatter
func mpiabi_Iscatter(s uintptr, sn int32, st uintptr, r uintptr, rn int32, rt uintptr, root int32, comm, req uintptr) C.int {
	return scatter(s, sn, st, r, rn, rt, root, comm, nonblocking, req)
}

//export mpiabi_Scatter_init
func mpiabi_Scatter_init(s uintptr, sn int32, st uintptr, r uintptr, rn int32, rt uintptr, root int32, comm, info, req uintptr) C.int {
	return scatter(s, sn, st, r, rn, rt, root, comm, persistent, req)
}

func scatterv(s, counts, displs uintptr, st uintptr, r uintptr, rn int32, rt uintptr, root int32, comm uintptr, m mode, req uintptr) C.int {
	c, rc := begin("MPI_Scatterv", comm, m, req)
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

//export mpiabi_Scatterv
func mpiabi_Scatterv(s, counts, displs uintptr, st uintptr, r uintptr, rn int32, rt uintptr, root int32, comm uintptr) C.int {
	return scatterv(s, counts, displs, st, r, rn, rt, root, comm, blocking, 0)
}

//export mpiabi_Iscatterv
func mpiabi_Iscatterv(s, counts, displs uintptr, st uintptr, r uintptr, rn int32, rt uintptr, root int32, comm, req uintptr) C.int {
	return scatterv(s, counts, displs, st, r, rn, rt, root, comm, nonblocking, req)
}

//export mpiabi_Scatterv_init
func mpiabi_Scatterv_init(s, counts, displs uintptr, st uintptr, r uintptr, rn int32, rt uintptr, root int32, comm, info, req uintptr) C.int {
	return scatterv(s, counts, displs, st, r, rn, rt, root, comm, persistent, req)
}

func allgather(s uintptr, sn int32, st uintptr, r uintptr, rn int32, rt uintptr, comm uintptr, m mode, req uintptr) C.int {
	c, rc := begin("MPI_Allgather", comm, m, req)
	if c == nil {
		return rc
	}
	k, err := c.pair(st, sn, s != inPlace, rt, rn, true)
	if err != nil {
		return c.fail(err)
	}
	return c.end(k.allgather(c.e.c, s, int(sn), r, int(rn)*c.size, m))
}

//export mpiabi_Allgather
func mpiabi_Allgather(s uintptr, sn int32, st uintptr, r uintptr, rn int32, rt uintptr, comm uintptr) C.int {
	return allgather(s, sn, st, r, rn, rt, comm, blocking, 0)
}

//export mpiabi_Iallgather
func mpiabi_Iallgather(s uintptr, sn int32, st uintptr, r uintptr, rn int32, rt uintptr, comm, req uintptr) C.int {
	return allgather(s, sn, st, r, rn, rt, comm, nonblocking, req)
}

//export mpiabi_Allgather_init
func mpiabi_Allgather_init(s uintptr, sn int32, st uintptr, r uintptr, rn int32, rt uintptr, comm, info, req uintptr) C.int {
	return allgather(s, sn, st, r, rn, rt, comm, persistent, req)
}

func allgatherv(s uintptr, sn int32, st uintptr, r, counts, displs uintptr, rt uintptr, comm uintptr, m mode, req uintptr) C.int {
	c, rc := begin("MPI_Allgatherv", comm, m, req)
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

//export mpiabi_Allgatherv
func mpiabi_Allgatherv(s uintptr, sn int32, st uintptr, r, counts, displs uintptr, rt uintptr, comm uintptr) C.int {
	return allgatherv(s, sn, st, r, counts, displs, rt, comm, blocking, 0)
}

//export mpiabi_Iallgatherv
func mpiabi_Iallgatherv(s uintptr, sn int32, st uintptr, r, counts, displs uintptr, rt uintptr, comm, req uintptr) C.int {
	return allgatherv(s, sn, st, r, counts, displs, rt, comm, nonblocking, req)
}

//export mpiabi_Allgatherv_init
func mpiabi_Allgatherv_init(s uintptr, sn int32, st uintptr, r, counts, displs uintptr, rt uintptr, comm, info, req uintptr) C.int {
	return allgatherv(s, sn, st, r, counts, displs, rt, comm, persistent, req)
}

func alltoall(s uintptr, sn int32, st uintptr, r uintptr, rn int32, rt uintptr, comm uintptr, m mode, req uintptr) C.int {
	c, rc := begin("MPI_Alltoall", comm, m, req)
	if c == nil {
		return rc
	}
	k, err := c.pair(st, sn, s != inPlace, rt, rn, true)
	if err != nil {
		return c.fail(err)
	}
	return c.end(k.alltoall(c.e.c, s, int(sn)*c.size, r, int(rn)*c.size, m))
}

//export mpiabi_Alltoall
func mpiabi_Alltoall(s uintptr, sn int32, st uintptr, r uintptr, rn int32, rt uintptr, comm uintptr) C.int {
	return alltoall(s, sn, st, r, rn, rt, comm, blocking, 0)
}

//export mpiabi_Ialltoall
func mpiabi_Ialltoall(s uintptr, sn int32, st uintptr, r uintptr, rn int32, rt uintptr, comm, req uintptr) C.int {
	return alltoall(s, sn, st, r, rn, rt, comm, nonblocking, req)
}

//export mpiabi_Alltoall_init
func mpiabi_Alltoall_init(s uintptr, sn int32, st uintptr, r uintptr, rn int32, rt uintptr, comm, info, req uintptr) C.int {
	return alltoall(s, sn, st, r, rn, rt, comm, persistent, req)
}

func alltoallv(s, scounts, sdispls, st, r, rcounts, rdispls, rt, comm uintptr, m mode, req uintptr) C.int {
	c, rc := begin("MPI_Alltoallv", comm, m, req)
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

//export mpiabi_Alltoallv
func mpiabi_Alltoallv(s, scounts, sdispls, st, r, rcounts, rdispls, rt, comm uintptr) C.int {
	return alltoallv(s, scounts, sdispls, st, r, rcounts, rdispls, rt, comm, blocking, 0)
}

//export mpiabi_Ialltoallv
func mpiabi_Ialltoallv(s, scounts, sdispls, st, r, rcounts, rdispls, rt, comm, req uintptr) C.int {
	return alltoallv(s, scounts, sdispls, st, r, rcounts, rdispls, rt, comm, nonblocking, req)
}

//export mpiabi_Alltoallv_init
func mpiabi_Alltoallv_init(s, scounts, sdispls, st, r, rcounts, rdispls, rt, comm, info, req uintptr) C.int {
	return alltoallv(s, scounts, sdispls, st, r, rcounts, rdispls, rt, comm, persistent, req)
}

// reduction looks up a reduction's datatype, count and operation.
func (c *collCall) reduction(dt uintptr, n int32, o uintptr) (dtype, *meshmpi.Op, error) {
	d, err := c.typ(dt, n)
	if err != nil {
		return d, nil, err
	}
	op, err := lookupOp(o, dt, d)
	return d, op, err
}

func reduce(s, r uintptr, n int32, dt, o uintptr, root int32, comm uintptr, m mode, req uintptr) C.int {
	c, rc := begin("MPI_Reduce", comm, m, req)
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

//export mpiabi_Reduce
func mpiabi_Reduce(s, r uintptr, n int32, dt, o uintptr, root int32, comm uintptr) C.int {
	return reduce(s, r, n, dt, o, root, comm, blocking, 0)
}

//export mpiabi_Ireduce
func mpiabi_Ireduce(s, r uintptr, n int32, dt, o uintptr, root int32, comm, req uintptr) C.int {
	return reduce(s, r, n, dt, o, root, comm, nonblocking, req)
}

//export mpiabi_Reduce_init
func mpiabi_Reduce_init(s, r uintptr, n int32, dt, o uintptr, root int32, comm, info, req uintptr) C.int {
	return reduce(s, r, n, dt, o, root, comm, persistent, req)
}

func allreduce(s, r uintptr, n int32, dt, o, comm uintptr, m mode, req uintptr) C.int {
	c, rc := begin("MPI_Allreduce", comm, m, req)
	if c == nil {
		return rc
	}
	d, op, err := c.reduction(dt, n, o)
	if err != nil {
		return c.fail(err)
	}
	return c.end(d.k.allreduce(c.e.c, s, r, int(n), op, m))
}

//export mpiabi_Allreduce
func mpiabi_Allreduce(s, r uintptr, n int32, dt, o, comm uintptr) C.int {
	return allreduce(s, r, n, dt, o, comm, blocking, 0)
}

//export mpiabi_Iallreduce
func mpiabi_Iallreduce(s, r uintptr, n int32, dt, o, comm, req uintptr) C.int {
	return allreduce(s, r, n, dt, o, comm, nonblocking, req)
}

//export mpiabi_Allreduce_init
func mpiabi_Allreduce_init(s, r uintptr, n int32, dt, o, comm, info, req uintptr) C.int {
	return allreduce(s, r, n, dt, o, comm, persistent, req)
}

func reduceScatterBlock(s, r uintptr, n int32, dt, o, comm uintptr, m mode, req uintptr) C.int {
	c, rc := begin("MPI_Reduce_scatter_block", comm, m, req)
	if c == nil {
		return rc
	}
	d, op, err := c.reduction(dt, n, o)
	if err != nil {
		return c.fail(err)
	}
	return c.end(d.k.reduceScatterBlock(c.e.c, s, r, int(n)*c.size, int(n), op, m))
}

//export mpiabi_Reduce_scatter_block
func mpiabi_Reduce_scatter_block(s, r uintptr, n int32, dt, o, comm uintptr) C.int {
	return reduceScatterBlock(s, r, n, dt, o, comm, blocking, 0)
}

//export mpiabi_Ireduce_scatter_block
func mpiabi_Ireduce_scatter_block(s, r uintptr, n int32, dt, o, comm, req uintptr) C.int {
	return reduceScatterBlock(s, r, n, dt, o, comm, nonblocking, req)
}

//export mpiabi_Reduce_scatter_block_init
func mpiabi_Reduce_scatter_block_init(s, r uintptr, n int32, dt, o, comm, info, req uintptr) C.int {
	return reduceScatterBlock(s, r, n, dt, o, comm, persistent, req)
}

func reduceScatter(s, r, counts, dt, o, comm uintptr, m mode, req uintptr) C.int {
	c, rc := begin("MPI_Reduce_scatter", comm, m, req)
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
	total := 0
	for i, n := range cs {
		if n < 0 {
			return c.fail(errorf(errCount, "count %d of rank %d is negative", n, i))
		}
		total += n
	}
	return c.end(d.k.reduceScatter(c.e.c, s, r, total, cs[c.rank], cs, op, m))
}

//export mpiabi_Reduce_scatter
func mpiabi_Reduce_scatter(s, r, counts, dt, o, comm uintptr) C.int {
	return reduceScatter(s, r, counts, dt, o, comm, blocking, 0)
}

//export mpiabi_Ireduce_scatter
func mpiabi_Ireduce_scatter(s, r, counts, dt, o, comm, req uintptr) C.int {
	return reduceScatter(s, r, counts, dt, o, comm, nonblocking, req)
}

//export mpiabi_Reduce_scatter_init
func mpiabi_Reduce_scatter_init(s, r, counts, dt, o, comm, info, req uintptr) C.int {
	return reduceScatter(s, r, counts, dt, o, comm, persistent, req)
}

func scan(name string, s, r uintptr, n int32, dt, o, comm uintptr, exclusive bool, m mode, req uintptr) C.int {
	c, rc := begin(name, comm, m, req)
	if c == nil {
		return rc
	}
	d, op, err := c.reduction(dt, n, o)
	if err != nil {
		return c.fail(err)
	}
	return c.end(d.k.scan(c.e.c, s, r, int(n), op, exclusive, m))
}

//export mpiabi_Scan
func mpiabi_Scan(s, r uintptr, n int32, dt, o, comm uintptr) C.int {
	return scan("MPI_Scan", s, r, n, dt, o, comm, false, blocking, 0)
}

//export mpiabi_Iscan
func mpiabi_Iscan(s, r uintptr, n int32, dt, o, comm, req uintptr) C.int {
	return scan("MPI_Scan", s, r, n, dt, o, comm, false, nonblocking, req)
}

//export mpiabi_Scan_init
func mpiabi_Scan_init(s, r uintptr, n int32, dt, o, comm, info, req uintptr) C.int {
	return scan("MPI_Scan", s, r, n, dt, o, comm, false, persistent, req)
}

//export mpiabi_Exscan
func mpiabi_Exscan(s, r uintptr, n int32, dt, o, comm uintptr) C.int {
	return scan("MPI_Exscan", s, r, n, dt, o, comm, true, blocking, 0)
}

//export mpiabi_Iexscan
func mpiabi_Iexscan(s, r uintptr, n int32, dt, o, comm, req uintptr) C.int {
	return scan("MPI_Exscan", s, r, n, dt, o, comm, true, nonblocking, req)
}

//export mpiabi_Exscan_init
func mpiabi_Exscan_init(s, r uintptr, n int32, dt, o, comm, info, req uintptr) C.int {
	return scan("MPI_Exscan", s, r, n, dt, o, comm, true, persistent, req)
}

//export mpiabi_Reduce_local
func mpiabi_Reduce_local(in, inout uintptr, n int32, dt, o uintptr) C.int {
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
	return raise(self, "MPI_Reduce_local", err)
}
