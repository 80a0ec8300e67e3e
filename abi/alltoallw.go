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
// or, for _c, MPI_Aint) and datatypes per rank, predefined or derived,
// and the bytes they touch relative to the buffer, [lo, hi): lo is below
// zero when a type reaches below its origin (a negative lower bound).
func (c *collCall) side(counts, displs, types uintptr) ([]int, []int, []*meshmpi.Datatype, int, int, error) {
	return c.sideN(counts, displs, types, c.size, c.large)
}

// sideN is side over n ranks (a neighborhood collective's in- or
// out-neighbors), its displacements MPI_Aint when aint (always so in
// MPI_Neighbor_alltoallw).
func (c *collCall) sideN(counts, displs, types uintptr, n int, aint bool) ([]int, []int, []*meshmpi.Datatype, int, int, error) {
	if n == 0 {
		return nil, nil, nil, 0, 0, nil
	}
	if counts == 0 || displs == 0 || types == 0 {
		return nil, nil, nil, 0, 0, errorf(errArg, "counts, displs or types is NULL")
	}
	cs, ds := cints(counts, n), cints(displs, n)
	if c.large {
		cs = cints64(counts, n)
	}
	if aint {
		ds = cints64(displs, n)
	}
	hs := unsafe.Slice((*uintptr)(ptr(types)), n)
	ts := make([]*meshmpi.Datatype, n)
	lo, hi, any := 0, 0, false
	for r := range n {
		if cs[r] < 0 {
			return nil, nil, nil, 0, 0, errorf(errCount, "count %d of rank %d is negative", cs[r], r)
		}
		e, err := usable(hs[r])
		if err != nil {
			return nil, nil, nil, 0, 0, err
		}
		if e.str != nil {
			return nil, nil, nil, 0, 0, errorf(errUnsupported, "the w-forms take the Go type, which the C binding does not compile for %s (over %d runs of basic elements)", e, maxRuns)
		}
		ts[r] = e.g
		if l, h := e.span(cs[r]); h > l {
			l, h = l+ds[r], h+ds[r]
			if !any || l < lo {
				lo = l
			}
			if !any || h > hi {
				hi = h
			}
			any = true
		}
	}
	return cs, ds, ts, lo, hi, nil
}

// zeroPage is where no program's memory is: a NULL buffer (MPI_BOTTOM)
// whose datatypes reach below it is NULL with predefined types or
// relative displacements, not absolute addresses.
const zeroPage = 4096

// bottom is MPI_ERR_BUFFER for a NULL buffer whose elements [lo, hi) lie
// in the zero page: the Go API took the nil view for an empty buffer.
func bottom(addr uintptr, lo, hi int, what string) error {
	if addr == 0 && hi > lo && lo < zeroPage {
		return errorf(errBuffer, "%s is NULL (MPI_BOTTOM) but its datatypes' displacements are not addresses", what)
	}
	return nil
}

// shifted views [addr+lo, addr+hi) and moves the displacements down by
// lo when lo is negative or the buffer is MPI_BOTTOM (absolute
// displacements), since the Go API's buffer starts at the lowest byte it
// touches.
func shifted(addr uintptr, ds []int, lo, hi int) []byte {
	if hi <= lo || addr == 0 && lo < zeroPage {
		return nil // bottom has said why
	}
	if lo >= 0 && addr != 0 {
		return view[byte](addr, hi)
	}
	for i := range ds {
		ds[i] -= lo
	}
	return view[byte](uintptr(int(addr)+lo), hi-lo)
}

func alltoallw(s, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, comm uintptr, m mode, req uintptr, large bool) C.int {
	c, rc := begin("MPI_Alltoallw", comm, m, req, large)
	if c == nil {
		return rc
	}
	var scs, sds []int
	var sts []*meshmpi.Datatype
	var slo, shi int
	var err error
	if s != inPlace {
		if scs, sds, sts, slo, shi, err = c.side(scounts, sdispls, stypes); err != nil {
			return c.fail(err)
		}
	}
	rcs, rds, rts, rlo, rhi, err := c.side(rcounts, rdispls, rtypes)
	if err != nil {
		return c.fail(err)
	}
	if err := bottom(s, slo, shi, "sendbuf"); err != nil {
		return c.fail(err)
	}
	if err := bottom(r, rlo, rhi, "recvbuf"); err != nil {
		return c.fail(err)
	}
	sb := meshmpi.InPlace[byte]()
	if s != inPlace {
		sb = shifted(s, sds, slo, shi)
	}
	rb := shifted(r, rds, rlo, rhi)
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
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Alltoallw_init", err)
	}
	return alltoallw(s, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, comm, persistent, req, false)
}

//export mpiabi_Alltoallw_init_c
func mpiabi_Alltoallw_init_c(s, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, comm, info, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Alltoallw_init_c", err)
	}
	return alltoallw(s, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, comm, persistent, req, true)
}

// neighborAlltoallw is MPI_Neighbor_alltoallw: Alltoallw's sides over
// the out-neighbors (send) and in-neighbors (receive), with MPI_Aint
// displacements.
func neighborAlltoallw(s, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, comm uintptr, m mode, req uintptr, large bool) C.int {
	c, rc := begin("MPI_Neighbor_alltoallw", comm, m, req, large)
	if c == nil {
		return rc
	}
	in, out, err := degrees(c.e.c)
	if err != nil {
		return c.fail(err)
	}
	if s == inPlace || r == inPlace {
		return c.fail(errorf(errBuffer, "MPI_IN_PLACE is not allowed in a neighborhood collective"))
	}
	scs, sds, sts, slo, shi, err := c.sideN(scounts, sdispls, stypes, out, true)
	if err != nil {
		return c.fail(err)
	}
	rcs, rds, rts, rlo, rhi, err := c.sideN(rcounts, rdispls, rtypes, in, true)
	if err != nil {
		return c.fail(err)
	}
	if err := bottom(s, slo, shi, "sendbuf"); err != nil {
		return c.fail(err)
	}
	if err := bottom(r, rlo, rhi, "recvbuf"); err != nil {
		return c.fail(err)
	}
	sb, rb, cm := shifted(s, sds, slo, shi), shifted(r, rds, rlo, rhi), c.e.c
	return c.end(run(m, func() error { return meshmpi.NeighborAlltoallw(cm, sb, scs, sds, sts, rb, rcs, rds, rts) },
		func() (*meshmpi.Request, error) {
			return meshmpi.IneighborAlltoallw(cm, sb, scs, sds, sts, rb, rcs, rds, rts)
		},
		func() (*meshmpi.Request, error) {
			return meshmpi.NeighborAlltoallwInit(cm, sb, scs, sds, sts, rb, rcs, rds, rts)
		}))
}

//export mpiabi_Neighbor_alltoallw
func mpiabi_Neighbor_alltoallw(s, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, comm uintptr) C.int {
	return neighborAlltoallw(s, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, comm, blocking, 0, false)
}

//export mpiabi_Neighbor_alltoallw_c
func mpiabi_Neighbor_alltoallw_c(s, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, comm uintptr) C.int {
	return neighborAlltoallw(s, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, comm, blocking, 0, true)
}

//export mpiabi_Ineighbor_alltoallw
func mpiabi_Ineighbor_alltoallw(s, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, comm, req uintptr) C.int {
	return neighborAlltoallw(s, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, comm, nonblocking, req, false)
}

//export mpiabi_Ineighbor_alltoallw_c
func mpiabi_Ineighbor_alltoallw_c(s, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, comm, req uintptr) C.int {
	return neighborAlltoallw(s, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, comm, nonblocking, req, true)
}

//export mpiabi_Neighbor_alltoallw_init
func mpiabi_Neighbor_alltoallw_init(s, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, comm, info, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Neighbor_alltoallw_init", err)
	}
	return neighborAlltoallw(s, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, comm, persistent, req, false)
}

//export mpiabi_Neighbor_alltoallw_init_c
func mpiabi_Neighbor_alltoallw_init_c(s, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, comm, info, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Neighbor_alltoallw_init_c", err)
	}
	return neighborAlltoallw(s, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, comm, persistent, req, true)
}
