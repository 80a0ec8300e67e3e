package abi

/*
#include <stdint.h>
*/
import "C"

import (
	"github.com/meshmpi/meshmpi"
)

// Graph and distributed graph topologies (MPI-4.1 §8.5.3, §8.5.4) over
// the Go API's (graph.go in the root package).

// The weight arguments' sentinels (include/mpi.h).
const (
	unweighted   = 10 // MPI_UNWEIGHTED
	weightsEmpty = 11 // MPI_WEIGHTS_EMPTY
)

// weightsIn maps a weights argument of n entries to the Go API's: nil
// for MPI_UNWEIGHTED, an empty slice for MPI_WEIGHTS_EMPTY or no edges
// (NULL too: a graph is unweighted only by MPI_UNWEIGHTED, as MPICH's
// topo/distgraph1 checks), and for NULL with edges, which the Go API
// then rejects as too short.
func weightsIn(u uintptr, n int) []int {
	switch {
	case u == unweighted:
		return nil
	case u == weightsEmpty || u == 0 || n <= 0:
		return []int{}
	}
	return cints(u, n)
}

// putTopoComm stores a topology's new communicator, MPI_COMM_NULL at the
// ranks that are not in it.
func putTopoComm(call string, comm uintptr, e *commEntry, n *meshmpi.Comm, out uintptr) C.int {
	if n == nil {
		putHandle(out, commNull)
		return errSuccess
	}
	h, err := addComm(e, n)
	if err == nil {
		putHandle(out, h)
	}
	return raise(comm, call, err)
}

// graphArgs reads MPI_Graph_create's and MPI_Graph_map's index and edges.
func graphArgs(nnodes int32, index, edges uintptr) ([]int, []int, error) {
	if nnodes < 0 || (nnodes > 0 && index == 0) {
		return nil, nil, errorf(errArg, "nnodes %d or index is invalid", nnodes)
	}
	idx := cints(index, int(nnodes))
	nedges := 0
	if nnodes > 0 {
		nedges = idx[nnodes-1]
	}
	if nedges < 0 || (nedges > 0 && edges == 0) {
		return nil, nil, errorf(errArg, "%d edges or edges is invalid", nedges)
	}
	e := cints(edges, nedges)
	if e == nil {
		e = []int{}
	}
	if idx == nil {
		idx = []int{}
	}
	return idx, e, nil
}

//export mpiabi_Graph_create
func mpiabi_Graph_create(comm uintptr, nnodes int32, index, edges uintptr, reorder int32, out uintptr) C.int {
	const call = "MPI_Graph_create"
	e, err := lookupComm(comm)
	if err == nil && out == 0 {
		err = errorf(errArg, "comm_graph is NULL")
	}
	var idx, ed []int
	if err == nil {
		idx, ed, err = graphArgs(nnodes, index, edges)
	}
	var n *meshmpi.Comm
	if err == nil {
		n, err = e.c.GraphCreate(idx, ed, reorder != 0)
	}
	if err != nil {
		return raise(comm, call, err)
	}
	return putTopoComm(call, comm, e, n, out)
}

//export mpiabi_Graphdims_get
func mpiabi_Graphdims_get(comm, nnodes, nedges uintptr) C.int {
	e, err := lookupComm(comm)
	if err == nil && (nnodes == 0 || nedges == 0) {
		err = errorf(errArg, "nnodes or nedges is NULL")
	}
	var nn, ne int
	if err == nil {
		nn, ne, err = e.c.GraphdimsGet()
	}
	if err == nil {
		putInt(nnodes, nn)
		putInt(nedges, ne)
	}
	return raise(comm, "MPI_Graphdims_get", err)
}

//export mpiabi_Graph_get
func mpiabi_Graph_get(comm uintptr, maxindex, maxedges int32, index, edges uintptr) C.int {
	e, err := lookupComm(comm)
	if err == nil && (maxindex < 0 || maxedges < 0) {
		err = errorf(errArg, "maxindex %d or maxedges %d is negative", maxindex, maxedges)
	}
	var idx, ed []int
	if err == nil {
		idx, ed, err = e.c.GraphGet()
	}
	if err == nil {
		err = arrays(min(len(idx), int(maxindex)), "index", index)
	}
	if err == nil {
		err = arrays(min(len(ed), int(maxedges)), "edges", edges)
	}
	if err == nil {
		putInts(index, idx[:min(len(idx), int(maxindex))])
		putInts(edges, ed[:min(len(ed), int(maxedges))])
	}
	return raise(comm, "MPI_Graph_get", err)
}

//export mpiabi_Graph_neighbors_count
func mpiabi_Graph_neighbors_count(comm uintptr, rank int32, nneighbors uintptr) C.int {
	e, err := lookupComm(comm)
	if err == nil && nneighbors == 0 {
		err = errorf(errArg, "nneighbors is NULL")
	}
	var n int
	if err == nil {
		n, err = e.c.GraphNeighborsCount(int(rank))
	}
	if err == nil {
		putInt(nneighbors, n)
	}
	return raise(comm, "MPI_Graph_neighbors_count", err)
}

//export mpiabi_Graph_neighbors
func mpiabi_Graph_neighbors(comm uintptr, rank, maxneighbors int32, neighbors uintptr) C.int {
	e, err := lookupComm(comm)
	if err == nil && maxneighbors < 0 {
		err = errorf(errArg, "maxneighbors %d is negative", maxneighbors)
	}
	var ns []int
	if err == nil {
		ns, err = e.c.GraphNeighbors(int(rank))
	}
	if err == nil {
		putInts(neighbors, ns[:min(len(ns), int(maxneighbors))])
	}
	return raise(comm, "MPI_Graph_neighbors", err)
}

//export mpiabi_Graph_map
func mpiabi_Graph_map(comm uintptr, nnodes int32, index, edges, newrank uintptr) C.int {
	e, err := lookupComm(comm)
	if err == nil && newrank == 0 {
		err = errorf(errArg, "newrank is NULL")
	}
	var idx, ed []int
	if err == nil {
		idx, ed, err = graphArgs(nnodes, index, edges)
	}
	var r int
	if err == nil {
		r, err = e.c.GraphMap(idx, ed)
	}
	if err == nil {
		if r == meshmpi.Undefined {
			r = undefined
		}
		putInt(newrank, r)
	}
	return raise(comm, "MPI_Graph_map", err)
}

//export mpiabi_Dist_graph_create_adjacent
func mpiabi_Dist_graph_create_adjacent(comm uintptr, indegree int32, sources, sourceweights uintptr, outdegree int32, destinations, destweights, info uintptr, reorder int32, out uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Dist_graph_create_adjacent", err)
	}
	const call = "MPI_Dist_graph_create_adjacent"
	e, err := lookupComm(comm)
	switch {
	case err != nil:
	case out == 0:
		err = errorf(errArg, "comm_dist_graph is NULL")
	case indegree < 0 || outdegree < 0:
		err = errorf(errArg, "indegree %d or outdegree %d is negative", indegree, outdegree)
	case (indegree > 0 && sources == 0) || (outdegree > 0 && destinations == 0):
		err = errorf(errArg, "sources or destinations is NULL")
	}
	var n *meshmpi.Comm
	if err == nil {
		n, err = e.c.DistGraphCreateAdjacent(
			orEmpty(cints(sources, int(indegree))), weightsIn(sourceweights, int(indegree)),
			orEmpty(cints(destinations, int(outdegree))), weightsIn(destweights, int(outdegree)), reorder != 0)
	}
	if err != nil {
		return raise(comm, call, err)
	}
	return putTopoComm(call, comm, e, n, out)
}

//export mpiabi_Dist_graph_create
func mpiabi_Dist_graph_create(comm uintptr, nsrc int32, sources, degrees, destinations, weights, info uintptr, reorder int32, out uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Dist_graph_create", err)
	}
	const call = "MPI_Dist_graph_create"
	e, err := lookupComm(comm)
	switch {
	case err != nil:
	case out == 0:
		err = errorf(errArg, "comm_dist_graph is NULL")
	case nsrc < 0 || (nsrc > 0 && (sources == 0 || degrees == 0)):
		err = errorf(errArg, "n %d, sources or degrees is invalid", nsrc)
	}
	var src, deg []int
	nedges := 0
	if err == nil {
		src, deg = orEmpty(cints(sources, int(nsrc))), orEmpty(cints(degrees, int(nsrc)))
		for _, d := range deg {
			if d < 0 {
				err = errorf(errArg, "degree %d is negative", d)
				break
			}
			nedges += d
		}
	}
	if err == nil && nedges > 0 && destinations == 0 {
		err = errorf(errArg, "destinations is NULL")
	}
	var n *meshmpi.Comm
	if err == nil {
		n, err = e.c.DistGraphCreate(src, deg, orEmpty(cints(destinations, nedges)), weightsIn(weights, nedges), reorder != 0)
	}
	if err != nil {
		return raise(comm, call, err)
	}
	return putTopoComm(call, comm, e, n, out)
}

func orEmpty(s []int) []int {
	if s == nil {
		return []int{}
	}
	return s
}

//export mpiabi_Dist_graph_neighbors_count
func mpiabi_Dist_graph_neighbors_count(comm, indegree, outdegree, weighted uintptr) C.int {
	e, err := lookupComm(comm)
	if err == nil && (indegree == 0 || outdegree == 0 || weighted == 0) {
		err = errorf(errArg, "indegree, outdegree or weighted is NULL")
	}
	var in, outd int
	var w bool
	if err == nil {
		in, outd, w, err = e.c.DistGraphNeighborsCount()
	}
	if err == nil {
		putInt(indegree, in)
		putInt(outdegree, outd)
		putInt(weighted, b2i(w))
	}
	return raise(comm, "MPI_Dist_graph_neighbors_count", err)
}

//export mpiabi_Dist_graph_neighbors
func mpiabi_Dist_graph_neighbors(comm uintptr, maxin int32, sources, sourceweights uintptr, maxout int32, destinations, destweights uintptr) C.int {
	e, err := lookupComm(comm)
	if err == nil && (maxin < 0 || maxout < 0) {
		err = errorf(errArg, "maxindegree %d or maxoutdegree %d is negative", maxin, maxout)
	}
	var src, sw, dst, dw []int
	if err == nil {
		src, sw, dst, dw, err = e.c.DistGraphNeighbors()
	}
	if err == nil {
		putInts(sources, src[:min(len(src), int(maxin))])
		putInts(destinations, dst[:min(len(dst), int(maxout))])
		// the weights are written only where the program gave an array
		if sourceweights != unweighted && sourceweights != weightsEmpty && sw != nil {
			putInts(sourceweights, sw[:min(len(sw), int(maxin))])
		}
		if destweights != unweighted && destweights != weightsEmpty && dw != nil {
			putInts(destweights, dw[:min(len(dw), int(maxout))])
		}
	}
	return raise(comm, "MPI_Dist_graph_neighbors", err)
}
