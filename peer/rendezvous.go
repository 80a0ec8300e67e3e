package peer

import "fmt"

// clearToSend answers a matched RTS for op, whose slot is registered if
// it wants data; op is only touched when it wants none (it is then
// neither posted nor registered, so no one else can complete it). full
// means op could not have a slot: the sender is refused and op fails.
func (e *Endpoint) clearToSend(c *conn, op *Op, slot uint32, want int, seq uint32, full bool) {
	cts := e.GetOp()
	cts.kind, cts.seq, cts.rid, cts.want, cts.refused = opCTS, seq, slot, want, full
	c.enqueue(cts, &c.ctrl)
	switch {
	case full:
		e.complete(op, fmt.Errorf("receive from rank %d: %d rendezvous operations outstanding: %w", op.res.Source, e.slotLimit, ErrResources))
	case want == 0:
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
	if h.Flags&FlagRefused != 0 {
		e.complete(op, fmt.Errorf("send to rank %d: the receiver has no room for another rendezvous: %w", c.rank, ErrResources))
		return nil
	}
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
	e.landed(op, op.land(off, op.want, payload))
	return nil
}

// landed ends the copy of n more bytes into op, which dataArrived or
// landData began (op.copying): op completes once all its data is in, or
// once a withdrawal that came during the copy left it to this goroutine.
func (e *Endpoint) landed(op *Op, n int) {
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
		return
	}
	e.mu.Unlock()
}

// A DataLander is a LinkHandler that takes a rendezvous data frame's
// payload straight from the link into the receive buffer it is for. A
// link whose frames arrive in a stream it reads itself (a WASI guest's
// link through its host) offers it each large frame's header first, so
// the payload crosses into the program's memory once, not into a frame
// buffer and then again into the receive buffer.
type DataLander interface {
	// LandData is for a frame whose header is hdr and whose payload,
	// n bytes, the link has not read yet. When the frame is data for a
	// receive waiting for it, it calls read once with the bytes of the
	// receive buffer the payload goes to and reports true; the frame is
	// then handled (a read error means the link failed, and the receive
	// fails with it). Otherwise it calls nothing and reports false: the
	// link reads the payload and calls HandleFrame as usual.
	LandData(hdr []byte, n int, read func(dst []byte) error) bool
}

// LandData implements DataLander.
func (c *conn) LandData(hdr []byte, n int, read func(dst []byte) error) bool {
	var h Header
	if h.Decode(hdr, n) != nil || h.Kind != KindData || h.Source != uint32(c.rank) {
		return false // HandleFrame reports it
	}
	return c.ep.landData(c, &h, n, read)
}

// landData is dataArrived with the payload still in the link: read fills
// the receive buffer. Anything but data for a plain receive of exactly
// this offset (an accumulating receive reduces instead of copying, a
// stale or unknown frame is dataArrived's to judge) is left to it.
func (e *Endpoint) landData(c *conn, h *Header, n int, read func(dst []byte) error) bool {
	e.mu.Lock()
	op := e.lookup(h.RID)
	if op == nil || op.kind != opRecv || op.res.Source != c.rank || op.acc.red != nil ||
		h.Total != uint64(op.want) || h.Offset != uint64(op.off) || n > op.want-op.off {
		e.mu.Unlock()
		return false
	}
	op.copying = true
	off := op.off
	e.mu.Unlock()
	if err := read(op.buf[off : off+n]); err != nil {
		n = 0 // the link is failing: the receive fails with it
	}
	e.landed(op, n)
	return true
}

// Slot ids name rendezvous operations on the wire: the low 20 bits index
// the slot table (plus one, so 0 is never an id), the high 12 bits are the
// slot's generation, so a stale frame cannot reach the slot's next tenant.
const slotBits = 20

// maxSlots bounds the slot table, so an index never spills into the
// generation bits: an endpoint has at most this many rendezvous operations
// (sends waiting for or moving data, matched receives waiting for data)
// at once. A further one fails with ErrResources.
const maxSlots = 1<<slotBits - 1

// register gives op a slot id; false if the table is full. Called with
// e.mu held.
func (e *Endpoint) register(op *Op) bool {
	var i uint32
	if n := len(e.freeSlots); n > 0 {
		i = e.freeSlots[n-1]
		e.freeSlots = e.freeSlots[:n-1]
	} else {
		if len(e.slots) >= e.slotLimit {
			return false
		}
		i = uint32(len(e.slots))
		e.slots = append(e.slots, nil)
		e.slotGen = append(e.slotGen, 0)
	}
	e.slots[i] = op
	op.slot = e.slotGen[i]<<slotBits | (i + 1)
	if op.kind == opSend {
		op.phase = phaseRTS
	}
	return true
}

// slotIndex returns the table index id names, and whether it is in the
// table at all.
func (e *Endpoint) slotIndex(id uint32) (uint32, bool) {
	i := id&(1<<slotBits-1) - 1
	return i, id&(1<<slotBits-1) != 0 && uint64(i) < uint64(len(e.slots))
}

func (e *Endpoint) lookup(id uint32) *Op {
	i, ok := e.slotIndex(id)
	if !ok || e.slotGen[i] != id>>slotBits {
		return nil
	}
	return e.slots[i]
}

// stale reports whether id names a slot that exists but has moved on to a
// later generation: a frame for an operation withdrawn by CancelTagged,
// which the peer could not know about when it sent it.
func (e *Endpoint) stale(id uint32) bool {
	i, ok := e.slotIndex(id)
	return ok && e.slotGen[i] != id>>slotBits
}

// unregister frees op's slot. An op that holds none (or not the one its
// id names) is left alone: this runs under e.mu, where an index out of
// range would panic with the lock held and hang every later caller.
func (e *Endpoint) unregister(op *Op) {
	i, ok := e.slotIndex(op.slot)
	if !ok || e.slots[i] != op {
		op.slot = 0
		return
	}
	e.slots[i] = nil
	e.slotGen[i] = (e.slotGen[i] + 1) & (1<<(32-slotBits) - 1)
	e.freeSlots = append(e.freeSlots, i)
	op.slot = 0
}
