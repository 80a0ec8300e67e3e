package abi

/*
#include <stdint.h>
*/
import "C"

import "github.com/meshmpi/meshmpi"

// The neighborhood collectives (MPI-4.1 §8.6) without reductions move
// bytes: each side's buffer is viewed as the bytes of its count elements
// (a derived type's through its packed copy), so the send and receive
// types may differ as long as their signatures agree, as MPI requires.

// degrees returns c's in- and out-degree in its topology: the number of
// blocks a neighborhood collective receives and sends.
func degrees(c *meshmpi.Comm) (in, out int, err error) {
	t, err := c.TopoTest()
	if err != nil {
		return 0, 0, err
	}
	switch t {
	case meshmpi.TopoCart:
		d, err := c.CartdimGet()
		return 2 * d, 2 * d, err
	case meshmpi.TopoGraph:
		n, err := c.GraphNeighborsCount(c.Rank())
		return n, n, err
	case meshmpi.TopoDistGraph:
		in, out, _, err := c.DistGraphNeighborsCount()
		return in, out, err
	}
	return 0, 0, errorf(errTopology, "the communicator has no topology")
}

// byteSide is sideType moving bytes: one unit is one byte, an element of
// the type its size in bytes.
func (c *collCall) byteSide(h uintptr, n int64) (tside, error) {
	t, err := c.sideType(h, n)
	if err != nil {
		return t, err
	}
	if t.e != nil {
		return tside{tk[uint8]{}, t.e, t.e.size()}, nil
	}
	d, _ := lookupType(h)
	return tside{tk[uint8]{}, nil, d.size}, nil
}

// neighborBlocks is neighborAlltoall and neighborAllgather: blocks of sn
// elements to each out-neighbor (one block for everyone when allgather),
// blocks of rn from each in-neighbor.
func neighborBlocks(name string, allgather bool, s uintptr, sn int64, st uintptr, r uintptr, rn int64, rt uintptr, comm uintptr, m mode, req uintptr, large bool) C.int {
	c, rc := begin(name, comm, m, req, large)
	if c == nil {
		return rc
	}
	in, out, err := degrees(c.e.c)
	if err != nil {
		return c.fail(err)
	}
	sd, err := c.byteSide(st, sn)
	if err != nil {
		return c.fail(err)
	}
	rd, err := c.byteSide(rt, rn)
	if err != nil {
		return c.fail(err)
	}
	if s == inPlace || r == inPlace {
		return c.fail(errorf(errBuffer, "MPI_IN_PLACE is not allowed in a neighborhood collective"))
	}
	blocks := out
	if allgather {
		blocks = 1
	}
	c.need(s, sd, int(sn)*blocks, "sendbuf", false)
	c.need(r, rd, int(rn)*in, "recvbuf", false)
	s, sl := c.buf(sd, s, int(sn)*blocks, true, false)
	r, rl := c.buf(rd, r, int(rn)*in, false, true)
	if err := c.prep(); err != nil {
		return c.fail(err)
	}
	sb, rb, cm := view[byte](s, sl), view[byte](r, rl), c.e.c
	if allgather {
		return c.end(run(m, func() error { return meshmpi.NeighborAllgather(cm, sb, rb) },
			func() (*meshmpi.Request, error) { return meshmpi.IneighborAllgather(cm, sb, rb) },
			func() (*meshmpi.Request, error) { return meshmpi.NeighborAllgatherInit(cm, sb, rb) }))
	}
	return c.end(run(m, func() error { return meshmpi.NeighborAlltoall(cm, sb, rb) },
		func() (*meshmpi.Request, error) { return meshmpi.IneighborAlltoall(cm, sb, rb) },
		func() (*meshmpi.Request, error) { return meshmpi.NeighborAlltoallInit(cm, sb, rb) }))
}

//export mpiabi_Neighbor_alltoall
func mpiabi_Neighbor_alltoall(s uintptr, sn int32, st uintptr, r uintptr, rn int32, rt uintptr, comm uintptr) C.int {
	return neighborBlocks("MPI_Neighbor_alltoall", false, s, int64(sn), st, r, int64(rn), rt, comm, blocking, 0, false)
}

//export mpiabi_Neighbor_alltoall_c
func mpiabi_Neighbor_alltoall_c(s uintptr, sn int64, st uintptr, r uintptr, rn int64, rt uintptr, comm uintptr) C.int {
	return neighborBlocks("MPI_Neighbor_alltoall", false, s, sn, st, r, rn, rt, comm, blocking, 0, true)
}

//export mpiabi_Ineighbor_alltoall
func mpiabi_Ineighbor_alltoall(s uintptr, sn int32, st uintptr, r uintptr, rn int32, rt uintptr, comm uintptr, req uintptr) C.int {
	return neighborBlocks("MPI_Neighbor_alltoall", false, s, int64(sn), st, r, int64(rn), rt, comm, nonblocking, req, false)
}

//export mpiabi_Ineighbor_alltoall_c
func mpiabi_Ineighbor_alltoall_c(s uintptr, sn int64, st uintptr, r uintptr, rn int64, rt uintptr, comm uintptr, req uintptr) C.int {
	return neighborBlocks("MPI_Neighbor_alltoall", false, s, sn, st, r, rn, rt, comm, nonblocking, req, true)
}

//export mpiabi_Neighbor_alltoall_init
func mpiabi_Neighbor_alltoall_init(s uintptr, sn int32, st uintptr, r uintptr, rn int32, rt uintptr, comm uintptr, info uintptr, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Neighbor_alltoall_init", err)
	}
	return neighborBlocks("MPI_Neighbor_alltoall", false, s, int64(sn), st, r, int64(rn), rt, comm, persistent, req, false)
}

//export mpiabi_Neighbor_alltoall_init_c
func mpiabi_Neighbor_alltoall_init_c(s uintptr, sn int64, st uintptr, r uintptr, rn int64, rt uintptr, comm uintptr, info uintptr, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Neighbor_alltoall_init_c", err)
	}
	return neighborBlocks("MPI_Neighbor_alltoall", false, s, sn, st, r, rn, rt, comm, persistent, req, true)
}

//export mpiabi_Neighbor_allgather
func mpiabi_Neighbor_allgather(s uintptr, sn int32, st uintptr, r uintptr, rn int32, rt uintptr, comm uintptr) C.int {
	return neighborBlocks("MPI_Neighbor_allgather", true, s, int64(sn), st, r, int64(rn), rt, comm, blocking, 0, false)
}

//export mpiabi_Neighbor_allgather_c
func mpiabi_Neighbor_allgather_c(s uintptr, sn int64, st uintptr, r uintptr, rn int64, rt uintptr, comm uintptr) C.int {
	return neighborBlocks("MPI_Neighbor_allgather", true, s, sn, st, r, rn, rt, comm, blocking, 0, true)
}

//export mpiabi_Ineighbor_allgather
func mpiabi_Ineighbor_allgather(s uintptr, sn int32, st uintptr, r uintptr, rn int32, rt uintptr, comm uintptr, req uintptr) C.int {
	return neighborBlocks("MPI_Neighbor_allgather", true, s, int64(sn), st, r, int64(rn), rt, comm, nonblocking, req, false)
}

//export mpiabi_Ineighbor_allgather_c
func mpiabi_Ineighbor_allgather_c(s uintptr, sn int64, st uintptr, r uintptr, rn int64, rt uintptr, comm uintptr, req uintptr) C.int {
	return neighborBlocks("MPI_Neighbor_allgather", true, s, sn, st, r, rn, rt, comm, nonblocking, req, true)
}

//export mpiabi_Neighbor_allgather_init
func mpiabi_Neighbor_allgather_init(s uintptr, sn int32, st uintptr, r uintptr, rn int32, rt uintptr, comm uintptr, info uintptr, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Neighbor_allgather_init", err)
	}
	return neighborBlocks("MPI_Neighbor_allgather", true, s, int64(sn), st, r, int64(rn), rt, comm, persistent, req, false)
}

//export mpiabi_Neighbor_allgather_init_c
func mpiabi_Neighbor_allgather_init_c(s uintptr, sn int64, st uintptr, r uintptr, rn int64, rt uintptr, comm uintptr, info uintptr, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Neighbor_allgather_init_c", err)
	}
	return neighborBlocks("MPI_Neighbor_allgather", true, s, sn, st, r, rn, rt, comm, persistent, req, true)
}
