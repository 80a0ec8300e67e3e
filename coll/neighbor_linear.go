package coll

// Neighborhood collectives "linear": NeighborAllgather, NeighborAllgatherv,
// NeighborAlltoall and NeighborAlltoallv (MPI-4.1 §8.6).
//
// Source: MPICH ineighbor_*_allcomm_sched_linear.c and Open MPI
// coll/libnbc nbc_ineighbor_*.c: every receive and every send posted at
// once; the block matching of repeated neighbors after MPICH PR #5777 /
// #7945 and Open MPI PR #14416 (MPI-4.1 §8.6, Example 8.10; the MPI-4.0
// erratum from mpi-forum/mpi-issues#153).
//
// Buffer conventions, in elements of ElemSize bytes; i indexes Nbr.Sources
// (the receive blocks), j indexes Nbr.Dests (the send blocks):
//
//	NeighborAllgather   BufSend: Count, sent to every destination;  BufRecv: block i (Count) at i*Count
//	NeighborAllgatherv  BufSend: Count, sent to every destination;  BufRecv: Counts[i] at Displs[i]
//	NeighborAlltoall    BufSend: block j (Count) at j*Count;        BufRecv: block i (Count) at i*Count
//	NeighborAlltoallv   BufSend: SendCounts[j] at SendDispls[j];    BufRecv: Counts[i] at Displs[i]
//
// A negative neighbor (ProcNull at the edge of a non-periodic Cartesian
// dimension) has its block in the buffers but moves nothing: the receive
// block is left untouched. The collectives never run in place (MPI-4.1
// §8.6 gives them no MPI_IN_PLACE).
//
// Matching. All messages of one collective share its tag, and a receiver
// matches the messages of one sender first come, first served, so when a
// rank is a neighbor more than once the order of the messages between the
// pair decides which block lands where. The sends to one peer are chained
// by dependencies in send-block order, and the receives from one peer in
// the order below, so the k-th message A sends B is the k-th B receives
// from A:
//
//   - graph and distributed graph: the k-th edge A→B in A's destinations
//     is the k-th edge A→B in B's sources (MPI-4.1 §8.6: the order of the
//     topology queries), so receives are posted in list order;
//   - Cartesian: the blocks come in pairs per dimension, (negative,
//     positive), and what a rank sends in one direction arrives from the
//     opposite one: block s of the sender lands in block s^1 of the
//     receiver. That matters when a periodic dimension is 1 or 2 wide and
//     the same rank is the neighbor both ways; receives are then posted
//     with the two blocks of each pair swapped (MPICH's swap_recv_pairs).
//
// Messages to oneself (a periodic dimension 1 wide, a self-loop in a
// graph) are local copies, paired by the same rule. Messages of zero bytes
// are still sent, so a receiver that expects data where its neighbor sends
// none reports a mismatch instead of waiting forever.
//
// Schedule length: one round; in-degree + out-degree steps, each message
// split by a.Segment. Repeated neighbors add a dependency between their
// messages, so a rank that is a neighbor twice costs two message latencies.
//
// Memory: none.
//
// Restrictions: needs a.Nbr; not in place.
//
// Trace: 1-D periodic ring of 2 ranks (dims [2]); each rank's neighbor is
// the other both ways, Sources = Dests = [other, other]:
//
//	rank 0 sends  blk0 (−) then blk1 (+) to 1    rank 1 posts recv blk1 then blk0 from 0
//	rank 1 sends  blk0 (−) then blk1 (+) to 0    rank 0 posts recv blk1 then blk0 from 1
//	⇒ 0's blk0 → 1's blk1 (1 receives from its + side what 0 sent −), 0's blk1 → 1's blk0
//
// 3 ranks, dims [3] non-periodic: rank 0 has Sources = Dests = [ProcNull, 1]
// and moves one message each way; rank 1 exchanges with 0 and 2.

import (
	"errors"
	"fmt"
)

// Neighbors is one rank's neighborhood in a process topology: the ranks it
// receives from, in receive-block order, and the ranks it sends to, in
// send-block order. A negative rank has a block but moves nothing.
type Neighbors struct {
	Sources, Dests []int
	// Cart marks a Cartesian neighborhood: Sources and Dests are the same
	// 2·ndims ranks, (negative, positive) per dimension, and block s of a
	// sender lands in block s^1 of its receiver.
	Cart bool
}

// Neighborhood reports whether c is a neighborhood collective, which runs
// only on a communicator with a process topology (Args.Nbr).
func (c Coll) Neighborhood() bool { return c >= NeighborAllgather && c <= NeighborAlltoallv }

// RecvOrder returns the receive block posted k-th: the pairing rule of the
// header comment.
func (nb *Neighbors) RecvOrder(k int) int {
	if nb.Cart {
		return k ^ 1
	}
	return k
}

func init() {
	for _, k := range []Coll{NeighborAllgather, NeighborAllgatherv, NeighborAlltoall, NeighborAlltoallv} {
		Register(Algorithm{
			Coll:  k,
			Name:  "linear",
			Desc:  "every neighbor's send and receive posted at once; repeated neighbors matched in MPI's block order",
			Build: buildNeighborLinear,
		})
	}
}

// neighborBlocks returns the send block for destination j and the receive
// block for source i of a neighborhood call, checking its layout.
func neighborBlocks(a *Args) (send, recv func(int) Ref, err error) {
	nb := a.Nbr
	in, out := len(nb.Sources), len(nb.Dests)
	// empty blocks point at offset 0, so a displacement past the end of an
	// empty block's buffer cannot make the run slice out of range
	ref := func(buf Buf, off, n int) Ref {
		if n == 0 {
			return Ref{Buf: buf}
		}
		return Ref{buf, off, n}
	}
	cb := a.Bytes(a.Count)
	if a.Count < 0 {
		return nil, nil, fmt.Errorf("count %d", a.Count)
	}
	blocked := func(buf Buf) func(int) Ref { return func(k int) Ref { return ref(buf, k*cb, cb) } }
	v := func(what string, buf Buf, counts, displs []int, n int) (func(int) Ref, error) {
		if len(counts) != n || len(displs) != n {
			return nil, fmt.Errorf("%d %s counts and %d displacements for %d neighbors", len(counts), what, len(displs), n)
		}
		for k := range n {
			if counts[k] < 0 || displs[k] < 0 {
				return nil, fmt.Errorf("%s block %d: count %d, displacement %d", what, k, counts[k], displs[k])
			}
		}
		return func(k int) Ref { return ref(buf, a.Bytes(displs[k]), a.Bytes(counts[k])) }, nil
	}
	whole := func(int) Ref { return ref(BufSend, 0, cb) }
	switch a.Coll {
	case NeighborAllgather:
		return whole, blocked(BufRecv), nil
	case NeighborAllgatherv:
		recv, err = v("receive", BufRecv, a.Counts, a.Displs, in)
		return whole, recv, err
	case NeighborAlltoall:
		return blocked(BufSend), blocked(BufRecv), nil
	case NeighborAlltoallv:
		if send, err = v("send", BufSend, a.SendCounts, a.SendDispls, out); err != nil {
			return nil, nil, err
		}
		recv, err = v("receive", BufRecv, a.Counts, a.Displs, in)
		return send, recv, err
	}
	return nil, nil, fmt.Errorf("%s is not a neighborhood collective", a.Coll)
}

func buildNeighborLinear(b *Builder, a *Args) error {
	nb := a.Nbr
	switch {
	case nb == nil:
		return errors.New("no neighborhood: not a process topology")
	case a.InPlace:
		return errors.New("neighborhood collectives do not run in place")
	case nb.Cart && (len(nb.Sources) != len(nb.Dests) || len(nb.Sources)%2 != 0):
		return fmt.Errorf("a Cartesian neighborhood has %d sources and %d destinations", len(nb.Sources), len(nb.Dests))
	}
	for _, p := range append(nb.Sources[:len(nb.Sources):len(nb.Sources)], nb.Dests...) {
		if p >= a.Size {
			return fmt.Errorf("neighbor %d outside a group of %d", p, a.Size)
		}
	}
	send, recv, err := neighborBlocks(a)
	if err != nil {
		return err
	}
	sp := newMsgSplitter(b, a)
	// last[p] is the last step of the messages with peer p so far, for the
	// chains that keep repeated neighbors in order
	lastRecv, lastSend := map[int]StepID{}, map[int]StepID{}
	xfer := func(last map[int]StepID, p int, r Ref, emit func(int, Ref, ...StepID) StepID, one func(int, Ref, ...StepID) StepID) {
		var deps []StepID
		if prev, ok := last[p]; ok {
			deps = []StepID{prev}
		}
		if r.Len == 0 {
			last[p] = one(p, r, deps...)
			return
		}
		last[p] = emit(p, r, deps...)
	}
	var selfRecv []int
	for k := range nb.Sources {
		i := nb.RecvOrder(k)
		switch p := nb.Sources[i]; {
		case p < 0:
		case p == a.Rank:
			selfRecv = append(selfRecv, i)
		default:
			xfer(lastRecv, p, recv(i), sp.recv, b.Recv)
		}
	}
	selfSends := 0
	for j, p := range nb.Dests {
		switch {
		case p < 0:
		case p == a.Rank:
			if selfSends >= len(selfRecv) {
				return fmt.Errorf("rank %d lists itself as a destination more often than as a source", a.Rank)
			}
			b.Copy(send(j), recv(selfRecv[selfSends]))
			selfSends++
		default:
			xfer(lastSend, p, send(j), sp.send, b.Send)
		}
	}
	if selfSends != len(selfRecv) {
		return fmt.Errorf("rank %d lists itself as a source %d times and as a destination %d times", a.Rank, len(selfRecv), selfSends)
	}
	return nil
}
