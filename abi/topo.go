package abi

/*
#include <stdint.h>
*/
import "C"

import (
	"unsafe"

	"github.com/meshmpi/meshmpi"
)

// Topology kinds of MPI_Topo_test (include/mpi.h).
const (
	topoCart      = 211
	topoGraph     = 212
	topoDistGraph = 213
)

func cbools(u uintptr, n int) []bool {
	s := cints(u, n)
	out := make([]bool, n)
	for i, v := range s {
		out[i] = v != 0
	}
	return out
}

// arrays is MPI_ERR_ARG when one of the arrays a call writes (or reads)
// n entries of is NULL: putInts writes nothing to NULL, which left the
// program's result unset and the call successful.
func arrays(n int, what string, us ...uintptr) error {
	for _, u := range us {
		if n > 0 && u == 0 {
			return errorf(errArg, "%s: an array of %d entries is NULL", what, n)
		}
	}
	return nil
}

func putInts(u uintptr, vs []int) {
	if u == 0 {
		return
	}
	dst := unsafe.Slice((*int32)(ptr(u)), len(vs))
	for i, v := range vs {
		dst[i] = int32(v)
	}
}

//export mpiabi_Dims_create
func mpiabi_Dims_create(nnodes, ndims int32, dims uintptr) C.int {
	if ndims < 0 || (ndims > 0 && dims == 0) {
		return raise(self, "MPI_Dims_create", errorf(errArg, "ndims %d or dims is invalid", ndims))
	}
	out, err := meshmpi.DimsCreate(int(nnodes), cints(dims, int(ndims)))
	if err == nil {
		putInts(dims, out)
	}
	return raise(self, "MPI_Dims_create", err)
}

//export mpiabi_Cart_create
func mpiabi_Cart_create(comm uintptr, ndims int32, dims, periods uintptr, reorder int32, out uintptr) C.int {
	e, err := lookupComm(comm)
	if err == nil && (ndims < 0 || out == 0 || (ndims > 0 && (dims == 0 || periods == 0))) {
		err = errorf(errArg, "ndims %d, dims, periods or comm_cart is invalid", ndims)
	}
	var n *meshmpi.Comm
	if err == nil {
		n, err = e.c.CartCreate(cints(dims, int(ndims)), cbools(periods, int(ndims)), reorder != 0)
	}
	if err != nil {
		return raise(comm, "MPI_Cart_create", err)
	}
	if n == nil {
		putHandle(out, commNull)
		return errSuccess
	}
	h, err := addComm(e, n)
	if err == nil {
		putHandle(out, h)
	}
	return raise(comm, "MPI_Cart_create", err)
}

//export mpiabi_Cartdim_get
func mpiabi_Cartdim_get(comm, ndims uintptr) C.int {
	e, err := lookupComm(comm)
	var n int
	if err == nil {
		n, err = e.c.CartdimGet()
	}
	if err == nil {
		err = arrays(1, "ndims", ndims)
	}
	if err == nil {
		putInt(ndims, n)
	}
	return raise(comm, "MPI_Cartdim_get", err)
}

//export mpiabi_Cart_get
func mpiabi_Cart_get(comm uintptr, maxdims int32, dims, periods, coords uintptr) C.int {
	e, err := lookupComm(comm)
	var ds, cs []int
	var ps []bool
	if err == nil {
		ds, ps, cs, err = e.c.CartGet()
	}
	if err == nil && int(maxdims) < len(ds) {
		err = errorf(errArg, "maxdims %d is less than the grid's %d dimensions", maxdims, len(ds))
	}
	if err == nil {
		err = arrays(len(ds), "dims, periods or coords", dims, periods, coords)
	}
	if err == nil {
		pi := make([]int, len(ps))
		for i, p := range ps {
			pi[i] = b2i(p)
		}
		putInts(dims, ds)
		putInts(periods, pi)
		putInts(coords, cs)
	}
	return raise(comm, "MPI_Cart_get", err)
}

//export mpiabi_Cart_rank
func mpiabi_Cart_rank(comm, coords, rank uintptr) C.int {
	e, err := lookupComm(comm)
	var n, r int
	if err == nil {
		n, err = e.c.CartdimGet()
	}
	if err == nil && (rank == 0 || (n > 0 && coords == 0)) {
		err = errorf(errArg, "coords or rank is NULL")
	}
	if err == nil {
		r, err = e.c.CartRank(cints(coords, n))
	}
	if err == nil {
		putInt(rank, r)
	}
	return raise(comm, "MPI_Cart_rank", err)
}

//export mpiabi_Cart_coords
func mpiabi_Cart_coords(comm uintptr, rank, maxdims int32, coords uintptr) C.int {
	e, err := lookupComm(comm)
	var cs []int
	if err == nil {
		cs, err = e.c.CartCoords(rankIn(rank))
	}
	if err == nil && int(maxdims) < len(cs) {
		err = errorf(errArg, "maxdims %d is less than the grid's %d dimensions", maxdims, len(cs))
	}
	if err == nil {
		err = arrays(len(cs), "coords", coords)
	}
	if err == nil {
		putInts(coords, cs)
	}
	return raise(comm, "MPI_Cart_coords", err)
}

//export mpiabi_Cart_shift
func mpiabi_Cart_shift(comm uintptr, dir, disp int32, src, dest uintptr) C.int {
	e, err := lookupComm(comm)
	var s, d int
	if err == nil && (src == 0 || dest == 0) {
		err = errorf(errArg, "rank_source or rank_dest is NULL")
	}
	if err == nil {
		s, d, err = e.c.CartShift(int(dir), int(disp))
	}
	if err == nil {
		putInt(src, int(rankOut(s)))
		putInt(dest, int(rankOut(d)))
	}
	return raise(comm, "MPI_Cart_shift", err)
}

//export mpiabi_Cart_sub
func mpiabi_Cart_sub(comm, remain, out uintptr) C.int {
	e, err := lookupComm(comm)
	var n int
	var nc *meshmpi.Comm
	if err == nil {
		n, err = e.c.CartdimGet()
	}
	if err == nil && (out == 0 || (n > 0 && remain == 0)) {
		err = errorf(errArg, "remain_dims or newcomm is NULL")
	}
	if err == nil {
		nc, err = e.c.CartSub(cbools(remain, n))
	}
	if err != nil {
		return raise(comm, "MPI_Cart_sub", err)
	}
	h, err := addComm(e, nc)
	if err == nil {
		putHandle(out, h)
	}
	return raise(comm, "MPI_Cart_sub", err)
}

//export mpiabi_Cart_map
func mpiabi_Cart_map(comm uintptr, ndims int32, dims, periods, newrank uintptr) C.int {
	e, err := lookupComm(comm)
	var r int
	if err == nil && (ndims < 0 || newrank == 0) {
		err = errorf(errArg, "ndims %d or newrank is invalid", ndims)
	}
	if err == nil {
		err = arrays(int(ndims), "dims or periods", dims, periods)
	}
	if err == nil {
		r, err = e.c.CartMap(cints(dims, int(ndims)), cbools(periods, int(ndims)))
	}
	if err == nil {
		if r == meshmpi.Undefined {
			r = undefined
		}
		putInt(newrank, r)
	}
	return raise(comm, "MPI_Cart_map", err)
}

//export mpiabi_Topo_test
func mpiabi_Topo_test(comm, status uintptr) C.int {
	e, err := lookupComm(comm)
	var t meshmpi.Topo
	if err == nil && status == 0 {
		err = errorf(errArg, "status is NULL")
	}
	if err == nil {
		t, err = e.c.TopoTest()
	}
	if err == nil {
		v := undefined
		switch t {
		case meshmpi.TopoCart:
			v = topoCart
		case meshmpi.TopoGraph:
			v = topoGraph
		case meshmpi.TopoDistGraph:
			v = topoDistGraph
		}
		putInt(status, v)
	}
	return raise(comm, "MPI_Topo_test", err)
}
