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
func (e *Endpoint) deliverLocked(op *Op, kind Kind, src int, tag int32, total int, seq uint32, payload []byte, m *Message) {
	op.res.Source, op.res.Tag, op.res.Total = src, int(tag), total
	refuse := op.tag != AnyTag && tag != op.tag
	if kind == KindEager {
		n := 0
		if !refuse {
			n = op.land(0, len(op.buf), payload)
		}
		if m != nil {
			e.putMessageLocked(m)
		}
		e.mu.Unlock()
		e.finishRecv(op, n)
		return
	}
	op.want = min(len(op.buf), total)
	if refuse {
		op.want = 0
	}
	if op.want > 0 {
		e.register(op)
	}
	if m != nil {
		e.putMessageLocked(m)
	}
	// read under the lock: once registered, op may be withdrawn
	// (CancelTagged), completed and reused before the CTS is queued
	slot, want := op.slot, op.want
	e.mu.Unlock()
	e.clearToSend(e.conns[src].Load(), op, slot, want, seq)
}

func (e *Endpoint) finishRecv(op *Op, n int) {
	var err error
	if op.tag != AnyTag && int32(op.res.Tag) != op.tag {
		err = fmt.Errorf("message from rank %d tagged %#x where %#x was expected: %w", op.res.Source, uint32(op.res.Tag), uint32(op.tag), ErrTagMismatch)
	} else if op.res.Total > n {
		err = fmt.Errorf("%d-byte message from rank %d tag %d into a %d-byte buffer: %w",
			op.res.Total, op.res.Source, op.res.Tag, len(op.buf), ErrTruncate)
	}
	op.res.N = n
	e.complete(op, err)
}

// arrive matches an eager or RTS frame from c against the posted receives,
// or queues it as unexpected.
func (e *Endpoint) arrive(c *conn, h *Header, payload []byte) {
	e.mu.Lock()
	if op := e.posted.match(h.Context, c.rank, h.Tag); op != nil {
		e.posted.remove(op)
		op.inPosted = false
		e.deliverLocked(op, h.Kind, c.rank, h.Tag, int(h.Total), h.Seq, payload, nil)
		return
	}
	m := e.getMessageLocked(len(payload))
	m.kind, m.ctx, m.src, m.tag, m.total, m.seq = h.Kind, h.Context, c.rank, h.Tag, int(h.Total), h.Seq
	m.data = m.data[:copy(m.data[:len(payload)], payload)]
	e.unexp.push(m)
	e.mu.Unlock()
	e.wake()
}

// Message is a message removed from matching by Improbe (MPI_Message), and
// the unexpected queue's entry type. An eager message holds its payload; a
// rendezvous message holds only its announcement.
type Message struct {
	kind       Kind
	ctx        uint32
	src        int
	tag        int32
	total      int
	seq        uint32
	data       []byte
	prev, next *Message
}

// Envelope describes m.
func (m *Message) envelope() Envelope { return Envelope{Source: m.src, Tag: int(m.tag), Len: m.total} }

// Envelope returns the source, tag and length of m.
func (m *Message) Envelope() Envelope { return m.envelope() }

type msgList struct{ head, tail *Message }

func (l *msgList) push(m *Message) {
	m.next, m.prev = nil, l.tail
	if l.tail == nil {
		l.head = m
	} else {
		l.tail.next = m
	}
	l.tail = m
}

func (l *msgList) remove(m *Message) {
	if m.prev == nil {
		l.head = m.next
	} else {
		m.prev.next = m.next
	}
	if m.next == nil {
		l.tail = m.prev
	} else {
		m.next.prev = m.prev
	}
	m.prev, m.next = nil, nil
}

// match returns the oldest unexpected message a receive (src, tag) in ctx
// takes: arrival order is what makes matching non-overtaking.
func (l *msgList) match(ctx uint32, src int, tag, mask int32) *Message {
	for m := l.head; m != nil; m = m.next {
		if m.ctx == ctx && (src == AnySource || m.src == src) && (tag == AnyTag || (m.tag^tag)&mask == 0) {
			return m
		}
	}
	return nil
}

// match returns the oldest posted receive that takes a message (src, tag) in ctx.
func (l *opList) match(ctx uint32, src int, tag int32) *Op {
	for op := l.head; op != nil; op = op.next {
		if op.ctx == ctx && (op.peer == AnySource || op.peer == src) && (op.tag == AnyTag || (op.tag^tag)&op.mask == 0) {
			return op
		}
	}
	return nil
}
