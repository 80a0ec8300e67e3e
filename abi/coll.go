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
	name string
	comm uintptr
	e    *commEntry
	rank int
	// size is the number of ranks the per-rank blocks, counts and
	// displacements are over: the remote group's on an intercommunicator
	// (MPI-4.1 §6.2.2), where local is the local group's
	size, local int
	inter       bool
	m           mode
	req         uintptr
	large       bool     // an MPI_…_c call: MPI_Count counts, MPI_Aint displacements
	stg         *staging // the packed copies of derived-type buffers, or nil
	err         error    // a bad buffer need found, which prep reports
}

// need checks a significant buffer of n elements of t's type before the
// call takes it: NULL is MPI_BOTTOM, a buffer only with a derived
// datatype's absolute displacements (MPI-4.1 §5.1.12), so with a
// predefined type and a count it is MPI_ERR_BUFFER, where the Go API
// would take it for an empty buffer and move nothing; MPI_IN_PLACE is
// MPI_ERR_BUFFER where the call's rules do not allow it (inPlaceOK), and
// on an intercommunicator, which allows it nowhere (MPI-4.1 §6.2.3).
func (c *collCall) need(addr uintptr, t tside, n int, what string, inPlaceOK bool) {
	switch {
	case c.err != nil:
	case addr == inPlace && (!inPlaceOK || c.inter):
		c.err = errorf(errBuffer, "MPI_IN_PLACE is not allowed as %s here", what)
	case addr == 0 && n > 0 && t.e == nil:
		c.err = errorf(errBuffer, "%s is NULL with count %d", what, n)
	}
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
	c := &collCall{name: name, comm: comm, e: e, rank: e.c.Rank(), size: e.c.Size(), local: e.c.Size(), m: m, req: req, large: large}
	if e.c.TestInter() {
		c.inter, c.size = true, e.c.RemoteSize()
	}
	return c, errSuccess
}

// roles tells a rooted collective's rank whether it is the root (its
// buffer of everyone's blocks significant) and whether it contributes or
// receives its own block. On an intracommunicator every rank does, the
// root too; on an intercommunicator the root passes MPI_ROOT, the rest of
// its group MPI_PROC_NULL (they take no part), and the other group the
// root's rank in it.
func (c *collCall) roles(root int32) (atRoot, member bool) {
	if !c.inter {
		return c.rank == int(root), true
	}
	return rankIn(root) == meshmpi.Root, root >= 0
}

// end reports the call's error, or stores its request. A staged call
// (derived types) is unpacked now when blocking, else when its request
// completes.
func (c *collCall) end(r *meshmpi.Request, err error) C.int {
	if err != nil {
		c.stg.release()
		return raise(c.comm, c.name, err)
	}
	if c.m == blocking {
		c.stg.unpack()
		c.stg.release()
		return errSuccess
	}
	return raise(c.comm, c.name, addReqStg(r, c.comm, 1, c.stg, c.req))
}

func (c *collCall) fail(err error) C.int {
	c.stg.release()
	return raise(c.comm, c.name, err)
}

// tside is one side's datatype: the Go element type the call runs on and
// how many of them make one element of the datatype; e is the derived
// type that is staged, nil for a predefined one used in place.
type tside struct {
	k    kind
	e    *typeEntry
	unit int
}

// side looks up a datatype and checks a count.
func (c *collCall) sideType(h uintptr, n int64) (tside, error) {
	if n < 0 {
		return tside{}, errorf(errCount, "count %d is negative", n)
	}
	if _, ok := derivedType(h); ok {
		e, err := usable(h)
		if err != nil {
			return tside{}, err
		}
		if e.mixed || e.basic.k == nil {
			return tside{tk[uint8]{}, e, e.size()}, nil // moved as bytes
		}
		return tside{e.basic.k, e, e.size() / e.basic.size}, nil
	}
	d, err := lookupType(h)
	if err != nil {
		return tside{}, err
	}
	return tside{d.k, nil, 1}, nil
}

// buf is the memory the Go call gets for n elements of t's type at addr:
// addr itself for a predefined type, else a packed copy (packed before
// the call if in, unpacked after it if out). The count is in elements of
// the Go type.
func (c *collCall) buf(t tside, addr uintptr, n int, in, out bool) (uintptr, int) {
	if t.e == nil || addr == inPlace {
		return addr, n * t.unit
	}
	if c.stg == nil {
		c.stg = &staging{persistent: c.m == persistent}
	}
	p, _ := c.stg.add(t.e, addr, n, in, out)
	return p, n * t.unit
}

// bufV is buf for the v-forms: blocks of counts[i] elements at
// displacements displs[i] (in extents of the type) are packed one after
// the other, and the counts and displacements the Go call gets are in
// elements of the Go type, with the span they cover.
func (c *collCall) bufV(t tside, addr uintptr, counts, displs []int, span int, in, out bool) (uintptr, []int, []int, int) {
	if t.e == nil || addr == inPlace {
		return addr, counts, displs, span
	}
	if c.stg == nil {
		c.stg = &staging{persistent: c.m == persistent}
	}
	addrs := make([]uintptr, len(counts))
	cs, ds := make([]int, len(counts)), make([]int, len(counts))
	pos := 0
	for i := range counts {
		addrs[i] = uintptr(int(addr) + displs[i]*t.e.extent())
		cs[i], ds[i] = counts[i]*t.unit, pos
		pos += cs[i]
	}
	p, _ := c.stg.addBlocks(t.e, addrs, counts, in, out)
	return p, cs, ds, pos
}

// prep checks the staged buffers and packs the inputs of a blocking or
// nonblocking call; a persistent one packs at each Start.
func (c *collCall) prep() error {
	if c.err != nil {
		return c.err
	}
	if c.stg == nil {
		return nil
	}
	if err := c.stg.check(); err != nil {
		return err
	}
	if c.m != persistent {
		c.stg.pack()
	}
	return nil
}

// typ looks up a predefined datatype and checks a count.
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
	t, err := c.sideType(dt, n)
	if err != nil {
		return c.fail(err)
	}
	atRoot, member := c.roles(root)
	if atRoot || member {
		c.need(buf, t, int(n), "buffer", false)
	}
	b, bn := c.buf(t, buf, int(n), atRoot, member && !atRoot)
	if err := c.prep(); err != nil {
		return c.fail(err)
	}
	return c.end(t.k.bcast(c.e.c, b, bn, rankIn(root), m))
}

// pair looks up a send and a receive type that must move the same Go
// type; a side that is not significant (its flag false) is skipped.
func (c *collCall) pair(st uintptr, sn int64, useSend bool, rt uintptr, rn int64, useRecv bool) (kind, tside, tside, error) {
	var k kind
	var sd, rd tside
	var err error
	if useSend {
		if sd, err = c.sideType(st, sn); err != nil {
			return nil, sd, rd, err
		}
		k = sd.k
	}
	if useRecv {
		if rd, err = c.sideType(rt, rn); err != nil {
			return nil, sd, rd, err
		}
		// a type of no bytes moves nothing: it takes the other side's
		// element type (MPICH's coll/alltoallw_zeros)
		switch {
		case !useSend || sd.k == rd.k:
		case sd.e != nil && sd.e.size() == 0:
			sd.k, sd.unit = rd.k, 0
		case rd.e != nil && rd.e.size() == 0:
			rd.k, rd.unit = sd.k, 0
		}
		if useSend && sd.k != rd.k {
			return nil, sd, rd, errorf(errType, "the send type's basic elements (%T) and the receive type's (%T) differ (the C binding moves one element type per call)", sd.k, rd.k)
		}
		k = rd.k
	}
	if k == nil {
		k = tk[uint8]{}
	}
	return k, sd, rd, nil
}

func gather(s uintptr, sn int64, st uintptr, r uintptr, rn int64, rt uintptr, root int32, comm uintptr, m mode, req uintptr, large bool) C.int {
	c, rc := begin("MPI_Gather", comm, m, req, large)
	if c == nil {
		return rc
	}
	atRoot, member := c.roles(root)
	k, sd, rd, err := c.pair(st, sn, s != inPlace && member, rt, rn, atRoot)
	if err != nil {
		return c.fail(err)
	}
	if member {
		c.need(s, sd, int(sn), "sendbuf", atRoot)
	}
	if atRoot {
		c.need(r, rd, int(rn)*c.size, "recvbuf", false)
	}
	if !member {
		s = 0
	}
	s, sl := c.buf(sd, s, int(sn), true, false)
	rlen := 0
	if atRoot {
		r, rlen = c.buf(rd, r, int(rn)*c.size, s == inPlace, true)
	} else {
		r = 0
	}
	if err := c.prep(); err != nil {
		return c.fail(err)
	}
	return c.end(k.gather(c.e.c, s, sl, r, rlen, rankIn(root), m))
}

func gatherv(s uintptr, sn int64, st uintptr, r, counts, displs uintptr, rt uintptr, root int32, comm uintptr, m mode, req uintptr, large bool) C.int {
	c, rc := begin("MPI_Gatherv", comm, m, req, large)
	if c == nil {
		return rc
	}
	atRoot, member := c.roles(root)
	k, sd, rd, err := c.pair(st, sn, s != inPlace && member, rt, 0, atRoot)
	if err != nil {
		return c.fail(err)
	}
	if member {
		c.need(s, sd, int(sn), "sendbuf", atRoot)
	}
	var cs, ds []int
	span := 0
	if atRoot {
		if cs, ds, span, err = c.vector(counts, displs); err != nil {
			return c.fail(err)
		}
		c.need(r, rd, span, "recvbuf", false)
		r, cs, ds, span = c.bufV(rd, r, cs, ds, span, s == inPlace, true)
	} else {
		r = 0
	}
	if !member {
		s = 0
	}
	s, sl := c.buf(sd, s, int(sn), true, false)
	if err := c.prep(); err != nil {
		return c.fail(err)
	}
	return c.end(k.gatherv(c.e.c, s, sl, r, span, cs, ds, rankIn(root), m))
}

func scatter(s uintptr, sn int64, st uintptr, r uintptr, rn int64, rt uintptr, root int32, comm uintptr, m mode, req uintptr, large bool) C.int {
	c, rc := begin("MPI_Scatter", comm, m, req, large)
	if c == nil {
		return rc
	}
	atRoot, member := c.roles(root)
	k, sd, rd, err := c.pair(st, sn, atRoot, rt, rn, r != inPlace && member)
	if err != nil {
		return c.fail(err)
	}
	if atRoot {
		c.need(s, sd, int(sn)*c.size, "sendbuf", false)
	}
	if member {
		c.need(r, rd, int(rn), "recvbuf", atRoot)
	}
	slen := 0
	if atRoot {
		s, slen = c.buf(sd, s, int(sn)*c.size, true, false)
	} else {
		s = 0
	}
	if !member {
		r = 0
	}
	r, rl := c.buf(rd, r, int(rn), false, true)
	if err := c.prep(); err != nil {
		return c.fail(err)
	}
	return c.end(k.scatter(c.e.c, s, slen, r, rl, rankIn(root), m))
}

func scatterv(s, counts, displs uintptr, st uintptr, r uintptr, rn int64, rt uintptr, root int32, comm uintptr, m mode, req uintptr, large bool) C.int {
	c, rc := begin("MPI_Scatterv", comm, m, req, large)
	if c == nil {
		return rc
	}
	atRoot, member := c.roles(root)
	k, sd, rd, err := c.pair(st, 0, atRoot, rt, rn, r != inPlace && member)
	if err != nil {
		return c.fail(err)
	}
	if member {
		c.need(r, rd, int(rn), "recvbuf", atRoot)
	}
	var cs, ds []int
	span := 0
	if atRoot {
		if cs, ds, span, err = c.vector(counts, displs); err != nil {
			return c.fail(err)
		}
		c.need(s, sd, span, "sendbuf", false)
		s, cs, ds, span = c.bufV(sd, s, cs, ds, span, true, false)
	} else {
		s = 0
	}
	if !member {
		r = 0
	}
	r, rl := c.buf(rd, r, int(rn), false, true)
	if err := c.prep(); err != nil {
		return c.fail(err)
	}
	return c.end(k.scatterv(c.e.c, s, span, cs, ds, r, rl, rankIn(root), m))
}

func allgather(s uintptr, sn int64, st uintptr, r uintptr, rn int64, rt uintptr, comm uintptr, m mode, req uintptr, large bool) C.int {
	c, rc := begin("MPI_Allgather", comm, m, req, large)
	if c == nil {
		return rc
	}
	k, sd, rd, err := c.pair(st, sn, s != inPlace, rt, rn, true)
	if err != nil {
		return c.fail(err)
	}
	c.need(s, sd, int(sn), "sendbuf", true)
	c.need(r, rd, int(rn)*c.size, "recvbuf", false)
	inplace := s == inPlace
	s, sl := c.buf(sd, s, int(sn), true, false)
	r, rl := c.buf(rd, r, int(rn)*c.size, inplace, true)
	if err := c.prep(); err != nil {
		return c.fail(err)
	}
	return c.end(k.allgather(c.e.c, s, sl, r, rl, m))
}

func allgatherv(s uintptr, sn int64, st uintptr, r, counts, displs uintptr, rt uintptr, comm uintptr, m mode, req uintptr, large bool) C.int {
	c, rc := begin("MPI_Allgatherv", comm, m, req, large)
	if c == nil {
		return rc
	}
	k, sd, rd, err := c.pair(st, sn, s != inPlace, rt, 0, true)
	if err != nil {
		return c.fail(err)
	}
	cs, ds, span, err := c.vector(counts, displs)
	if err != nil {
		return c.fail(err)
	}
	c.need(s, sd, int(sn), "sendbuf", true)
	c.need(r, rd, span, "recvbuf", false)
	r, cs, ds, span = c.bufV(rd, r, cs, ds, span, s == inPlace, true)
	s, sl := c.buf(sd, s, int(sn), true, false)
	if err := c.prep(); err != nil {
		return c.fail(err)
	}
	return c.end(k.allgatherv(c.e.c, s, sl, r, span, cs, ds, m))
}

func alltoall(s uintptr, sn int64, st uintptr, r uintptr, rn int64, rt uintptr, comm uintptr, m mode, req uintptr, large bool) C.int {
	c, rc := begin("MPI_Alltoall", comm, m, req, large)
	if c == nil {
		return rc
	}
	k, sd, rd, err := c.pair(st, sn, s != inPlace, rt, rn, true)
	if err != nil {
		return c.fail(err)
	}
	c.need(s, sd, int(sn)*c.size, "sendbuf", true)
	c.need(r, rd, int(rn)*c.size, "recvbuf", false)
	inplace := s == inPlace
	s, sl := c.buf(sd, s, int(sn)*c.size, true, false)
	r, rl := c.buf(rd, r, int(rn)*c.size, inplace, true)
	if err := c.prep(); err != nil {
		return c.fail(err)
	}
	return c.end(k.alltoall(c.e.c, s, sl, r, rl, m))
}

func alltoallv(s, scounts, sdispls, st, r, rcounts, rdispls, rt, comm uintptr, m mode, req uintptr, large bool) C.int {
	c, rc := begin("MPI_Alltoallv", comm, m, req, large)
	if c == nil {
		return rc
	}
	k, sd, rd, err := c.pair(st, 0, s != inPlace, rt, 0, true)
	if err != nil {
		return c.fail(err)
	}
	var scs, sds []int
	sspan := 0
	inplace := s == inPlace
	if !inplace {
		if scs, sds, sspan, err = c.vector(scounts, sdispls); err != nil {
			return c.fail(err)
		}
	}
	rcs, rds, rspan, err := c.vector(rcounts, rdispls)
	if err != nil {
		return c.fail(err)
	}
	c.need(s, sd, sspan, "sendbuf", true)
	c.need(r, rd, rspan, "recvbuf", false)
	if !inplace {
		s, scs, sds, sspan = c.bufV(sd, s, scs, sds, sspan, true, false)
	}
	r, rcs, rds, rspan = c.bufV(rd, r, rcs, rds, rspan, inplace, true)
	if err := c.prep(); err != nil {
		return c.fail(err)
	}
	return c.end(k.alltoallv(c.e.c, s, sspan, scs, sds, r, rspan, rcs, rds, m))
}

// reduction looks up a reduction's datatype, count and operation. A
// derived type reduces element by element over its packed stream, so its
// basic elements must all be of one predefined type (MPI-4.1 §6.9.2).
func (c *collCall) reduction(dt uintptr, n int64, o uintptr) (tside, *meshmpi.Op, error) {
	t, err := c.sideType(dt, n)
	if err != nil {
		return t, nil, err
	}
	if t.e == nil {
		d, _ := lookupType(dt)
		op, err := lookupOp(o, dt, d)
		return t, op, err
	}
	if t.e.mixed || t.e.basic.k == nil {
		return t, nil, errorf(errType, "%s: a reduction needs every basic element of one predefined type that meshmpi reduces", t.e)
	}
	op, err := lookupOpDerived(o, dt, t.e)
	return t, op, err
}

// wholeElements returns the hints that keep a reduction's operands whole
// elements of a derived type when the operation is an MPI_Op_create
// function: the Go operation runs on the packed stream of the type's
// basic elements, and an algorithm that splits the vector among the ranks
// (Rabenseifner's, the ring's) or into segments could hand the function a
// piece that starts or ends inside an element, where it reads the
// elements' layout wrong (MPICH's coll/allred_derived: a vector type of
// n ints). alg is an algorithm that reduces whole vectors; one segment
// holds everything. Intercommunicators' algorithms work on whole vectors
// already.
func (c *collCall) wholeElements(t tside, o uintptr, alg string) []meshmpi.Hint {
	if _, predefined := ops[o]; predefined || t.e == nil || c.inter || t.e.size() <= t.e.basic.size {
		return nil
	}
	return []meshmpi.Hint{meshmpi.Algorithm(alg), meshmpi.Segment(1 << 40)}
}

func reduce(s, r uintptr, n int64, dt, o uintptr, root int32, comm uintptr, m mode, req uintptr, large bool) C.int {
	c, rc := begin("MPI_Reduce", comm, m, req, large)
	if c == nil {
		return rc
	}
	t, op, err := c.reduction(dt, n, o)
	if err != nil {
		return c.fail(err)
	}
	rn := int(n)
	inplace := s == inPlace
	atRoot, member := c.roles(root)
	if member {
		c.need(s, t, int(n), "sendbuf", atRoot)
	}
	if atRoot {
		c.need(r, t, int(n), "recvbuf", false)
	}
	if c.inter && !member {
		s = 0 // the root's group sends nothing
	}
	s, sl := c.buf(t, s, int(n), true, false)
	if !atRoot {
		r, rn = 0, 0
	} else {
		r, rn = c.buf(t, r, rn, inplace, true)
	}
	if err := c.prep(); err != nil {
		return c.fail(err)
	}
	return c.end(t.k.reduce(c.e.c, s, r, sl, rn, op, rankIn(root), m, c.wholeElements(t, o, "binomial")...))
}

func allreduce(s, r uintptr, n int64, dt, o, comm uintptr, m mode, req uintptr, large bool) C.int {
	c, rc := begin("MPI_Allreduce", comm, m, req, large)
	if c == nil {
		return rc
	}
	t, op, err := c.reduction(dt, n, o)
	if err != nil {
		return c.fail(err)
	}
	c.need(s, t, int(n), "sendbuf", true)
	c.need(r, t, int(n), "recvbuf", false)
	inplace := s == inPlace
	s, _ = c.buf(t, s, int(n), true, false)
	r, rn := c.buf(t, r, int(n), inplace, true)
	if err := c.prep(); err != nil {
		return c.fail(err)
	}
	return c.end(t.k.allreduce(c.e.c, s, r, rn, op, m, c.wholeElements(t, o, "recursive_doubling")...))
}

func reduceScatterBlock(s, r uintptr, n int64, dt, o, comm uintptr, m mode, req uintptr, large bool) C.int {
	c, rc := begin("MPI_Reduce_scatter_block", comm, m, req, large)
	if c == nil {
		return rc
	}
	t, op, err := c.reduction(dt, n, o)
	if err != nil {
		return c.fail(err)
	}
	rn, rl := int(n), 0
	c.need(s, t, rn*c.local, "sendbuf", true)
	if s == inPlace {
		c.need(r, t, rn*c.local, "recvbuf", false)
	} else {
		c.need(r, t, rn, "recvbuf", false)
	}
	if s == inPlace { // the receive buffer holds the whole input (the Go API's rule too)
		r, rl = c.buf(t, r, rn*c.local, true, true)
	} else {
		r, rl = c.buf(t, r, rn, false, true)
	}
	// on an intercommunicator too the input is a block per rank of the
	// local group (MPICH's and the Go API's reading of MPI-4.1 §6.10.1)
	s, sl := c.buf(t, s, rn*c.local, true, false)
	if err := c.prep(); err != nil {
		return c.fail(err)
	}
	return c.end(t.k.reduceScatterBlock(c.e.c, s, r, sl, rl, op, m))
}

func reduceScatter(s, r, counts, dt, o, comm uintptr, m mode, req uintptr, large bool) C.int {
	c, rc := begin("MPI_Reduce_scatter", comm, m, req, large)
	if c == nil {
		return rc
	}
	t, op, err := c.reduction(dt, 0, o)
	if err != nil {
		return c.fail(err)
	}
	if counts == 0 {
		return c.fail(errorf(errArg, "recvcounts is NULL"))
	}
	cs := cints(counts, c.local)
	if c.large {
		cs = cints64(counts, c.local)
	}
	total := 0
	for i, n := range cs {
		if n < 0 {
			return c.fail(errorf(errCount, "count %d of rank %d is negative", n, i))
		}
		total += n
	}
	rl := cs[c.rank]
	c.need(s, t, total, "sendbuf", true)
	if s == inPlace {
		c.need(r, t, total, "recvbuf", false)
	} else {
		c.need(r, t, rl, "recvbuf", false)
	}
	if s == inPlace { // the receive buffer holds the whole input
		r, rl = c.buf(t, r, total, true, true)
	} else {
		r, rl = c.buf(t, r, rl, false, true)
	}
	s, sl := c.buf(t, s, total, true, false)
	if t.unit != 1 {
		for i := range cs {
			cs[i] *= t.unit
		}
	}
	if err := c.prep(); err != nil {
		return c.fail(err)
	}
	return c.end(t.k.reduceScatter(c.e.c, s, r, sl, rl, cs, op, m))
}

func scan(name string, s, r uintptr, n int64, dt, o, comm uintptr, exclusive bool, m mode, req uintptr, large bool) C.int {
	c, rc := begin(name, comm, m, req, large)
	if c == nil {
		return rc
	}
	t, op, err := c.reduction(dt, n, o)
	if err != nil {
		return c.fail(err)
	}
	c.need(s, t, int(n), "sendbuf", true)
	c.need(r, t, int(n), "recvbuf", false)
	inplace := s == inPlace
	s, _ = c.buf(t, s, int(n), true, false)
	r, rn := c.buf(t, r, int(n), inplace, true)
	if err := c.prep(); err != nil {
		return c.fail(err)
	}
	return c.end(t.k.scan(c.e.c, s, r, rn, op, exclusive, m))
}

func reduceLocal(call string, in, inout uintptr, n int64, dt, o uintptr) C.int {
	c := &collCall{name: call, comm: self, m: blocking}
	t, op, err := c.reduction(dt, n, o)
	if err != nil {
		return c.fail(err)
	}
	c.need(in, t, int(n), "inbuf", false)
	c.need(inout, t, int(n), "inoutbuf", false)
	in, _ = c.buf(t, in, int(n), true, false)
	inout, k := c.buf(t, inout, int(n), true, true)
	if err := c.prep(); err != nil {
		return c.fail(err)
	}
	return c.end(nil, t.k.reduceLocal(in, inout, k, op))
}
