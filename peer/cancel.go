package peer

import (
	"fmt"
)

// Cancelling a send (MPI_Cancel, MPI-4.1 §3.8.4). A send can be withdrawn
// only while no receive has matched it, and only the receiver knows that,
// so the sender asks: a Cancel frame, written on the pair's ordered link
// after the message itself (eager data or RTS), names the message; the
// receiver, which therefore has the message already, looks for it among its
// unexpected messages. Found, it drops it (returning its eager credit) and
// replies FlagCancelled; not found (matched, taken by Improbe, or being
// received), it replies without. A receive posted at the same time and
// the cancel frame meet under the receiver's e.mu: exactly one of them
// gets the message.
//
//	sender                         receiver
//	  eager(seq=id) / RTS(seq=slot) ──▶  unexpected queue
//	  cancel(seq, rid=cancel slot)  ──▶  found? remove : leave
//	                                ◀──  cancel-reply(seq, rid, cancelled?)
//
// An eager message is named by an id drawn per link when it is queued
// (conn.msgID, carried in the eager frame's seq); an RTS by its send id.
// The cancel itself is an Op of its own (the caller's), registered in the
// slot table while it waits for the reply, as a rendezvous send waiting
// for its CTS is: a lost link or a closed endpoint fails it as it fails
// such a send (peerFailed). The send Op is left alone except when its
// RTS is withdrawn: then it never gets a CTS, and the reply completes it
// with Result.Cancelled.
//
// Mixed versions: the frame format stays version 2, so a peer built
// before cancel frames links up as before; a cancel sent to it is an
// unknown frame kind there, a protocol error that fails the link.

// CancelSend asks to withdraw the message of send, a send op started on
// this endpoint, and returns at once: cop, an idle Op of the caller's,
// completes with Result.Cancelled once the receiver answered (true: the
// message was withdrawn before any receive matched it, and nobody will
// receive it). If the message was a rendezvous announcement, send
// completes then too, with Result.Cancelled; an eager send completes as
// it would have, its message written. A send that has moved its data, or
// failed, is not cancelled: cop completes at once with Cancelled false.
// A lost link fails cop with the link's error. The send is complete, in
// MPI's sense, only when both ops are.
func (e *Endpoint) CancelSend(cop, send *Op) error {
	if cop == send || cop.Active() {
		return fmt.Errorf("peer: cancel op already active: %w", ErrCancelArg)
	}
	if send.kind != opSend || send.mode == modeCancel || send.state.Load() == opIdle {
		return fmt.Errorf("peer: cancel: %w", ErrCancelArg)
	}
	cop.arm(opSend, send.peer, send.ctx, send.tag, nil)
	cop.mode = modeCancel
	e.mu.Lock()
	var flags uint16
	switch {
	case e.lookup(send.slot) == send && send.slot != 0:
		// RTS queued or written, no CTS yet: ask for the announcement
		cop.seq, flags = send.slot, FlagRendezvous
	case send.seq != 0:
		// an eager message (its id was drawn when it was queued): queued,
		// being written, or written; the cancel frame follows it
		cop.seq = send.seq
	default:
		// a rendezvous past its CTS, or a send that failed before it had
		// a link: no message left to withdraw
		e.mu.Unlock()
		e.complete(cop, nil)
		return nil
	}
	if !e.register(cop) {
		e.mu.Unlock()
		cop.state.Store(opIdle)
		return fmt.Errorf("peer: cancel send to rank %d: %d rendezvous operations outstanding: %w", send.peer, e.slotLimit, ErrResources)
	}
	cop.phase, cop.want = phaseCancel, int(flags)
	e.mu.Unlock()
	c := e.conns[send.peer].Load()
	if c == nil {
		// unreachable: a send with a message id went through a conn
		e.mu.Lock()
		e.unregister(cop)
		e.mu.Unlock()
		e.complete(cop, fmt.Errorf("cancel send: no link to rank %d: %w", send.peer, ErrProcFailed))
		return nil
	}
	c.enqueue(cop, &c.queue)
	return nil
}

// cancelFrame returns the header of cancel op's frame, queued behind its
// message and now about to be written, and moves op to waiting for the
// reply (before the write: the reply may come inside it). An op
// CancelTagged withdrew meanwhile is unregistered instead, and its error
// returned. The conn holds the writer's token.
func (e *Endpoint) cancelFrame(op *Op) (Header, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := op.abandon; err != nil {
		e.unregister(op)
		return Header{}, err
	}
	op.phase = phaseWaitCTS
	return Header{Kind: KindCancel, Flags: uint16(op.want), Context: op.ctx, Tag: op.tag, Seq: op.seq, RID: op.slot}, nil
}

// cancelArrived withdraws the unexpected message a cancel frame from c
// names, if it is still there, and replies whether it did.
func (e *Endpoint) cancelArrived(c *conn, h *Header) error {
	if int(c.cancelReplies.Add(1)) > e.rtsLimit {
		// a peer that floods cancels and reads no replies would grow
		// the control queue without bound
		c.cancelReplies.Add(-1)
		return fmt.Errorf("%w: rank %d has more cancels unanswered than it can have sends", ErrFrame, c.rank)
	}
	kind := KindEager
	if h.Flags&FlagRendezvous != 0 {
		kind = KindRTS
	}
	e.mu.Lock()
	m := e.unexp.find(h.Context, c.rank, h.Tag, kind, h.Seq)
	var grant int64
	flags := h.Flags & FlagRendezvous
	if m != nil {
		e.unexp.remove(m)
		grant = e.releaseLocked(c, m)
		e.putMessageLocked(m)
		flags |= FlagCancelled
	}
	e.mu.Unlock()
	if grant > 0 {
		c.grant(grant)
	}
	reply := e.GetOp()
	reply.kind, reply.seq, reply.rid, reply.want = opCancelReply, h.Seq, h.RID, int(flags)
	c.enqueue(reply, &c.ctrl)
	return nil
}

// cancelReplied completes the cancel op a reply from c answers and, for a
// withdrawn RTS, its send.
func (e *Endpoint) cancelReplied(c *conn, h *Header) error {
	e.mu.Lock()
	cop := e.lookup(h.RID)
	if cop == nil && e.stale(h.RID) {
		e.mu.Unlock()
		return nil // withdrawn by CancelTagged
	}
	if cop == nil || cop.mode != modeCancel || cop.peer != c.rank || cop.phase != phaseWaitCTS || cop.seq != h.Seq {
		e.mu.Unlock()
		return fmt.Errorf("%w: cancel reply for unknown cancel %#x", ErrFrame, h.RID)
	}
	cancelled := h.Flags&FlagCancelled != 0
	var send *Op
	if cancelled && h.Flags&FlagRendezvous != 0 {
		send = e.lookup(h.Seq)
		if send != nil && (send.kind != opSend || send.peer != c.rank || send.phase != phaseWaitCTS) {
			e.mu.Unlock()
			return fmt.Errorf("%w: cancel reply withdrew %#x, not a send waiting for its CTS", ErrFrame, h.Seq)
		}
		if send != nil {
			e.unregister(send)
		}
	}
	e.unregister(cop)
	e.mu.Unlock()
	if send != nil {
		send.res.Cancelled = true
		e.complete(send, nil)
	}
	cop.res.Cancelled = cancelled
	e.complete(cop, nil)
	return nil
}

// find returns the queued message from src in ctx with tag, kind and seq:
// the one a cancel frame names. Cancels are rare, so a scan will do; the
// index, when there is one, narrows it to the (context, source, tag)
// bucket.
func (q *unexpQueue) find(ctx uint32, src int, tag int32, kind Kind, seq uint32) *Message {
	if q.indexed {
		l := q.byTag[tagKey{ctx, int32(src), tag}]
		if l == nil {
			return nil
		}
		for m := l.head; m != nil; m = m.links[byTag].next {
			if m.kind == kind && m.seq == seq {
				return m
			}
		}
		return nil
	}
	for m := q.all.head; m != nil; m = next(m) {
		if m.ctx == ctx && m.src == src && m.tag == tag && m.kind == kind && m.seq == seq {
			return m
		}
	}
	return nil
}

// nextMsgID draws the id of an eager message on c's link: never 0, which
// marks a send with no eager message (CancelSend).
func (c *conn) nextMsgID() uint32 {
	for {
		if id := c.msgID.Add(1); id != 0 {
			return id
		}
	}
}
