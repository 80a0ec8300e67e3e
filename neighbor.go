package meshmpi

// The neighborhood collectives (MPI-4.1 §8.6, §8.7, §8.8) on a
// communicator with a process topology, in blocking, nonblocking (I…) and
// persistent (…Init) form, run by the engine's "linear" schedules
// (coll/neighbor_linear.go).
//
// A rank's neighbors are, in block order: for a Cartesian grid, the two
// neighbors of every dimension, negative direction then positive (CartShift
// by 1), ProcNull off a non-periodic edge; for a graph, GraphNeighbors of
// the rank, both ways; for a distributed graph, DistGraphNeighbors'
// sources (receive blocks) and destinations (send blocks). A ProcNull
// neighbor's block is neither sent nor written. When a rank is a neighbor
// more than once (a periodic dimension 1 or 2 wide, repeated edges), the
// blocks pair as MPI-4.1 says: on a grid the block sent in one direction
// arrives in the block of the opposite direction; on graphs the k-th edge
// from A to B pairs with the k-th. None of them runs in place.

import (
	"fmt"

	"github.com/meshmpi/meshmpi/coll"
	"github.com/meshmpi/meshmpi/op"
)

// NeighborAllgather sends send to every out-neighbor of c's topology and
// receives each in-neighbor's into block i of recv (len(send) elements
// each) (MPI_Neighbor_allgather).
func NeighborAllgather[T Element](c *Comm, send, recv []T, hs ...Hint) error {
	_, err := do(c, blocking, prepNeighbor(c, coll.NeighborAllgather, send, nil, nil, recv, nil, nil), hs)
	return err
}

// IneighborAllgather starts NeighborAllgather and returns its request (MPI_Ineighbor_allgather).
func IneighborAllgather[T Element](c *Comm, send, recv []T, hs ...Hint) (*Request, error) {
	return do(c, nonblocking, prepNeighbor(c, coll.NeighborAllgather, send, nil, nil, recv, nil, nil), hs)
}

// NeighborAllgatherInit creates a persistent NeighborAllgather, planned once, run by each Start (MPI_Neighbor_allgather_init).
func NeighborAllgatherInit[T Element](c *Comm, send, recv []T, hs ...Hint) (*Request, error) {
	return do(c, persistent, prepNeighbor(c, coll.NeighborAllgather, send, nil, nil, recv, nil, nil), hs)
}

// NeighborAllgatherv sends send to every out-neighbor and receives
// in-neighbor i's into recv[displs[i]:] (counts[i] elements)
// (MPI_Neighbor_allgatherv).
func NeighborAllgatherv[T Element](c *Comm, send, recv []T, counts, displs []int, hs ...Hint) error {
	_, err := do(c, blocking, prepNeighbor(c, coll.NeighborAllgatherv, send, nil, nil, recv, counts, displs), hs)
	return err
}

// IneighborAllgatherv starts NeighborAllgatherv and returns its request (MPI_Ineighbor_allgatherv).
func IneighborAllgatherv[T Element](c *Comm, send, recv []T, counts, displs []int, hs ...Hint) (*Request, error) {
	return do(c, nonblocking, prepNeighbor(c, coll.NeighborAllgatherv, send, nil, nil, recv, counts, displs), hs)
}

// NeighborAllgathervInit creates a persistent NeighborAllgatherv, planned once, run by each Start (MPI_Neighbor_allgatherv_init).
func NeighborAllgathervInit[T Element](c *Comm, send, recv []T, counts, displs []int, hs ...Hint) (*Request, error) {
	return do(c, persistent, prepNeighbor(c, coll.NeighborAllgatherv, send, nil, nil, recv, counts, displs), hs)
}

// NeighborAlltoall sends block j of send to out-neighbor j and receives
// in-neighbor i's block into block i of recv (MPI_Neighbor_alltoall).
// Blocks are len(send)/outdegree elements (len(recv)/indegree on a rank
// without out-neighbors); the same count both ways.
func NeighborAlltoall[T Element](c *Comm, send, recv []T, hs ...Hint) error {
	_, err := do(c, blocking, prepNeighbor(c, coll.NeighborAlltoall, send, nil, nil, recv, nil, nil), hs)
	return err
}

// IneighborAlltoall starts NeighborAlltoall and returns its request (MPI_Ineighbor_alltoall).
func IneighborAlltoall[T Element](c *Comm, send, recv []T, hs ...Hint) (*Request, error) {
	return do(c, nonblocking, prepNeighbor(c, coll.NeighborAlltoall, send, nil, nil, recv, nil, nil), hs)
}

// NeighborAlltoallInit creates a persistent NeighborAlltoall, planned once, run by each Start (MPI_Neighbor_alltoall_init).
func NeighborAlltoallInit[T Element](c *Comm, send, recv []T, hs ...Hint) (*Request, error) {
	return do(c, persistent, prepNeighbor(c, coll.NeighborAlltoall, send, nil, nil, recv, nil, nil), hs)
}

// NeighborAlltoallv sends send[senddispls[j]:] (sendcounts[j] elements) to
// out-neighbor j and receives in-neighbor i's into recv[recvdispls[i]:]
// (recvcounts[i]) (MPI_Neighbor_alltoallv).
func NeighborAlltoallv[T Element](c *Comm, send []T, sendcounts, senddispls []int, recv []T, recvcounts, recvdispls []int, hs ...Hint) error {
	_, err := do(c, blocking, prepNeighbor(c, coll.NeighborAlltoallv, send, sendcounts, senddispls, recv, recvcounts, recvdispls), hs)
	return err
}

// IneighborAlltoallv starts NeighborAlltoallv and returns its request (MPI_Ineighbor_alltoallv).
func IneighborAlltoallv[T Element](c *Comm, send []T, sendcounts, senddispls []int, recv []T, recvcounts, recvdispls []int, hs ...Hint) (*Request, error) {
	return do(c, nonblocking, prepNeighbor(c, coll.NeighborAlltoallv, send, sendcounts, senddispls, recv, recvcounts, recvdispls), hs)
}

// NeighborAlltoallvInit creates a persistent NeighborAlltoallv, planned once, run by each Start (MPI_Neighbor_alltoallv_init).
func NeighborAlltoallvInit[T Element](c *Comm, send []T, sendcounts, senddispls []int, recv []T, recvcounts, recvdispls []int, hs ...Hint) (*Request, error) {
	return do(c, persistent, prepNeighbor(c, coll.NeighborAlltoallv, send, sendcounts, senddispls, recv, recvcounts, recvdispls), hs)
}

// prepNeighbor checks a neighborhood call and translates it to the
// engine's conventions: the topology's neighborhood, the block count, and
// the counts and displacements, whose lengths are the degrees. Buffer
// extents are checked against the plan (ErrCount).
func prepNeighbor[T Element](c *Comm, k coll.Coll, send []T, sendcounts, senddispls []int, recv []T, recvcounts, recvdispls []int) collCall {
	a := elemArgs[T](k)
	if c == nil || c.topo == nil {
		return failed(k, c, fmt.Errorf("not a process topology: %w", ErrTopology))
	}
	if c.topo.nbrErr != nil {
		return failed(k, c, c.topo.nbrErr)
	}
	sb, rb := viewBytes(send), op.Bytes(recv)
	if isInPlace(sb) || isInPlace(viewBytes(recv)) {
		return failed(k, c, fmt.Errorf("neighborhood collectives do not run in place: %w", ErrBuffer))
	}
	nb := &c.topo.nbr
	in, out := len(nb.Sources), len(nb.Dests)
	layout := func(what string, counts, displs []int, n int) error {
		if len(counts) != n || len(displs) != n {
			return fmt.Errorf("%d %s counts and %d displacements for %d neighbors: %w", len(counts), what, len(displs), n, ErrCount)
		}
		for i := range n {
			if counts[i] < 0 || displs[i] < 0 {
				return fmt.Errorf("%s block %d: count %d, displacement %d: %w", what, i, counts[i], displs[i], ErrCount)
			}
		}
		return nil
	}
	var err error
	switch k {
	case coll.NeighborAllgather:
		a.Count = len(send)
		if len(recv) < in*a.Count {
			err = fmt.Errorf("%d receive elements for %d neighbors of %d: %w", len(recv), in, a.Count, ErrCount)
		}
	case coll.NeighborAllgatherv:
		a.Count = len(send)
		err = layout("receive", recvcounts, recvdispls, in)
	case coll.NeighborAlltoall:
		if out > 0 {
			a.Count, err = countOf(k, "send buffer", len(send), out)
		} else if in > 0 {
			a.Count, err = countOf(k, "receive buffer", len(recv), in)
		}
		if err == nil && len(recv) < in*a.Count {
			err = fmt.Errorf("%d receive elements for %d neighbors of %d: %w", len(recv), in, a.Count, ErrCount)
		}
	case coll.NeighborAlltoallv:
		err = firstErr(layout("send", sendcounts, senddispls, out), layout("receive", recvcounts, recvdispls, in))
	}
	if err != nil {
		return failed(k, c, err)
	}
	a.Counts, a.Displs, a.SendCounts, a.SendDispls, a.Nbr = recvcounts, recvdispls, sendcounts, senddispls, nb
	return collCall{a: a, send: sb, recv: rb}
}
