package meshmpi

import (
	"fmt"

	"github.com/meshmpi/meshmpi/coll"
	"github.com/meshmpi/meshmpi/op"
)

// collCall is a collective call's arguments, checked and translated to the
// engine's terms (coll.Args conventions), or the error that stops it.
type collCall struct {
	a          coll.Args
	send, recv []byte
	err        error
}

// do runs a prepared call in the given form. A call that fails its checks
// still takes its sequence number, as one that passes would, so a rank that
// reports an error does not shift the collectives after it.
func do(c *Comm, form collForm, call collCall, hs []Hint) (*Request, error) {
	if err := c.check(); err != nil && call.err != nil {
		// an unusable communicator is the error, whatever else is wrong
		// (the prepare functions read c before they check it)
		return nil, fmt.Errorf("collective: %w", err)
	}
	if call.err != nil {
		if c.check() == nil {
			// the other ranks would wait for this one's part: they are
			// told (collcontrol.go)
			c.notify(c.seq.Add(1)-1, false)
		}
		return nil, call.err
	}
	return c.collective(form, call.a, call.send, call.recv, hs)
}

func failed(k coll.Coll, c *Comm, err error) collCall {
	return collCall{err: fmt.Errorf("%s on %s: %w", k, c, err)}
}

// inPlaceOnlyAtRoot rejects InPlace from a rank that is not the root.
func (c *Comm) rootedInPlace(k coll.Coll, root int, b []byte) (bool, error) {
	if err := c.checkRoot(k, root); err != nil {
		return false, err
	}
	ip := isInPlace(b)
	if ip && c.rank != root {
		return false, fmt.Errorf("%s: only the root may pass InPlace: %w", k, ErrBuffer)
	}
	return ip, nil
}

func prepBcast[T Element](c *Comm, buf []T, root int) collCall {
	if c.TestInter() {
		return interBcast(c, buf, root)
	}
	a := elemArgs[T](coll.Bcast)
	if err := c.checkRoot(a.Coll, root); err != nil {
		return collCall{err: err}
	}
	a.Root, a.Count = root, len(buf)
	return collCall{a: a, recv: op.Bytes(buf)}
}

func prepGather[T Element](c *Comm, k coll.Coll, send, recv []T, counts, displs []int, root int) collCall {
	if c.TestInter() {
		return interRooted(c, k, send, recv, counts, displs, root)
	}
	a := elemArgs[T](k)
	sb, rb := viewBytes(send), op.Bytes(recv)
	ip, err := c.rootedInPlace(k, root, sb)
	if err != nil {
		return collCall{err: err}
	}
	a.Root, a.InPlace = root, ip
	if k == coll.Gather {
		if ip {
			a.Count, err = countOf(k, "receive buffer", len(recv), c.Size())
		} else {
			a.Count = len(send)
		}
	} else {
		a.Counts, a.Displs, err = c.vLayout(k, counts, displs, c.rank == root, len(send), ip)
	}
	if err != nil {
		return collCall{err: err}
	}
	if ip {
		sb = nil
	}
	return collCall{a: a, send: sb, recv: rb}
}

func prepScatter[T Element](c *Comm, k coll.Coll, send []T, counts, displs []int, recv []T, root int) collCall {
	if c.TestInter() {
		return interRooted(c, k, recv, send, counts, displs, root)
	}
	a := elemArgs[T](k)
	sb, rb := op.Bytes(send), viewBytes(recv)
	ip, err := c.rootedInPlace(k, root, rb)
	if err != nil {
		return collCall{err: err}
	}
	a.Root, a.InPlace = root, ip
	if k == coll.Scatter {
		if ip {
			a.Count, err = countOf(k, "send buffer", len(send), c.Size())
		} else {
			a.Count = len(recv)
		}
	} else {
		a.Counts, a.Displs, err = c.vLayout(k, counts, displs, c.rank == root, len(recv), ip)
	}
	if err != nil {
		return collCall{err: err}
	}
	if ip {
		rb = nil
	}
	return collCall{a: a, send: sb, recv: rb}
}

// vLayout checks the counts and displacements of a v-collective. At ranks
// where MPI ignores them (rooted: everywhere but the root) they may be nil;
// the rank's own count is then mine.
func (c *Comm) vLayout(k coll.Coll, counts, displs []int, significant bool, mine int, inPlace bool) ([]int, []int, error) {
	n := c.Size()
	if !significant && counts == nil && displs == nil {
		counts, displs = make([]int, n), make([]int, n)
		counts[c.rank] = mine
		return counts, displs, nil
	}
	if len(counts) != n || displs != nil && len(displs) != n || displs == nil && k != coll.ReduceScatter {
		return nil, nil, fmt.Errorf("%s: %d counts and %d displacements for %d ranks: %w", k, len(counts), len(displs), n, ErrCount)
	}
	for r := range n {
		if counts[r] < 0 {
			return nil, nil, fmt.Errorf("%s: rank %d: count %d: %w", k, r, counts[r], ErrCount)
		}
		if displs != nil && displs[r] < 0 {
			return nil, nil, fmt.Errorf("%s: rank %d: displacement %d: %w", k, r, displs[r], ErrCount)
		}
	}
	if !inPlace && k != coll.ReduceScatter && counts[c.rank] != mine {
		return nil, nil, fmt.Errorf("%s: this rank's count is %d but its buffer holds %d: %w", k, counts[c.rank], mine, ErrCount)
	}
	return counts, displs, nil
}

func prepAllgather[T Element](c *Comm, k coll.Coll, send, recv []T, counts, displs []int) collCall {
	if c.TestInter() {
		return interAllgather(c, k, send, recv, counts, displs)
	}
	a := elemArgs[T](k)
	sb, rb := viewBytes(send), op.Bytes(recv)
	a.InPlace = isInPlace(sb)
	var err error
	switch {
	case k == coll.Allgatherv:
		a.Counts, a.Displs, err = c.vLayout(k, counts, displs, true, len(send), a.InPlace)
	case a.InPlace:
		a.Count, err = countOf(k, "receive buffer", len(recv), c.Size())
	default:
		a.Count = len(send)
	}
	if err != nil {
		return failed(k, c, err)
	}
	if a.InPlace {
		sb = nil
	}
	return collCall{a: a, send: sb, recv: rb}
}

func prepAlltoall[T Element](c *Comm, send, recv []T) collCall {
	if c.TestInter() {
		return interAlltoall(c, send, nil, nil, recv, nil, nil, false)
	}
	a := elemArgs[T](coll.Alltoall)
	sb, rb := viewBytes(send), op.Bytes(recv)
	a.InPlace = isInPlace(sb)
	var err error
	if a.InPlace {
		a.Count, err = countOf(a.Coll, "receive buffer", len(recv), c.Size())
		sb = nil
	} else {
		a.Count, err = countOf(a.Coll, "send buffer", len(send), c.Size())
	}
	if err != nil {
		return failed(a.Coll, c, err)
	}
	return collCall{a: a, send: sb, recv: rb}
}

func prepAlltoallv[T Element](c *Comm, send []T, sendcounts, senddispls []int, recv []T, recvcounts, recvdispls []int) collCall {
	if c.TestInter() {
		return interAlltoall(c, send, sendcounts, senddispls, recv, recvcounts, recvdispls, true)
	}
	a := elemArgs[T](coll.Alltoallv)
	sb, rb := viewBytes(send), op.Bytes(recv)
	a.InPlace = isInPlace(sb)
	n := c.Size()
	check := func(what string, counts, displs []int) error {
		if len(counts) != n || len(displs) != n {
			return fmt.Errorf("%d %s counts and %d displacements for %d ranks: %w", len(counts), what, len(displs), n, ErrCount)
		}
		for r := range n {
			if counts[r] < 0 || displs[r] < 0 {
				return fmt.Errorf("%s to rank %d: count %d, displacement %d: %w", what, r, counts[r], displs[r], ErrCount)
			}
		}
		return nil
	}
	if err := check("receive", recvcounts, recvdispls); err != nil {
		return failed(a.Coll, c, err)
	}
	a.Counts, a.Displs = recvcounts, recvdispls
	if a.InPlace {
		a.SendCounts, a.SendDispls, sb = recvcounts, recvdispls, nil
	} else {
		if err := check("send", sendcounts, senddispls); err != nil {
			return failed(a.Coll, c, err)
		}
		a.SendCounts, a.SendDispls = sendcounts, senddispls
	}
	return collCall{a: a, send: sb, recv: rb}
}

func prepReduce[T Element](c *Comm, k coll.Coll, send, recv []T, o *Op, root int) collCall {
	if c.TestInter() {
		return interReduce(c, k, send, recv, o, root)
	}
	a := elemArgs[T](k)
	if err := checkOp(k, o, a.Type); err != nil {
		return failed(k, c, err)
	}
	sb, rb := viewBytes(send), op.Bytes(recv)
	a.Op = o
	if k == coll.Reduce {
		ip, err := c.rootedInPlace(k, root, sb)
		if err != nil {
			return collCall{err: err}
		}
		a.Root, a.InPlace = root, ip
	} else {
		a.InPlace = isInPlace(sb)
	}
	a.Count = len(send)
	if a.InPlace {
		a.Count, sb = len(recv), nil
	}
	return collCall{a: a, send: sb, recv: rb}
}

func prepReduceScatter[T Element](c *Comm, k coll.Coll, send, recv []T, counts []int, o *Op) collCall {
	if c.TestInter() {
		return interReduceScatter(c, k, send, recv, counts, o)
	}
	a := elemArgs[T](k)
	if err := checkOp(k, o, a.Type); err != nil {
		return failed(k, c, err)
	}
	sb, rb := viewBytes(send), op.Bytes(recv)
	a.Op, a.InPlace = o, isInPlace(sb)
	var err error
	switch {
	case k == coll.ReduceScatter:
		a.Counts, _, err = c.vLayout(k, counts, nil, true, 0, a.InPlace)
	case a.InPlace:
		a.Count, err = countOf(k, "receive buffer", len(recv), c.Size())
	default:
		a.Count = len(recv)
	}
	if err != nil {
		return failed(k, c, err)
	}
	if a.InPlace {
		sb = nil
	}
	return collCall{a: a, send: sb, recv: rb}
}
