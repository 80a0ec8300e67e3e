package peer

import "fmt"

// clearToSend answers a matched RTS for op, whose slot is registered if
// it wants data; op is only touched when it wants none (it is then
// neither posted nor registered, so no one else can complete it).
func (e *Endpoint) clearToSend(c *conn, op *Op, slot uint32, want int, seq uint32) {
	cts := e.GetOp()
	cts.kind, cts.seq, cts.rid, cts.want = opCTS, seq, slot, want
	c.enqueue(cts, &c.ctrl)
	if want == 0 {
		e.finishRecv(op, 0)
	}
}

// ctsArrived starts the data phase of the send that RTS seq announced.
func (e *Endpoint) ctsArrived(c *conn, h *Header) error {
	e.mu.Lock()
	op := e.lookup(h.Seq)
	if op == nil && e.stale(h.Seq) {
		e.mu.Unlock()
		return nil // for a send withdrawn by CancelTagged
	}
	if op == nil || op.kind != opSend || op.peer != c.rank || op.phase != phaseWaitCTS || h.Total > uint64(len(op.buf)) {
		e.mu.Unlock()
		return fmt.Errorf("%w: cts for unknown send %#x", ErrFrame, h.Seq)
	}
	e.unregister(op)
	e.mu.Unlock()
	if h.Total == 0 {
		e.complete(op, nil)
		return nil
	}
	op.phase, op.rid, op.want, op.off = phaseData, h.RID, int(h.Total), 0
	c.enqueue(op, &c.queue)
	return nil
}

// dataArrived copies rendezvous payload straight into the matched receive's
// buffer: the receiver never holds more of a large message than one frame.
func (e *Endpoint) dataArrived(c *conn, h *Header, payload []byte) error {
	e.mu.Lock()
	op := e.lookup(h.RID)
	if op == nil && e.stale(h.RID) {
		e.mu.Unlock()
		return nil // for a receive withdrawn by CancelTagged
	}
	if op == nil || op.kind != opRecv || op.res.Source != c.rank || h.Total != uint64(op.want) || h.Offset != uint64(op.off) {
		e.mu.Unlock()
		return fmt.Errorf("%w: data for unknown receive %#x", ErrFrame, h.RID)
	}
	// copy without the lock; while copying is set, a withdrawal
	// (CancelTagged, a failed peer) leaves op to this goroutine
	op.copying = true
	off := op.off
	e.mu.Unlock()
	n := op.land(off, op.want, payload)
	e.mu.Lock()
	op.copying = false
	op.off += n
	if err := op.abandon; err != nil || op.off == op.want {
		e.unregister(op)
		e.mu.Unlock()
		if err != nil {
			e.complete(op, err)
		} else {
			e.finishRecv(op, op.want)
		}
		return nil
	}
	e.mu.Unlock()
	return nil
}

// Slot ids name rendezvous operations on the wire: the low 20 bits index
// the slot table (plus one, so 0 is never an id), the high 12 bits are the
// slot's generation, so a stale frame cannot reach the slot's next tenant.
const slotBits = 20

func (e *Endpoint) register(op *Op) {
	var i uint32
	if n := len(e.freeSlots); n > 0 {
		i = e.freeSlots[n-1]
		e.freeSlots = e.freeSlots[:n-1]
	} else {
		i = uint32(len(e.slots))
		e.slots = append(e.slots, nil)
		e.slotGen = append(e.slotGen, 0)
	}
	e.slots[i] = op
	op.slot = e.slotGen[i]<<slotBits | (i + 1)
	if op.kind == opSend {
		op.phase = phaseRTS
	}
}

func (e *Endpoint) lookup(id uint32) *Op {
	i := id&(1<<slotBits-1) - 1
	if int(i) >= len(e.slots) || e.slotGen[i] != id>>slotBits {
		return nil
	}
	return e.slots[i]
}

// stale reports whether id names a slot that exists but has moved on to a
// later generation: a frame for an operation withdrawn by CancelTagged,
// which the peer could not know about when it sent it.
func (e *Endpoint) stale(id uint32) bool {
	i := id&(1<<slotBits-1) - 1
	return id&(1<<slotBits-1) != 0 && int(i) < len(e.slots) && e.slotGen[i] != id>>slotBits
}

func (e *Endpoint) unregister(op *Op) {
	i := op.slot&(1<<slotBits-1) - 1
	e.slots[i] = nil
	e.slotGen[i] = (e.slotGen[i] + 1) & (1<<(32-slotBits) - 1)
	e.freeSlots = append(e.freeSlots, i)
	op.slot = 0
}
