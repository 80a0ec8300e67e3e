package peer

import "math/bits"

// spareOps is how many idle Ops an endpoint keeps outside its locked
// pool: enough for the transfers a small collective has in flight.
const spareOps = 4

// maxIdleOps and maxIdleMsgs bound the Ops and unexpected-queue entries an
// endpoint keeps for reuse: a burst of a million outstanding sends must
// not pin a million Ops once they complete. Past the bound they go back
// to the garbage collector. (Idle payload buffers are bounded in bytes:
// Endpoint.poolLimit.)
const (
	maxIdleOps  = 4096
	maxIdleMsgs = 4096
)

// GetOp returns an idle Op from the pool.
func (e *Endpoint) GetOp() *Op {
	for i := range e.spare {
		if e.spare[i].Load() != nil {
			if op := e.spare[i].Swap(nil); op != nil {
				return op
			}
		}
	}
	e.poolMu.Lock()
	if n := len(e.ops); n > 0 {
		op := e.ops[n-1]
		e.ops = e.ops[:n-1]
		e.poolMu.Unlock()
		return op
	}
	e.poolMu.Unlock()
	return &Op{ep: e, done: make(chan struct{}, 1)}
}

// PutOp returns an Op that is not active to the pool.
func (e *Endpoint) PutOp(op *Op) {
	op.buf, op.completer, op.res, op.auto = nil, nil, Result{}, false
	op.state.Store(opIdle)
	for i := range e.spare {
		if e.spare[i].Load() == nil && e.spare[i].CompareAndSwap(nil, op) {
			return
		}
	}
	e.poolMu.Lock()
	if len(e.ops) < maxIdleOps {
		e.ops = append(e.ops, op)
	}
	e.poolMu.Unlock()
}

// Detach gives up the caller's interest in an active op (MPI_Request_free on
// an active request): the op runs to completion and then returns to the pool.
func (e *Endpoint) Detach(op *Op) {
	for {
		switch op.state.Load() {
		case opActive:
			if op.state.CompareAndSwap(opActive, opDetached) {
				return
			}
		case opCompleting:
			// the completer is between its CAS and publishing; it is brief
		default:
			e.PutOp(op)
			return
		}
	}
}

// Unexpected payloads come from per-size-class free lists (powers of two
// from 64 B), so a steady stream of unexpected eager messages allocates
// nothing.
const (
	bufMinShift = 6
	bufClasses  = 32 - bufMinShift
)

func bufClass(n int) int {
	if n <= 1<<bufMinShift {
		return 0
	}
	return bits.Len(uint(n-1)) - bufMinShift
}

// getMessageLocked returns an idle unexpected-queue entry with room for n
// payload bytes. Called with e.mu held, as putMessageLocked: every entry is
// taken and returned inside a matching step that holds it already.
func (e *Endpoint) getMessageLocked(n int) *Message {
	cl := bufClass(n)
	var m *Message
	if k := len(e.msgs); k > 0 {
		m = e.msgs[k-1]
		e.msgs = e.msgs[:k-1]
	} else {
		m = new(Message)
	}
	if n > 0 {
		if k := len(e.bufs[cl]); k > 0 {
			m.data = e.bufs[cl][k-1]
			e.bufs[cl][k-1] = nil
			e.bufs[cl] = e.bufs[cl][:k-1]
			e.poolBytes -= int64(cap(m.data))
		} else {
			m.data = make([]byte, 1<<(cl+bufMinShift))
		}
	}
	return m
}

// putMessageLocked returns m and its payload buffer for reuse, as far as
// the pool's bounds (maxIdleMsgs, poolLimit bytes) allow: what a flood of
// unexpected messages allocated goes back to the garbage collector once
// received, except what a steady stream reuses.
func (e *Endpoint) putMessageLocked(m *Message) {
	if n := int64(cap(m.data)); n > 0 && e.poolBytes+n <= e.poolLimit {
		cl := bufClass(cap(m.data))
		e.bufs[cl] = append(e.bufs[cl], m.data[:cap(m.data)])
		e.poolBytes += n
	}
	*m = Message{}
	if len(e.msgs) < maxIdleMsgs {
		e.msgs = append(e.msgs, m)
	}
}

// spares keeps the emptied buckets of a queue's index for reuse, so a
// queue that indexes and drains over and over allocates its buckets once.
type spares[B any] []*B

// get returns a spare bucket, or a new one.
func (s *spares[B]) get() *B {
	if n := len(*s); n > 0 {
		l := (*s)[n-1]
		*s = (*s)[:n-1]
		return l
	}
	return new(B)
}

// put keeps an emptied bucket.
func (s *spares[B]) put(l *B) { *s = append(*s, l) }
