package peer

import (
	"errors"
	"fmt"

	"github.com/meshmpi/meshmpi/op"
)

func (e *Endpoint) checkPeer(rank int, any bool) error {
	if rank >= 0 && rank < e.size || any && rank == AnySource {
		return nil
	}
	return fmt.Errorf("peer: rank %d outside a world of %d", rank, e.size)
}

// StartSend starts sending buf to world rank dst. It returns an error for
// arguments the endpoint cannot accept, and ErrResources for a rendezvous
// send when the endpoint has maxSlots of them outstanding; a send that
// fails later (lost peer) completes op with the error.
func (e *Endpoint) StartSend(op *Op, mode Mode, dst int, ctx uint32, tag int32, buf []byte) error {
	if err := e.checkPeer(dst, false); err != nil {
		return err
	}
	if op.Active() {
		return errors.New("peer: op already active")
	}
	op.arm(opSend, dst, ctx, tag, buf)
	op.mode = mode
	if e.shut.Load() {
		// closed: its conns may not all have failed yet, and a send
		// must not leave a rank whose pending operations fail
		e.complete(op, e.closeCause())
		return nil
	}
	c := e.conn(dst)
	if c == nil {
		e.complete(op, fmt.Errorf("no link to rank %d: %w", dst, ErrProcFailed))
		return nil
	}
	op.phase = phaseEager
	// an empty message is eager even when every other one is not: a
	// rendezvous for it would only add a CTS the receiver must still send
	// after its receive completed (and perhaps after it closed its links).
	// An eager message without credit goes by rendezvous (credit.go).
	if mode == Synchronous || len(buf) > max(c.eagerMax, 0) || !c.takeCredit(eagerCost(len(buf))) {
		op.phase = phaseRTS
		e.mu.Lock()
		ok := e.register(op)
		e.mu.Unlock()
		if !ok {
			op.state.Store(opIdle)
			return fmt.Errorf("peer: send to rank %d: %d rendezvous operations outstanding: %w", dst, e.slotLimit, ErrResources)
		}
	}
	c.enqueue(op, &c.queue)
	return nil
}

// SendEager sends buf to world rank dst at once if it can go eagerly
// with nothing before it on the link: no Op, the frame written from buf
// on the caller's goroutine, the send complete when sent is true (err
// then says whether the frame was delivered; a failed link fails the
// peer as a queued send would). Otherwise (a large message, no credit,
// frames queued or being written, a blocked, dead or unmade link, a bad
// rank) it does nothing and reports false, and the caller starts the
// send on an Op. A blocking send's Op (taken, armed, completed and
// given back) cost a third of its time.
func (e *Endpoint) SendEager(dst int, ctx uint32, tag int32, buf []byte) (sent bool, err error) {
	if dst < 0 || dst >= e.size {
		return false, nil
	}
	c := e.conns[dst].Load()
	if c == nil || e.shut.Load() || len(buf) > max(c.eagerMax, 0) || c.queued.Load() != 0 || c.blocked.Load() || c.dead.Load() ||
		!c.writing.CompareAndSwap(false, true) {
		return false, nil
	}
	if !c.takeCredit(eagerCost(len(buf))) {
		c.release()
		return false, nil
	}
	return true, c.writeEager(ctx, tag, c.nextMsgID(), buf)
}

// SendNotify starts a send on an Op of the endpoint's own, which reports
// its completion to c.Complete(id, …) and goes back to the pool: the
// collective engine's transfers, with nothing for the caller to release.
func (e *Endpoint) SendNotify(mode Mode, dst int, ctx uint32, tag int32, buf []byte, c Completer, id int32) error {
	if mode == Standard {
		if sent, err := e.SendEager(dst, ctx, tag, buf); sent {
			n := len(buf)
			if err != nil {
				n = 0
			}
			c.Complete(id, n, err)
			e.wake()
			return nil
		}
	}
	op := e.GetOp()
	op.completer, op.cid, op.auto = c, id, true
	if err := e.StartSend(op, mode, dst, ctx, tag, buf); err != nil {
		e.PutOp(op)
		return err
	}
	return nil
}

// RecvNotify is SendNotify for a receive. It matches messages whose tag
// agrees with tag in the bits of mask (-1: all bits); a match that differs
// in the other bits fails with ErrTagMismatch. The collective engine keeps
// a signature of each call's arguments there, so ranks that disagree see an
// error instead of taking each other's data.
func (e *Endpoint) RecvNotify(src int, ctx uint32, tag, mask int32, buf []byte, c Completer, id int32) error {
	op := e.GetOp()
	op.completer, op.cid, op.auto = c, id, true
	if err := e.startRecv(op, src, ctx, tag, mask, buf, accumulator{}); err != nil {
		e.PutOp(op)
		return err
	}
	return nil
}

// StartRecvMasked starts a receive on op that matches tags as
// RecvNotify's does, in the bits of mask: a collective's transfer on an
// Op its schedule keeps from one start to the next.
func (e *Endpoint) StartRecvMasked(op *Op, src int, ctx uint32, tag, mask int32, buf []byte) error {
	return e.startRecv(op, src, ctx, tag, mask, buf, accumulator{})
}

// StartRecvAccumulateMasked is StartRecvMasked for an accumulating
// receive (StartRecvAccumulate).
func (e *Endpoint) StartRecvAccumulateMasked(o *Op, src int, ctx uint32, tag, mask int32, buf []byte, red *op.Op, t op.Type) error {
	acc, err := newAccumulator(buf, red, t)
	if err != nil {
		return err
	}
	return e.startRecv(o, src, ctx, tag, mask, buf, acc)
}

// StartRecv starts a receive into buf from world rank src (or AnySource)
// with tag (or AnyTag) in context ctx.
func (e *Endpoint) StartRecv(op *Op, src int, ctx uint32, tag int32, buf []byte) error {
	return e.startRecv(op, src, ctx, tag, -1, buf, accumulator{})
}

func (e *Endpoint) startRecv(op *Op, src int, ctx uint32, tag, mask int32, buf []byte, acc accumulator) error {
	if err := e.checkPeer(src, true); err != nil {
		return err
	}
	if op.Active() {
		return errors.New("peer: op already active")
	}
	op.arm(opRecv, src, ctx, tag, buf)
	op.mask, op.acc = mask, acc
	e.mu.Lock()
	if m := e.unexp.match(ctx, src, tag, op.mask); m != nil {
		e.unexp.remove(m)
		e.receiveLocked(op, m) // unlocks
		return nil
	}
	var err error
	switch {
	case e.closed != nil:
		err = e.closed
	case src != AnySource && e.unreachable(src):
		err = fmt.Errorf("receive from rank %d: %w", src, ErrProcFailed)
	default:
		op.inPosted = true
		e.posted.push(op)
	}
	e.mu.Unlock()
	if err != nil {
		e.complete(op, err)
	}
	return nil
}

// Envelope describes a message found by a probe.
type Envelope struct {
	Source int // world rank
	Tag    int
	Len    int // bytes
}

// Iprobe looks for a message that a receive with these arguments would match,
// without receiving it (MPI_Iprobe).
func (e *Endpoint) Iprobe(src int, ctx uint32, tag int32) (Envelope, bool, error) {
	if err := e.checkPeer(src, true); err != nil {
		return Envelope{}, false, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if m := e.unexp.match(ctx, src, tag, -1); m != nil {
		return m.envelope(), true, nil
	}
	if e.closed != nil {
		return Envelope{}, false, e.closed
	}
	if src != AnySource && e.unreachable(src) {
		return Envelope{}, false, fmt.Errorf("probe rank %d: %w", src, ErrProcFailed)
	}
	return Envelope{}, false, nil
}

// Improbe is Iprobe that also removes the message from matching, so only
// StartMrecv can receive it (MPI_Improbe).
func (e *Endpoint) Improbe(src int, ctx uint32, tag int32) (*Message, error) {
	if err := e.checkPeer(src, true); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if m := e.unexp.match(ctx, src, tag, -1); m != nil {
		e.unexp.remove(m)
		return m, nil
	}
	if e.closed != nil {
		return nil, e.closed
	}
	if src != AnySource && e.unreachable(src) {
		return nil, fmt.Errorf("probe rank %d: %w", src, ErrProcFailed)
	}
	return nil, nil
}

// StartMrecv receives a message taken by Improbe. m must not be used after.
func (e *Endpoint) StartMrecv(op *Op, m *Message, buf []byte) error {
	if op.Active() {
		return errors.New("peer: op already active")
	}
	op.arm(opRecv, m.src, m.ctx, m.tag, buf)
	e.mu.Lock()
	e.receiveLocked(op, m)
	return nil
}

// Cancel cancels a receive that has not matched yet (MPI_Cancel) and reports
// whether it did; a cancelled op completes with Result.Cancelled set.
func (e *Endpoint) Cancel(op *Op) bool {
	e.mu.Lock()
	if !op.inPosted {
		e.mu.Unlock()
		return false
	}
	e.posted.remove(op)
	op.inPosted = false
	e.mu.Unlock()
	op.res.Cancelled = true
	e.complete(op, nil)
	return true
}
