package peer

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// conn is the endpoint's side of one link: the send queues for that peer and
// the handler of the frames it delivers. One goroutine at a time writes to
// the link (whoever finds it idle drains the queues: the drain-loop pattern),
// and the link delivers frames one at a time, so neither side needs a lock
// held across link calls.
type conn struct {
	ep       *Endpoint
	rank     int
	link     Link
	maxData  int // payload bytes per frame
	eagerMax int

	dead     atomic.Bool // set before pending operations are failed
	declared atomic.Bool // its failure was confirmed (Endpoint.declare)

	// credit is the eager credit this end may still spend on the link
	// (credit.go); it starts at InitialCredit.
	credit atomic.Int64
	// The receiving side of the link's credit, under ep.mu: the window
	// the peer was granted (set by its first message), the credit its
	// unexpected messages hold, what was freed and not yet granted back,
	// and how many of its rendezvous announcements are unexpected.
	creditInit         bool
	window, held, owed int64
	rts                int
	// cancelReplies counts the cancel replies queued for the peer and not
	// yet written (cancel.go): at most rtsLimit, as many as it can have
	// cancels outstanding (each holds one of its rendezvous slots)
	cancelReplies atomic.Int32

	// msgID draws the ids of eager messages on the link, which a cancel
	// frame names them by (cancel.go).
	msgID atomic.Uint32

	// inbox is the memory link whose queued frames Poll hands to this conn.
	inbox atomic.Pointer[memLink]

	// writing is the writer's token: whoever takes it writes frames
	// until the queues are empty, then gives it back. queued counts the
	// ops in ctrl and queue, so that a send finding none can take the
	// token and write its eager frame without c.mu (writeFast), and a
	// writer giving the token back sees what was queued meanwhile.
	writing atomic.Bool
	queued  atomic.Int32
	// blocked: the link is above its high-water mark (written under mu,
	// read by the fast path without it). link and maxData are set at
	// creation, or once by setLink for a conn that was connecting; until
	// then blocked holds the writes back.
	blocked atomic.Bool

	mu     sync.Mutex
	ctrl   opList // CTS frames; they go first, they unblock the peer's data
	queue  opList // sends in order: eager frames, RTS, data phases
	rearm  bool   // HandleWritable came while the writer was in WriteFrame
	failed error
	hdr    [HeaderLen]byte // the token holder's header scratch
}

// enqueue appends op to q and drains if nobody else is. An eager send
// that finds nothing queued and nobody writing writes at once (writeFast):
// two atomic operations instead of two lock and unlock pairs.
func (c *conn) enqueue(op *Op, q *opList) {
	if op.phase == phaseEager && op.kind == opSend {
		op.seq = c.nextMsgID() // before any writer can see op
	}
	if q == &c.queue && op.phase == phaseEager && c.queued.Load() == 0 &&
		!c.blocked.Load() && !c.dead.Load() && c.writing.CompareAndSwap(false, true) {
		c.writeFast(op)
		return
	}
	c.mu.Lock()
	if c.failed != nil {
		err := c.failed
		c.mu.Unlock()
		c.drop(op, err)
		return
	}
	q.push(op)
	c.queued.Add(1)
	c.drainLocked()
}

// writeFast writes op's eager frame holding the writer's token (see
// writeEager) and completes op.
func (c *conn) writeFast(op *Op) {
	c.drop(op, c.writeEager(op.ctx, op.tag, op.seq, op.buf))
}

// writeEager writes an eager frame holding the writer's token, taken
// with nothing queued, and gives the token back; it returns the error
// the frame met. Sends queued while it wrote (their enqueue found the
// token taken) are drained after: the queued count is read after the
// token is given back, and such a send counted itself before it tried
// the token.
func (c *conn) writeEager(ctx uint32, tag int32, seq uint32, buf []byte) error {
	h := Header{Kind: KindEager, Context: ctx, Tag: tag, Seq: seq, Total: uint64(len(buf)), Source: uint32(c.ep.rank)}
	ready, err := c.write(h, buf)
	if err != nil {
		err = Failure(fmt.Sprintf("link to rank %d", c.rank), err)
	}
	if err == nil && ready {
		c.release()
		return nil
	}
	c.mu.Lock()
	if err != nil {
		c.writing.Store(false)
		c.failWritten(err)
		return err
	}
	// not ready: block unless the link said writable during the write
	c.blocked.Store(!c.rearm)
	c.rearm = false
	c.writing.Store(false)
	c.drainLocked()
	return nil
}

// release gives back the writer's token, taken with nothing queued, and
// drains what was queued (or failed) while it was held.
func (c *conn) release() {
	c.writing.Store(false)
	if c.queued.Load() != 0 || c.dead.Load() {
		c.mu.Lock()
		c.drainLocked()
	}
}

// failWritten fails the conn after a write failed, the writer's token
// given back. Called with c.mu held; returns with it released. A fail
// that came during the write left the queues to the writer.
func (c *conn) failWritten(err error) {
	if c.failed != nil {
		c.failQueuedLocked()
		return
	}
	c.mu.Unlock()
	c.fail(err)
}

// drainLocked writes queued frames until the queues are empty, the link is
// blocked, or it fails. Called with c.mu held; returns with it released.
func (c *conn) drainLocked() {
	if c.blocked.Load() || !c.writing.CompareAndSwap(false, true) {
		c.mu.Unlock()
		return
	}
	for c.failed == nil {
		var (
			h       Header
			payload []byte
			done    *Op // completes once its frame is written
		)
		if op := c.ctrl.pop(); op != nil {
			c.queued.Add(-1)
			h = Header{Kind: KindCTS, Seq: op.seq, RID: op.rid, Total: uint64(op.want)}
			if op.refused {
				h.Flags = FlagRefused
			}
			if op.kind == opCredit {
				h = Header{Kind: KindCredit, Total: uint64(op.want)}
			}
			if op.kind == opCancelReply {
				h = Header{Kind: KindCancelReply, Flags: uint16(op.want), Seq: op.seq, RID: op.rid}
			}
			done = op
		} else if op := c.queue.head; op != nil {
			h = Header{Context: op.ctx, Tag: op.tag, Total: uint64(len(op.buf))}
			switch op.phase {
			case phaseEager:
				h.Kind, h.Seq, payload, done = KindEager, op.seq, op.buf, op
				c.queue.pop()
				c.queued.Add(-1)
			case phaseRTS:
				c.queue.pop()
				c.queued.Add(-1)
				// the phase changes before the write (the CTS may come back
				// inside it) and under e.mu, where CancelTagged looks
				c.ep.mu.Lock()
				abandoned, slot := op.abandon, op.slot // slot: CancelTagged may clear it once unlocked
				if abandoned != nil {
					c.ep.unregister(op)
				} else {
					op.phase = phaseWaitCTS
				}
				c.ep.mu.Unlock()
				if abandoned != nil {
					c.mu.Unlock()
					c.ep.complete(op, abandoned)
					c.mu.Lock()
					continue
				}
				h.Kind, h.Seq = KindRTS, slot
			case phaseCancel:
				c.queue.pop()
				c.queued.Add(-1)
				var abandoned error
				if h, abandoned = c.ep.cancelFrame(op); abandoned != nil {
					c.mu.Unlock()
					c.ep.complete(op, abandoned)
					c.mu.Lock()
					continue
				}
			case phaseData:
				n := min(c.maxData, op.want-op.off)
				h = Header{Kind: KindData, RID: op.rid, Total: uint64(op.want), Offset: uint64(op.off)}
				payload = op.buf[op.off : op.off+n]
				if op.off += n; op.off == op.want {
					c.queue.pop()
					c.queued.Add(-1)
					done = op
				}
			}
		} else {
			break
		}
		h.Source = uint32(c.ep.rank)
		c.rearm = false // set by a HandleWritable that comes during the write
		c.mu.Unlock()
		ready, err := c.write(h, payload)
		if err != nil {
			err = Failure(fmt.Sprintf("link to rank %d", c.rank), err)
		}
		if done != nil {
			c.drop(done, err)
		}
		c.mu.Lock()
		if err != nil {
			c.writing.Store(false)
			c.failWritten(err)
			return
		}
		if !ready && !c.rearm {
			c.blocked.Store(true)
			break
		}
	}
	c.writing.Store(false)
	if c.failed != nil {
		c.failQueuedLocked() // unlocks
		return
	}
	c.mu.Unlock()
}

// write sends one frame; the caller holds the writer's token.
func (c *conn) write(h Header, payload []byte) (bool, error) {
	if hw, ok := c.link.(headerWriter); ok {
		return hw.writeHeader(h, payload)
	}
	h.Encode(c.hdr[:])
	return c.link.WriteFrame(c.hdr[:], payload)
}

// drop finishes an op taken off the queue: a written CTS or credit grant
// goes back to the pool, a send completes (with err if its frame was not
// delivered). A send whose RTS never went out gives up its slot first:
// nothing else will (peerFailed leaves queued RTSs to the conn), and a
// slot must never outlive its op's completion, after which the op may be
// reused.
func (c *conn) drop(op *Op, err error) {
	if op.kind == opCancelReply {
		c.cancelReplies.Add(-1)
	}
	if op.kind == opCTS || op.kind == opCredit || op.kind == opCancelReply {
		c.ep.PutOp(op)
		return
	}
	if op.kind == opSend && (op.phase == phaseRTS || op.phase == phaseCancel) {
		c.ep.mu.Lock()
		c.ep.unregister(op)
		c.ep.mu.Unlock()
	}
	c.ep.complete(op, err)
}

// fail marks the peer lost and fails everything pending with it.
func (c *conn) fail(err error) {
	c.dead.Store(true)
	c.mu.Lock()
	if c.failed != nil {
		c.mu.Unlock()
		return
	}
	c.failed = err
	if c.writing.Load() {
		// the writer is inside WriteFrame with a queued op's buffer; it
		// fails the queue when it returns
		c.mu.Unlock()
	} else {
		c.failQueuedLocked()
	}
	c.ep.peerFailed(c.rank, err)
}

// hasLink reports whether the conn has (or had) a link.
func (c *conn) hasLink() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.link != nil
}

// failQueuedLocked completes every queued op with c.failed. Called with c.mu
// held; returns with it released.
func (c *conn) failQueuedLocked() {
	var q opList
	for op := c.ctrl.pop(); op != nil; op = c.ctrl.pop() {
		q.push(op)
	}
	for op := c.queue.pop(); op != nil; op = c.queue.pop() {
		q.push(op)
	}
	c.queued.Store(0)
	err := c.failed
	c.mu.Unlock()
	for op := q.pop(); op != nil; op = q.pop() {
		c.drop(op, err)
	}
}

// setLink gives a connecting conn its link and starts writing what queued
// up. A conn that already has l keeps it (both ends connected at once and
// the dialer returned the link the remote attached); another link is an
// error the caller resolves by closing it.
func (c *conn) setLink(l Link) error {
	c.mu.Lock()
	switch {
	case c.link == l:
		c.mu.Unlock()
		return nil
	case c.link != nil:
		c.mu.Unlock()
		return fmt.Errorf("peer: rank %d already has a link", c.rank)
	case c.failed != nil:
		err := c.failed
		c.mu.Unlock()
		return err
	case l.MaxFrame()-HeaderLen < c.eagerMax:
		c.mu.Unlock()
		return fmt.Errorf("peer: lazily connected link to rank %d carries %d-byte frames, need %d", c.rank, l.MaxFrame(), LazyFrame)
	}
	c.link, c.maxData = l, l.MaxFrame()-HeaderLen
	c.mu.Unlock()
	l.Bind(c) // without c.mu: a link may deliver frames it holds during Bind
	c.mu.Lock()
	c.blocked.Store(false)
	c.drainLocked()
	return nil
}

// closeLink closes the conn's link, if it has one yet. A failed conn then
// lets the link go (a closed stand-in takes its place), so a rank that
// loses peer after peer, as a manager whose workers come and go does,
// does not keep every dead link's buffers and WebRTC state.
func (c *conn) closeLink() {
	c.mu.Lock()
	l := c.link
	c.mu.Unlock()
	if l == nil {
		return
	}
	l.Close()
	c.mu.Lock()
	// the writer's token keeps writers off c.link meanwhile
	if c.failed != nil && c.link == l && c.writing.CompareAndSwap(false, true) {
		c.link = closedLink{maxFrame: l.MaxFrame()}
		c.writing.Store(false)
	}
	c.mu.Unlock()
}

// closedLink stands in for a failed conn's closed link.
type closedLink struct{ maxFrame int }

func (closedLink) Bind(LinkHandler) {}
func (closedLink) WriteFrame(hdr, payload []byte) (bool, error) {
	return false, fmt.Errorf("peer: link closed: %w", ErrProcFailed)
}
func (l closedLink) MaxFrame() int { return l.maxFrame }
func (closedLink) Close() error    { return nil }

// HandleFrame implements LinkHandler.
func (c *conn) HandleFrame(hdr, payload []byte) {
	var h Header
	if err := h.Decode(hdr, len(payload)); err != nil {
		c.protocolError(err)
		return
	}
	c.handle(&h, payload)
}

// handle acts on a frame whose header is decoded (or was never encoded:
// headerWriter).
func (c *conn) handle(h *Header, payload []byte) {
	var err error
	switch {
	case h.Source != uint32(c.rank):
		err = fmt.Errorf("%w: rank %d's link carries a frame from rank %d", ErrFrame, c.rank, h.Source)
	case h.Kind == KindEager, h.Kind == KindRTS:
		err = c.ep.arrive(c, h, payload)
	case h.Kind == KindCredit:
		err = c.creditArrived(h)
	case h.Kind == KindCTS:
		err = c.ep.ctsArrived(c, h)
	case h.Kind == KindData:
		err = c.ep.dataArrived(c, h, payload)
	case h.Kind == KindCancel:
		err = c.ep.cancelArrived(c, h)
	case h.Kind == KindCancelReply:
		err = c.ep.cancelReplied(c, h)
	}
	if err != nil {
		c.protocolError(err)
	}
}

// protocolError treats a peer that breaks the protocol as lost.
func (c *conn) protocolError(err error) {
	c.fail(Failure(fmt.Sprintf("rank %d broke the protocol", c.rank), err))
	c.link.Close()
}

// HandleWritable implements LinkHandler.
func (c *conn) HandleWritable() {
	c.mu.Lock()
	c.blocked.Store(false)
	if c.writing.Load() {
		// the writer is inside WriteFrame; if that write reports not
		// ready it must not block on a low-water event already past
		c.rearm = true
	}
	c.drainLocked()
}

// HandleClose implements LinkHandler.
func (c *conn) HandleClose(err error) {
	c.fail(Failure(fmt.Sprintf("link to rank %d", c.rank), err))
}
