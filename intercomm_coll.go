package meshmpi

import (
	"fmt"

	"github.com/meshmpi/meshmpi/coll"
	"github.com/meshmpi/meshmpi/op"
	"github.com/meshmpi/meshmpi/peer"
)

// Intercommunicator collectives (MPI-4.1 §6.2.2): the same public calls as
// on an intracommunicator; each prepare function of collprep.go hands an
// intercommunicator to its inter counterpart here, which checks the
// arguments by MPI's intercommunicator rules and fills coll.Args by the
// conventions of coll/inter_args.go. Rooted collectives go one way (Root,
// ProcNull, or the root's rank in the remote group); the others go both
// ways. Nothing runs in place, and Scan and Exscan do not exist here.

// errInterInPlace is the error of InPlace on an intercommunicator.
var errInterInPlace = fmt.Errorf("InPlace is not allowed on an intercommunicator: %w", ErrArg)

// engineTransport returns what c's collectives run over: for an
// intercommunicator, peers from Size on are the remote group's ranks.
func (c *Comm) engineTransport() coll.Transport {
	if c.inter != nil {
		return (*interTransport)(c)
	}
	return (*collTransport)(c)
}

// interTransport is an intercommunicator seen by the collective engine:
// peer p < Size is local rank p, peer Size+r remote rank r.
type interTransport Comm

func (t *interTransport) Rank() int { return t.rank }
func (t *interTransport) Size() int { return len(t.ranks) }

func (t *interTransport) world(peer int) int {
	if peer < len(t.ranks) {
		return t.ranks[peer]
	}
	return t.inter.ranks[peer-len(t.ranks)]
}

func (t *interTransport) Send(rank int, tag uint32, p []byte, c coll.Completer, id int32) error {
	cm := (*Comm)(t)
	return cm.p.ep.SendNotify(peer.Standard, t.world(rank), cm.collContext(), int32(tag), p, c, id)
}

func (t *interTransport) Recv(rank int, tag uint32, p []byte, c coll.Completer, id int32) error {
	cm := (*Comm)(t)
	return cm.p.ep.RecvNotify(t.world(rank), cm.collContext(), int32(tag), collSeqMask, p, c, id)
}

// Abandon does what it does on an intracommunicator, whose notices reach
// the remote group too.
func (t *interTransport) Abandon(tag uint32, err error) { (*collTransport)(t).Abandon(tag, err) }

// interRoot translates a rooted call's root to the engine's convention.
func (c *Comm) interRoot(k coll.Coll, root int) (int, error) {
	switch {
	case root == Root:
		return coll.InterRootSelf, nil
	case root == ProcNull:
		return coll.InterRootNone, nil
	case root >= 0 && root < len(c.inter.ranks):
		return root, nil
	}
	return 0, fmt.Errorf("%s on %s: root %d (want Root, ProcNull or a rank of the remote group of %d): %w", k, c, root, len(c.inter.ranks), ErrRoot)
}

// interArgs starts an inter call's arguments, rejecting InPlace in any of
// bufs.
func interArgs[T Element](c *Comm, k coll.Coll, bufs ...[]byte) (coll.Args, error) {
	a := elemArgs[T](k)
	for _, b := range bufs {
		if isInPlace(b) {
			return a, fmt.Errorf("%s on %s: %w", k, c, errInterInPlace)
		}
	}
	return a, nil
}

// interCounts checks the per-remote-rank counts and displacements of a
// v-collective.
func (c *Comm) interCounts(what string, counts, displs []int, n int) error {
	if len(counts) != n || displs != nil && len(displs) != n {
		return fmt.Errorf("%d %s counts and %d displacements for %d ranks: %w", len(counts), what, len(displs), n, ErrCount)
	}
	for r := range n {
		if counts[r] < 0 || displs != nil && displs[r] < 0 {
			return fmt.Errorf("%s of rank %d: count %d: %w", what, r, counts[r], ErrCount)
		}
	}
	return nil
}

func interBcast[T Element](c *Comm, buf []T, root int) collCall {
	a := elemArgs[T](coll.Bcast)
	r, err := c.interRoot(a.Coll, root)
	if err != nil {
		return collCall{err: err}
	}
	a.Root, a.Count = r, len(buf)
	return collCall{a: a, recv: op.Bytes(buf)}
}

// interRooted is Gather(v) and Scatter(v): at the root, all holds the
// remote group's blocks (counts and displs for the v-forms); elsewhere in
// the other group, mine is the rank's own block.
func interRooted[T Element](c *Comm, k coll.Coll, mine, all []T, counts, displs []int, root int) collCall {
	gather := k == coll.Gather || k == coll.Gatherv
	mb, ab := viewBytes(mine), viewBytes(all)
	a, err := interArgs[T](c, k, mb, ab)
	if err == nil {
		a.Root, err = c.interRoot(k, root)
	}
	if err != nil {
		return collCall{err: err}
	}
	switch {
	case a.Root == coll.InterRootNone:
		return collCall{a: a}
	case a.Root != coll.InterRootSelf:
		a.Count, ab = len(mine), nil
	case k == coll.Gather || k == coll.Scatter:
		a.Count, err = countOf(k, "root's buffer", len(all), len(c.inter.ranks))
		mb = nil
	default:
		err = c.interCounts("block", counts, displs, len(c.inter.ranks))
		a.Counts, a.Displs, mb = counts, displs, nil
	}
	if err != nil {
		return failed(k, c, err)
	}
	if gather {
		return collCall{a: a, send: mb, recv: ab}
	}
	return collCall{a: a, send: ab, recv: mb}
}

func interAllgather[T Element](c *Comm, k coll.Coll, send, recv []T, counts, displs []int) collCall {
	sb, rb := viewBytes(send), viewBytes(recv)
	a, err := interArgs[T](c, k, sb, rb)
	if err == nil {
		a.Count = len(send)
		if k == coll.Allgatherv {
			err = c.interCounts("receive", counts, displs, len(c.inter.ranks))
			a.Counts, a.Displs = counts, displs
		} else {
			a.RemoteCount, err = countOf(k, "receive buffer", len(recv), len(c.inter.ranks))
		}
	}
	if err != nil {
		return failed(k, c, err)
	}
	return collCall{a: a, send: sb, recv: rb}
}

func interAlltoall[T Element](c *Comm, send []T, sendcounts, senddispls []int, recv []T, recvcounts, recvdispls []int, v bool) collCall {
	k, n := coll.Alltoall, len(c.inter.ranks)
	if v {
		k = coll.Alltoallv
	}
	sb, rb := viewBytes(send), viewBytes(recv)
	a, err := interArgs[T](c, k, sb, rb)
	switch {
	case err != nil:
	case v:
		if err = c.interCounts("send", sendcounts, senddispls, n); err == nil {
			err = c.interCounts("receive", recvcounts, recvdispls, n)
		}
		a.SendCounts, a.SendDispls, a.Counts, a.Displs = sendcounts, senddispls, recvcounts, recvdispls
	default:
		if a.Count, err = countOf(k, "send buffer", len(send), n); err == nil {
			a.RemoteCount, err = countOf(k, "receive buffer", len(recv), n)
		}
	}
	if err != nil {
		return failed(k, c, err)
	}
	return collCall{a: a, send: sb, recv: rb}
}

func interReduce[T Element](c *Comm, k coll.Coll, send, recv []T, o *Op, root int) collCall {
	sb, rb := viewBytes(send), viewBytes(recv)
	a, err := interArgs[T](c, k, sb, rb)
	switch {
	case err != nil:
	case k == coll.Scan || k == coll.Exscan:
		err = fmt.Errorf("%s is not defined on intercommunicators: %w", k, ErrComm)
	default:
		err = checkOp(k, o, a.Type)
	}
	if err != nil {
		return failed(k, c, err)
	}
	a.Op, a.Count = o, len(send)
	if k == coll.Reduce {
		if a.Root, err = c.interRoot(k, root); err != nil {
			return collCall{err: err}
		}
		switch a.Root {
		case coll.InterRootNone:
			return collCall{a: a}
		case coll.InterRootSelf:
			a.Count, sb = len(recv), nil
		default:
			rb = nil
		}
	}
	return collCall{a: a, send: sb, recv: rb}
}

func interReduceScatter[T Element](c *Comm, k coll.Coll, send, recv []T, counts []int, o *Op) collCall {
	sb, rb := viewBytes(send), viewBytes(recv)
	a, err := interArgs[T](c, k, sb, rb)
	if err == nil {
		err = checkOp(k, o, a.Type)
	}
	a.Op, a.Count = o, len(recv)
	switch {
	case err != nil:
	case k == coll.ReduceScatter:
		if err = c.interCounts("receive", counts, nil, len(c.ranks)); err == nil {
			a.Counts = counts
		}
	case len(send) != len(c.ranks)*len(recv):
		err = fmt.Errorf("send buffer of %d elements for %d blocks of %d: %w", len(send), len(c.ranks), len(recv), ErrCount)
	}
	if err != nil {
		return failed(k, c, err)
	}
	return collCall{a: a, send: sb, recv: rb}
}
