package meshmpi

// NeighborAlltoallw (MPI-4.1 §8.6.2): the neighborhood all-to-all with a
// count, byte displacement and datatype per neighbor. Each side is
// resolved into byte blocks as Alltoallw's are (typedSide, alltoallw.go):
// contiguous blocks travel straight from and into the caller's buffers,
// others are packed at start and unpacked at completion, and the engine
// runs NeighborAlltoallv's schedule over bytes. The blocks of ProcNull
// neighbors are resolved as empty, so they are neither packed nor
// unpacked: their part of the receive buffer stays untouched.

import (
	"fmt"
	"slices"

	"github.com/meshmpi/meshmpi/coll"
	"github.com/meshmpi/meshmpi/op"
)

// NeighborAlltoallw sends sendcounts[j] elements of sendtypes[j] at byte
// displacement senddispls[j] of send to out-neighbor j, and receives
// in-neighbor i's data as recvcounts[i] elements of recvtypes[i] at byte
// displacement recvdispls[i] of recv (MPI_Neighbor_alltoallw). Type
// signatures of each pair must match, as in MPI.
func NeighborAlltoallw(c *Comm, send []byte, sendcounts, senddispls []int, sendtypes []*Datatype,
	recv []byte, recvcounts, recvdispls []int, recvtypes []*Datatype, hs ...Hint) error {
	_, err := neighborAlltoallw(c, blocking, send, sendcounts, senddispls, sendtypes, recv, recvcounts, recvdispls, recvtypes, hs)
	return err
}

// IneighborAlltoallw starts NeighborAlltoallw and returns its request
// (MPI_Ineighbor_alltoallw).
func IneighborAlltoallw(c *Comm, send []byte, sendcounts, senddispls []int, sendtypes []*Datatype,
	recv []byte, recvcounts, recvdispls []int, recvtypes []*Datatype, hs ...Hint) (*Request, error) {
	return neighborAlltoallw(c, nonblocking, send, sendcounts, senddispls, sendtypes, recv, recvcounts, recvdispls, recvtypes, hs)
}

// NeighborAlltoallwInit creates a persistent NeighborAlltoallw, planned
// once, run by each Start (MPI_Neighbor_alltoallw_init). Non-contiguous
// sides keep their packed buffers for the request's life.
func NeighborAlltoallwInit(c *Comm, send []byte, sendcounts, senddispls []int, sendtypes []*Datatype,
	recv []byte, recvcounts, recvdispls []int, recvtypes []*Datatype, hs ...Hint) (*Request, error) {
	return neighborAlltoallw(c, persistent, send, sendcounts, senddispls, sendtypes, recv, recvcounts, recvdispls, recvtypes, hs)
}

// prepareNeighbor is prepare for NeighborAlltoallw: the sides have one
// block per neighbor, and ProcNull neighbors' blocks are empty.
func (w *alltoallwRequest) prepareNeighbor(c *Comm, send []byte, sendcounts, senddispls []int, sendtypes []*Datatype,
	recv []byte, recvcounts, recvdispls []int, recvtypes []*Datatype) collCall {
	const k = coll.NeighborAlltoallv
	fail := func(err error) collCall { return collCall{err: fmt.Errorf("neighbor_alltoallw on %s: %w", c, err)} }
	if err := c.check(); err != nil {
		return fail(err)
	}
	if c.topo == nil {
		return fail(fmt.Errorf("not a process topology: %w", ErrTopology))
	}
	if c.topo.nbrErr != nil {
		return fail(c.topo.nbrErr)
	}
	if isInPlace(send) || isInPlace(recv) {
		return fail(fmt.Errorf("neighborhood collectives do not run in place: %w", ErrBuffer))
	}
	nb := &c.topo.nbr
	if err := w.recv.resolve("receive", recv, procNullEmpty(recvcounts, nb.Sources), recvdispls, recvtypes, len(nb.Sources)); err != nil {
		return fail(err)
	}
	if err := w.send.resolve("send", send, procNullEmpty(sendcounts, nb.Dests), senddispls, sendtypes, len(nb.Dests)); err != nil {
		return fail(err)
	}
	if w.aliased() {
		return fail(fmt.Errorf("send and receive buffers overlap: %w", ErrBuffer))
	}
	a := coll.Args{Coll: k, ElemSize: 1, Type: op.Uint8, Nbr: nb,
		Counts: w.recv.lens, Displs: w.recv.offs, SendCounts: w.send.lens, SendDispls: w.send.offs}
	return collCall{a: a, send: w.send.engineBuf(), recv: w.recv.engineBuf()}
}

// procNullEmpty returns counts with the blocks of ProcNull neighbors
// emptied (a copy; counts itself if there are none or its length is wrong,
// which resolve reports).
func procNullEmpty(counts, nbrs []int) []int {
	if len(counts) != len(nbrs) || !slices.ContainsFunc(nbrs, func(p int) bool { return p < 0 }) {
		return counts
	}
	out := slices.Clone(counts)
	for i, p := range nbrs {
		if p < 0 {
			out[i] = 0
		}
	}
	return out
}

// neighborAlltoallw runs a prepared NeighborAlltoallw in the given form,
// as alltoallw (alltoallw.go) runs Alltoallw: stage, run, unpack.
func neighborAlltoallw(c *Comm, form collForm, send []byte, sendcounts, senddispls []int, sendtypes []*Datatype,
	recv []byte, recvcounts, recvdispls []int, recvtypes []*Datatype, hs []Hint) (*Request, error) {
	w := &alltoallwRequest{}
	call := w.prepareNeighbor(c, send, sendcounts, senddispls, sendtypes, recv, recvcounts, recvdispls, recvtypes)
	return w.run(c, form, call, hs)
}

// run runs a call prepared by one of the alltoallwRequest's prepare
// methods: packs (except persistent, which packs at each Start), runs,
// and unpacks or hands the request over.
func (w *alltoallwRequest) run(c *Comm, form collForm, call collCall, hs []Hint) (*Request, error) {
	if call.err == nil && form != persistent {
		w.stage()
	}
	r, err := do(c, form, call, hs)
	if err != nil {
		w.put()
		return nil, err
	}
	if form == blocking {
		w.recv.unpack()
		w.put()
		return nil, nil
	}
	w.coll = &r.coll
	r.impl = w
	return r, nil
}
