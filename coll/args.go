package coll

import (
	"fmt"

	"github.com/meshmpi/meshmpi/op"
)

// Coll identifies a collective operation.
type Coll uint8

// The intracommunicator collectives.
const (
	Barrier Coll = iota
	Bcast
	Gather
	Gatherv
	Scatter
	Scatterv
	Allgather
	Allgatherv
	Alltoall
	Alltoallv
	Reduce
	Allreduce
	ReduceScatter
	ReduceScatterBlock
	Scan
	Exscan
	// the neighborhood collectives (MPI-4.1 §8.6): Args.Nbr names the peers
	NeighborAllgather
	NeighborAllgatherv
	NeighborAlltoall
	NeighborAlltoallv
	NumColls
)

var collNames = [NumColls]string{
	"barrier", "bcast", "gather", "gatherv", "scatter", "scatterv", "allgather", "allgatherv",
	"alltoall", "alltoallv", "reduce", "allreduce", "reduce_scatter", "reduce_scatter_block", "scan", "exscan",
	"neighbor_allgather", "neighbor_allgatherv", "neighbor_alltoall", "neighbor_alltoallv",
}

func (c Coll) String() string {
	if c < NumColls {
		return collNames[c]
	}
	return fmt.Sprintf("Coll(%d)", uint8(c))
}

// Args describes one rank's call of a collective. Every field but Rank
// (and, where MPI lets them differ, the buffers' roles at non-roots) is
// the same on every rank.
//
// Buffer conventions, in elements of ElemSize bytes; the plan refers to the
// caller's buffers as BufSend and BufRecv:
//
//	Barrier             no buffers
//	Bcast               BufRecv: Count elements, the root's are the source
//	Gather              BufSend: Count; BufRecv (root): Size*Count, rank r's block at r*Count
//	Gatherv             BufSend: Counts[Rank]; BufRecv (root): rank r's Counts[r] at Displs[r]
//	Scatter             BufSend (root): Size*Count; BufRecv: Count
//	Scatterv            BufSend (root): Counts[r] at Displs[r]; BufRecv: Counts[Rank]
//	Allgather           BufSend: Count; BufRecv: Size*Count
//	Allgatherv          BufSend: Counts[Rank]; BufRecv: Counts[r] at Displs[r]
//	Alltoall            BufSend: Size*Count, block r for rank r; BufRecv: Size*Count, block r from rank r
//	Alltoallv           BufSend: SendCounts[r] at SendDispls[r]; BufRecv: Counts[r] at Displs[r]
//	Reduce              BufSend: Count; BufRecv (root): Count
//	Allreduce           BufSend: Count; BufRecv: Count
//	ReduceScatterBlock  BufSend: Size*Count; BufRecv: Count
//	ReduceScatter       BufSend: sum(Counts), block r at the prefix sum; BufRecv: Counts[Rank]
//	Scan, Exscan        BufSend: Count; BufRecv: Count (Exscan leaves rank 0's untouched)
//
// InPlace (MPI_IN_PLACE) means the send data is already where the result
// goes: in BufRecv, at the rank's own block for Gather(v) at the root and
// Allgather(v), and the whole buffer for the reductions, Alltoall(v) and
// Scan/Exscan. For Scatter(v) the root's own block stays in BufSend and its
// BufRecv is not touched. For ReduceScatter(Block) BufRecv holds the whole
// input and the result lands at its start. BufSend is empty in place.
type Args struct {
	Coll       Coll
	Rank, Size int
	Root       int
	Count      int
	Counts     []int // v-collectives and ReduceScatter: per-rank element counts
	Displs     []int // v-collectives: per-rank displacements in elements
	SendCounts []int // Alltoallv
	SendDispls []int // Alltoallv
	ElemSize   int
	Type       op.Type
	Op         *op.Op
	InPlace    bool
	// Segment bounds the bytes of one message in algorithms that pipeline
	// or segment (0: no bound). Tests set it small to force many segments.
	Segment int
	// Nbr is the rank's neighborhood for the neighborhood collectives
	// (conventions in neighbor_linear.go); nil for every other collective.
	Nbr *Neighbors
	// RemoteSize and RemoteCount describe an intercommunicator call (0 on
	// an intracommunicator): the remote group's size and the elements
	// received from each remote rank where MPI lets them differ from Count
	// (conventions in inter_args.go).
	RemoteSize, RemoteCount int
	// Oversubscribed says the group's ranks share fewer cores than they
	// are (goroutines of one process over memory links): the processors,
	// not latency, bound a collective, so selection prefers algorithms
	// with fewer messages. Every rank of such a world sees the same value.
	Oversubscribed bool
}

// Bytes returns the size of n elements.
func (a *Args) Bytes(n int) int { return n * a.ElemSize }

// Commutative reports whether the reduction op is commutative (true when
// the collective has no op).
func (a *Args) Commutative() bool { return a.Op == nil || a.Op.Commutative() }

// Rooted reports whether the collective has a root.
func (c Coll) Rooted() bool {
	switch c {
	case Bcast, Gather, Gatherv, Scatter, Scatterv, Reduce:
		return true
	}
	return false
}

// Reduces reports whether the collective applies an op.
func (c Coll) Reduces() bool {
	switch c {
	case Reduce, Allreduce, ReduceScatter, ReduceScatterBlock, Scan, Exscan:
		return true
	}
	return false
}

// TotalBytes is the rank-invariant message size selection looks at: the
// bytes of Count elements, or of all the counts of a v-collective, or of the
// whole input of ReduceScatterBlock.
func (a *Args) TotalBytes() int {
	switch a.Coll {
	case Gatherv, Scatterv, Allgatherv, Alltoallv, ReduceScatter:
		n := 0
		for _, c := range a.Counts {
			n += c
		}
		return a.Bytes(n)
	case ReduceScatterBlock:
		return a.Bytes(a.Count * a.Size)
	}
	return a.Bytes(a.Count)
}
