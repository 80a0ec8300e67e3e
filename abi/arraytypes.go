package abi

/*
#include <stdint.h>
*/
import "C"

import (
	"github.com/meshmpi/meshmpi"
)

// MPI_Type_create_subarray and MPI_Type_create_darray, built over the Go
// constructors as MPI-4.1 §5.1.3 defines them: one Hvector or Hindexed
// per dimension, fastest first, each over the previous dimension's type
// resized to the row length, then the start displacement and a resize to
// the whole array's extent.

const (
	orderC         = 12
	orderFortran   = 15
	distribNone    = 16
	distribBlock   = 17
	distribCyclic  = 18
	distribDfltArg = 19
)

// level makes an unregistered entry of a Go type and its blocks.
func level(g *meshmpi.Datatype, err error, blocks []block) (*typeEntry, error) {
	if err != nil {
		return nil, err
	}
	return &typeEntry{g: g, flat: &flat{blocks: blocksOf(blocks)}}, nil
}

func resizedLevel(o *typeEntry, lb, extent int) (*typeEntry, error) {
	g, err := meshmpi.Resized(o.g, lb, extent)
	return level(g, err, []block{{0, o, 1}})
}

func hvectorLevel(n, stride int, o *typeEntry) (*typeEntry, error) {
	g, err := meshmpi.Hvector(n, 1, stride, o.g)
	blocks := make([]block, n)
	for i := range blocks {
		blocks[i] = block{i * stride, o, 1}
	}
	return level(g, err, blocks)
}

func hindexedLevel(ls, ds []int, o *typeEntry) (*typeEntry, error) {
	g, err := meshmpi.Hindexed(ls, ds, o.g)
	blocks := make([]block, len(ds))
	for i := range blocks {
		blocks[i] = block{ds[i], o, ls[i]}
	}
	return level(g, err, blocks)
}

// dim is one dimension of an array type, fastest first: the elements of
// the previous level this rank holds, as blocks of (first index, length).
type dim struct {
	size   int
	blocks [][2]int
}

// arrayType lays the dims out over old: the type of the whole array's
// extent whose data are the blocks of every dimension.
func arrayType(dims []dim, old *typeEntry) (*typeEntry, error) {
	t, stride := old, old.extent()
	for i, d := range dims {
		if i > 0 {
			var err error
			if t, err = resizedLevel(t, 0, stride); err != nil {
				return nil, err
			}
		}
		ls, ds := make([]int, len(d.blocks)), make([]int, len(d.blocks))
		for j, b := range d.blocks {
			ds[j], ls[j] = b[0]*stride, b[1]
		}
		var err error
		if t, err = hindexedLevel(ls, ds, t); err != nil {
			return nil, err
		}
		stride *= d.size
	}
	return resizedLevel(t, 0, stride)
}

func reversed(s []int) []int {
	r := make([]int, len(s))
	for i, v := range s {
		r[len(s)-1-i] = v
	}
	return r
}

func subarray(call string, nd int32, sizes, subsizes, starts uintptr, order int32, oldh, out uintptr, large bool) C.int {
	olds, err := oldTypes(oldh)
	if err != nil {
		return raise(self, call, err)
	}
	if nd <= 0 || sizes == 0 || subsizes == 0 || starts == 0 {
		return raise(self, call, errorf(errArg, "ndims %d must be positive and the arrays not NULL", nd))
	}
	rd := func(u uintptr) []int {
		if large {
			return cints64(u, int(nd))
		}
		return cints(u, int(nd))
	}
	sz, sub, st := rd(sizes), rd(subsizes), rd(starts)
	for i := range sz {
		if sz[i] <= 0 || sub[i] < 0 || sub[i] > sz[i] || st[i] < 0 || st[i]+sub[i] > sz[i] {
			return raise(self, call, errorf(errArg, "dimension %d: size %d, subsize %d, start %d do not fit", i, sz[i], sub[i], st[i]))
		}
	}
	if order != orderC && order != orderFortran {
		return raise(self, call, errorf(errArg, "order %d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN", order))
	}
	ints := append(append(append(append([]int{int(nd)}, sz...), sub...), st...), int(order))
	var counts []int
	if large {
		ints, counts = []int{int(nd), int(order)}, append(append(append([]int(nil), sz...), sub...), st...)
	}
	if order == orderC {
		sz, sub, st = reversed(sz), reversed(sub), reversed(st)
	}
	dims := make([]dim, nd)
	for i := range dims {
		dims[i] = dim{sz[i], [][2]int{{st[i], sub[i]}}}
	}
	t, err := arrayType(dims, olds[0])
	if err != nil {
		return raise(self, call, err)
	}
	return raise(self, call, register(t, combSubarray, ints, counts, olds, out))
}

// register gives an array type built in levels the contents of its
// constructor and a handle.
func register(t *typeEntry, comb int32, ints, counts []int, olds []*typeEntry, out uintptr) error {
	if out == 0 {
		return errorf(errArg, "newtype is NULL")
	}
	t.combiner, t.ints, t.counts, t.olds = comb, ints, counts, olds
	return addType(t, out)
}

//export mpiabi_Type_create_subarray
func mpiabi_Type_create_subarray(nd int32, sizes, subsizes, starts uintptr, order int32, old, out uintptr) C.int {
	return subarray("MPI_Type_create_subarray", nd, sizes, subsizes, starts, order, old, out, false)
}

//export mpiabi_Type_create_subarray_c
func mpiabi_Type_create_subarray_c(nd int32, sizes, subsizes, starts uintptr, order int32, old, out uintptr) C.int {
	return subarray("MPI_Type_create_subarray_c", nd, sizes, subsizes, starts, order, old, out, true)
}

func darray(call string, size, rank, nd int32, gsizes, distribs, dargs, psizes uintptr, order int32, oldh, out uintptr, large bool) C.int {
	olds, err := oldTypes(oldh)
	if err != nil {
		return raise(self, call, err)
	}
	if nd <= 0 || gsizes == 0 || distribs == 0 || dargs == 0 || psizes == 0 {
		return raise(self, call, errorf(errArg, "ndims %d must be positive and the arrays not NULL", nd))
	}
	if size <= 0 || rank < 0 || rank >= size {
		return raise(self, call, errorf(errArg, "rank %d of size %d", rank, size))
	}
	if order != orderC && order != orderFortran {
		return raise(self, call, errorf(errArg, "order %d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN", order))
	}
	gs := cints(gsizes, int(nd))
	if large {
		gs = cints64(gsizes, int(nd))
	}
	ds, as, ps := cints(distribs, int(nd)), cints(dargs, int(nd)), cints(psizes, int(nd))
	procs := 1
	for i := range ps {
		if ps[i] <= 0 || gs[i] <= 0 {
			return raise(self, call, errorf(errArg, "dimension %d: gsize %d, psize %d", i, gs[i], ps[i]))
		}
		procs *= ps[i]
	}
	if procs != int(size) {
		return raise(self, call, errorf(errArg, "the process grid holds %d processes, not size %d", procs, size))
	}
	coords := make([]int, nd) // the process grid is row-major whatever the order
	for i, r := nd-1, int(rank); i >= 0; i-- {
		coords[i], r = r%ps[i], r/ps[i]
	}
	ints := append(append(append(append(append([]int{int(size), int(rank), int(nd)}, gs...), ds...), as...), ps...), int(order))
	var counts []int
	if large {
		ints = append(append(append(append([]int{int(size), int(rank), int(nd)}, ds...), as...), ps...), int(order))
		counts = gs
	}
	if order == orderC {
		gs, ds, as, ps, coords = reversed(gs), reversed(ds), reversed(as), reversed(ps), reversed(coords)
	}
	dims := make([]dim, nd)
	for i := range dims {
		g, p, c, b := gs[i], ps[i], coords[i], as[i]
		d := dim{size: g}
		switch ds[i] {
		case distribNone:
			if p != 1 {
				return raise(self, call, errorf(errArg, "dimension %d is MPI_DISTRIBUTE_NONE over %d processes", i, p))
			}
			d.blocks = [][2]int{{0, g}}
		case distribBlock:
			if b == distribDfltArg {
				b = (g + p - 1) / p
			}
			if b <= 0 || b*p < g {
				return raise(self, call, errorf(errArg, "dimension %d: blocks of %d over %d processes do not cover %d", i, b, p, g))
			}
			start := c * b
			d.blocks = [][2]int{{min(start, g), max(0, min(b, g-start))}}
		case distribCyclic:
			if b == distribDfltArg {
				b = 1
			}
			if b <= 0 {
				return raise(self, call, errorf(errArg, "dimension %d: cyclic block %d", i, b))
			}
			for j := c * b; j < g; j += p * b {
				d.blocks = append(d.blocks, [2]int{j, min(b, g-j)})
			}
		default:
			return raise(self, call, errorf(errArg, "dimension %d: distribution %d", i, ds[i]))
		}
		dims[i] = d
	}
	t, err := arrayType(dims, olds[0])
	if err != nil {
		return raise(self, call, err)
	}
	return raise(self, call, register(t, combDarray, ints, counts, olds, out))
}

//export mpiabi_Type_create_darray
func mpiabi_Type_create_darray(size, rank, nd int32, gsizes, distribs, dargs, psizes uintptr, order int32, old, out uintptr) C.int {
	return darray("MPI_Type_create_darray", size, rank, nd, gsizes, distribs, dargs, psizes, order, old, out, false)
}

//export mpiabi_Type_create_darray_c
func mpiabi_Type_create_darray_c(size, rank, nd int32, gsizes, distribs, dargs, psizes uintptr, order int32, old, out uintptr) C.int {
	return darray("MPI_Type_create_darray_c", size, rank, nd, gsizes, distribs, dargs, psizes, order, old, out, true)
}
