package abi

/*
#include <stdint.h>
*/
import "C"

import (
	"unsafe"

	"github.com/meshmpi/meshmpi"
)

// side reads one side of MPI_Alltoallw: counts, byte displacements (int
// or, for _c, MPI_Aint) and datatypes per rank, and the bytes they span.
func (c *collCall) side(counts, displs, types uintptr) ([]int, []int, []*meshmpi.Datatype, int, error) {
	if counts == 0 || displs == 0 || types == 0 {
		return nil, nil, nil, 0, errorf(errArg, "counts, displs or types is NULL")
	}
	cs, ds := cints(counts, c.size), cints(displs, c.size)
	if c.large {
		cs, ds = cints64(counts, c.size), cints64(displs, c.size)
	}
	hs := unsafe.Slice((*uintptr)(ptr(types)), c.size)
	ts := make([]*meshmpi.Datatype, c.size)
	span := 0
	for r := range c.size {
		if cs[r] < 0 {
			return nil, nil, nil, 0, errorf(errCount, "count %d of rank %d is negative", cs[r], r)
		}
		d, err := lookupType(hs[r])
		if err != nil {
			return nil, nil, nil, 0, err
		}
		ts[r] = d.k.datatype()
		if end := ds[r] + cs[r]*d.size; cs[r] > 0 && end > span {
			span = end
		}
	}
	return cs, ds, ts, span, nil
}

func alltoallw(s, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, comm uintptr, m mode, req uintptr, large bool) C.int {
	c, rc := begin("MPI_Alltoallw", comm, m, req, large)
	if c == nil {
		return rc
	}
	var scs, sds []int
	var sts []*meshmpi.Datatype
	var sspan int
	var err error
	if s != inPlace {
		if scs, sds, sts, sspan, err = c.side(scounts, sdispls, stypes); err != nil {
			return c.fail(err)
		}
	}
	rcs, rds, rts, rspan, err := c.side(rcounts, rdispls, rtypes)
	if err != nil {
		return c.fail(err)
	}
	sb, rb := view[byte](s, sspan), view[byte](r, rspan)
	return c.end(run(m, func() error { return meshmpi.Alltoallw(c.e.c, sb, scs, sds, sts, rb, rcs, rds, rts) },
		func() (*meshmpi.Request, error) {
			return meshmpi.Ialltoallw(c.e.c, sb, scs, sds, sts, rb, rcs, rds, rts)
		},
		func() (*meshmpi.Request, error) {
			return meshmpi.AlltoallwInit(c.e.c, sb, scs, sds, sts, rb, rcs, rds, rts)
		}))
}

//export mpiabi_Alltoallw
func mpiabi_Alltoallw(s, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, comm uintptr) C.int {
	return alltoallw(s, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, comm, blocking, 0, false)
}

//export mpiabi_Alltoallw_c
func mpiabi_Alltoallw_c(s, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, comm uintptr) C.int {
	return alltoallw(s, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, comm, blocking, 0, true)
}

//export mpiabi_Ialltoallw
func mpiabi_Ialltoallw(s, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, comm, req uintptr) C.int {
	return alltoallw(s, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, comm, nonblocking, req, false)
}

//export mpiabi_Ialltoallw_c
func mpiabi_Ialltoallw_c(s, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, comm, req uintptr) C.int {
	return alltoallw(s, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, comm, nonblocking, req, true)
}

//export mpiabi_Alltoallw_init
func mpiabi_Alltoallw_init(s, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, comm, info, req uintptr) C.int {
	return alltoallw(s, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, comm, persistent, req, false)
}

//export mpiabi_Alltoallw_init_c
func mpiabi_Alltoallw_init_c(s, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, comm, info, req uintptr) C.int {
	return alltoallw(s, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, comm, persistent, req, true)
}
