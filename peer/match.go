package peer

import "fmt"

// receiveLocked delivers unexpected message m into op. Called with e.mu
// held; returns with it released.
func (e *Endpoint) receiveLocked(op *Op, m *Message) {
	e.deliverLocked(op, m.kind, m.src, m.tag, m.total, m.seq, m.data, m)
}

// deliverLocked gives a matched message to receive op: an eager payload is
// copied, a rendezvous is answered with a CTS. A message whose tag differs
// from the op's in the bits the op's mask ignores is refused (the sender's
// rendezvous is released with a zero-byte CTS) and fails the receive.
// Called with e.mu held; returns with it released. payload is not used
// after return. m, if not nil, is the unexpected message payload came from:
// it goes back to the pool before the lock is released.
//
// The message's eager credit is returned to its sender (credit.go): a
// grant goes out once enough is owed.
func (e *Endpoint) deliverLocked(op *Op, kind Kind, src int, tag int32, total int, seq uint32, payload []byte, m *Message) {
	op.res.Source, op.res.Tag, op.res.Total = src, int(tag), total
	refuse := op.tag != AnyTag && tag != op.tag
	c := e.conns[src].Load()
	var grant int64
	if m != nil {
		grant = e.releaseLocked(c, m)
	} else if kind == KindEager && c != nil {
		grant = c.returnLocked(eagerCost(len(payload)))
	}
	if kind == KindEager {
		n := 0
		if !refuse {
			n = op.land(0, len(op.buf), payload)
		}
		if m != nil {
			e.putMessageLocked(m)
		}
		e.mu.Unlock()
		if grant > 0 {
			c.grant(grant)
		}
		e.finishRecv(op, n)
		return
	}
	op.want = min(len(op.buf), total)
	if refuse {
		op.want = 0
	}
	full, lost := false, false
	switch {
	case op.want == 0:
	case c.dead.Load():
		// the sender failed after it announced the message: its data
		// will never come, and peerFailed, which runs under e.mu after
		// dead is set, has passed or will pass over this receive
		lost = true
	case !e.register(op):
		op.want, full = 0, true // the sender is told (FlagRefused), the receive fails
	}
	if m != nil {
		e.putMessageLocked(m)
	}
	// read under the lock: once registered, op may be withdrawn
	// (CancelTagged), completed and reused before the CTS is queued
	slot, want := op.slot, op.want
	e.mu.Unlock()
	if lost {
		e.complete(op, fmt.Errorf("receive from rank %d: the sender failed before its data came: %w", src, ErrProcFailed))
		return
	}
	e.clearToSend(c, op, slot, want, seq, full)
}

func (e *Endpoint) finishRecv(op *Op, n int) {
	var err error
	if op.tag != AnyTag && int32(op.res.Tag) != op.tag {
		err = &TagMismatchError{Source: op.res.Source, Tag: op.res.Tag, Want: int(op.tag)}
	} else if op.res.Total > n {
		err = fmt.Errorf("%d-byte message from rank %d tag %d into a %d-byte buffer: %w",
			op.res.Total, op.res.Source, op.res.Tag, len(op.buf), ErrTruncate)
	}
	op.res.N = n
	e.complete(op, err)
}

// arrive matches an eager or RTS frame from c against the posted receives,
// or queues it as unexpected, within the credit c's peer was granted; an
// error means the peer broke the protocol.
func (e *Endpoint) arrive(c *conn, h *Header, payload []byte) error {
	e.mu.Lock()
	if !c.creditInit {
		e.initCreditLocked(c)
	}
	if op := e.posted.match(h.Context, c.rank, h.Tag); op != nil {
		e.posted.remove(op)
		op.inPosted = false
		e.deliverLocked(op, h.Kind, c.rank, h.Tag, int(h.Total), h.Seq, payload, nil)
		return nil
	}
	var cost int64
	if h.Kind == KindEager {
		cost = eagerCost(len(payload))
	}
	if err := e.chargeLocked(c, h, cost); err != nil {
		e.mu.Unlock()
		return err
	}
	m := e.getMessageLocked(len(payload))
	m.kind, m.ctx, m.src, m.tag, m.total, m.seq, m.cost = h.Kind, h.Context, c.rank, h.Tag, int(h.Total), h.Seq, cost
	m.data = m.data[:copy(m.data[:len(payload)], payload)]
	e.unexp.push(m)
	grant := c.returnLocked(0) // the top-up of a first message, if due
	e.mu.Unlock()
	if grant > 0 {
		c.grant(grant)
	}
	e.wake()
	return nil
}
