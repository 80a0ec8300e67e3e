// Package colltest tests collective algorithms without a network: a
// deterministic in-memory fabric that runs every rank's plan in one
// goroutine, a static schedule verifier, and naive sequential references
// for every collective.
package colltest

import (
	"fmt"

	"github.com/meshmpi/meshmpi/coll"
	"github.com/meshmpi/meshmpi/op"
)

// Fabric connects n ranks in one goroutine. A send is copied and completes
// at once (eager); a receive completes when a message from its peer with its
// tag is there. Messages between a pair with one tag are FIFO, as on a link.
type Fabric struct {
	n      int
	queues map[route]*channel
}

type route struct {
	src, dst int
	tag      uint32
}

type channel struct {
	msgs  [][]byte
	recvs []pendingRecv
}

type pendingRecv struct {
	p   []byte
	c   coll.Completer
	id  int32
	red *op.Op // a RecvReduce: reduce the message into p
	t   op.Type
}

// NewFabric returns a fabric of n ranks.
func NewFabric(n int) *Fabric { return &Fabric{n: n, queues: map[route]*channel{}} }

// Transport returns rank's side of the fabric. Even ranks' sides are
// coll.RecvReducers and odd ranks' are not, so every run of two or more
// ranks covers both ways of executing a fused receive-reduce step.
func (f *Fabric) Transport(rank int) coll.Transport {
	if rank%2 == 0 {
		return reducingEndpoint{endpoint{f, rank}}
	}
	return endpoint{f, rank}
}

func (f *Fabric) channel(r route) *channel {
	ch := f.queues[r]
	if ch == nil {
		ch = &channel{}
		f.queues[r] = ch
	}
	return ch
}

// Pending reports messages sent and never received, and receives never
// matched: a correct collective leaves none.
func (f *Fabric) Pending() error {
	for r, ch := range f.queues {
		if len(ch.msgs) > 0 || len(ch.recvs) > 0 {
			return fmt.Errorf("rank %d → %d tag %d: %d messages unreceived, %d receives unmatched", r.src, r.dst, r.tag, len(ch.msgs), len(ch.recvs))
		}
	}
	return nil
}

type endpoint struct {
	f    *Fabric
	rank int
}

func (e endpoint) Rank() int { return e.rank }
func (e endpoint) Size() int { return e.f.n }

func (e endpoint) check(peer int) error {
	if peer < 0 || peer >= e.f.n {
		return fmt.Errorf("rank %d: peer %d outside a fabric of %d", e.rank, peer, e.f.n)
	}
	return nil
}

func (e endpoint) Send(peer int, tag uint32, p []byte, c coll.Completer, id int32) error {
	if err := e.check(peer); err != nil {
		return err
	}
	ch := e.f.channel(route{e.rank, peer, tag})
	msg := append([]byte(nil), p...)
	if len(ch.recvs) > 0 {
		r := ch.recvs[0]
		ch.recvs = ch.recvs[1:]
		deliver(r, msg)
	} else {
		ch.msgs = append(ch.msgs, msg)
	}
	c.Complete(id, len(p), nil)
	return nil
}

func (e endpoint) Recv(peer int, tag uint32, p []byte, c coll.Completer, id int32) error {
	return e.recv(peer, tag, pendingRecv{p: p, c: c, id: id})
}

// reducingEndpoint is an endpoint that reduces messages as they land.
type reducingEndpoint struct{ endpoint }

// RecvReduce implements coll.RecvReducer.
func (e reducingEndpoint) RecvReduce(peer int, tag uint32, p []byte, o *op.Op, t op.Type, c coll.Completer, id int32) error {
	return e.recv(peer, tag, pendingRecv{p: p, c: c, id: id, red: o, t: t})
}

func (e endpoint) recv(peer int, tag uint32, r pendingRecv) error {
	if err := e.check(peer); err != nil {
		return err
	}
	ch := e.f.channel(route{peer, e.rank, tag})
	if len(ch.msgs) > 0 {
		msg := ch.msgs[0]
		ch.msgs = ch.msgs[1:]
		deliver(r, msg)
		return nil
	}
	ch.recvs = append(ch.recvs, r)
	return nil
}

func deliver(r pendingRecv, msg []byte) {
	if len(msg) > len(r.p) {
		copy(r.p, msg)
		r.c.Complete(r.id, len(r.p), fmt.Errorf("%d-byte message into a %d-byte receive: truncated", len(msg), len(r.p)))
		return
	}
	if r.red != nil {
		r.c.Complete(r.id, len(msg), r.red.Reduce(r.t, msg, r.p[:len(msg)]))
		return
	}
	r.c.Complete(r.id, copy(r.p, msg), nil)
}

// Abandon withdraws the rank's receives still waiting under tag.
func (e endpoint) Abandon(tag uint32, err error) {
	for r, ch := range e.f.queues {
		if r.dst != e.rank || r.tag != tag {
			continue
		}
		recvs := ch.recvs
		ch.recvs = nil
		for _, p := range recvs {
			p.c.Complete(p.id, 0, err)
		}
	}
}
