package peer

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

var errRemoteClosed = errors.New("memory link closed by its remote end")

// DefaultMemoryFrame is the frame size of memory links: large, because a
// frame costs one function call and rendezvous data is copied once, straight
// from the sender's buffer into the receiver's.
const DefaultMemoryFrame = 4 << 20

// memLink is one side of an in-process link. A write hands the frame to
// the remote endpoint synchronously, on the writer's goroutine, or, while
// the remote rank polls, queues a copy in the remote side's inbox
// (deliver); either way the link is always writable. The endpoint keeps
// a single writer per link, and the inbox's draining token a single
// handler, which gives HandleFrame its one-at-a-time order; only
// rendezvous data frames, addressed to their receive, may be handled
// while a drainer handles other frames (see writeHeader).
type memLink struct {
	maxFrame int
	remote   *memLink

	// bound is h once Bind has flushed the early frames, until Close: the
	// writer's path for every frame after the first few, which then takes
	// no lock. A frame racing Close may still be delivered, as one that
	// read h under mu just before Close could be.
	bound atomic.Pointer[boundHandler]

	mu     sync.Mutex // guards h, closed and early against Close racing delivery
	h      LinkHandler
	closed bool
	// early holds frames written before Bind (a lazily dialed link whose
	// remote wrote first), as a data channel buffers until it is read;
	// flushing keeps later frames behind them while Bind delivers them.
	early    [][]byte
	flushing bool

	// The inbox: frames for this end that its writer queued instead of
	// handing over, because a goroutine of the receiving rank was polling
	// (Endpoint.Polling) and will hand them over on its own core. The
	// draining token makes one goroutine at a time the handler of this
	// end's frames, queued or direct, which keeps them in order.
	draining atomic.Bool
	queued   atomic.Int32 // len(in), written under qmu
	qmu      sync.Mutex
	in       []memCell // the writer appends here
	out      []memCell // the drainer's, swapped with in
}

// memCell is a queued frame: the header, a copy of the payload (its
// buffer kept for the next frame), or the remote's close.
type memCell struct {
	h      Header
	data   []byte
	closed error
}

// memQueueMax is the largest payload queued for a polling receiver. A
// larger one is handed over directly when the link is free, so that
// rendezvous data is still copied once, straight into the receive buffer.
const memQueueMax = 4 << 10

// memKeepMax is the largest cell buffer an inbox keeps for the next
// frame: an eager frame up to DefaultEagerLimit that found the draining
// token taken (a schedule's next send, issued while its rank hands over
// the frame that enabled it) is copied into the inbox without allocating.
const memKeepMax = DefaultEagerLimit

// boundHandler boxes a LinkHandler for an atomic pointer; flow is h as
// a FlowHandler, nil if it is not one.
type boundHandler struct {
	h    LinkHandler
	flow FlowHandler
}

// FlowHandler is a LinkHandler that must never wait inside a memory
// link's hand-over, which runs on the writer's goroutine: a WASI host's
// relay, whose guest takes frames at its own pace. Waiting there would
// stop the writer's own reader (two relays writing to each other both
// stopped, each inside the other's wait for its guest, and a native
// rank's writer could hold its endpoint's lock). It takes every frame
// and pushes back as a data channel does, through the writer's ready
// report: HandleFrameFlow returns false once the handler holds its
// high-water mark, and the handler later calls its link's Resume
// (Resumer) at its low-water mark, which the writer sees as
// HandleWritable.
type FlowHandler interface {
	LinkHandler
	HandleFrameFlow(hdr, payload []byte) (ready bool)
}

// Resumer is a link whose remote writer waits for this end's handler
// (a FlowHandler that reported not ready): Resume tells the writer, as
// HandleWritable on its end, that it may write again. A memory link is
// one.
type Resumer interface {
	Resume()
}

// newBound boxes h, noting whether it is a FlowHandler.
func newBound(h LinkHandler) *boundHandler {
	f, _ := h.(FlowHandler)
	return &boundHandler{h: h, flow: f}
}

// hand gives a frame to h, through HandleFrameFlow when h is a
// FlowHandler; ready is that call's report (true otherwise).
func hand(h LinkHandler, hdr, payload []byte) (ready bool) {
	if f, ok := h.(FlowHandler); ok {
		return f.HandleFrameFlow(hdr, payload)
	}
	h.HandleFrame(hdr, payload)
	return true
}

// NewMemoryLinks returns the two ends of an in-process link whose frames are
// at most maxFrame bytes (0 means DefaultMemoryFrame).
func NewMemoryLinks(maxFrame int) (Link, Link) {
	if maxFrame <= 0 {
		maxFrame = DefaultMemoryFrame
	}
	a, b := &memLink{maxFrame: maxFrame}, &memLink{maxFrame: maxFrame}
	a.remote, b.remote = b, a
	return a, b
}

// NewLoopbackLink returns a memory link whose frames come back to the same
// endpoint: a rank's link to itself.
func NewLoopbackLink(maxFrame int) Link {
	if maxFrame <= 0 {
		maxFrame = DefaultMemoryFrame
	}
	l := &memLink{maxFrame: maxFrame}
	l.remote = l
	return l
}

func (l *memLink) Bind(h LinkHandler) {
	l.mu.Lock()
	l.h, l.flushing = h, true
	for len(l.early) > 0 {
		f := l.early[0]
		l.early = l.early[1:]
		l.mu.Unlock()
		// a FlowHandler's not-ready report has no writer to reach
		// here (each early frame was reported ready); it resumes the
		// writer anyway once below its low-water mark, which costs it a
		// HandleWritable it did not wait for, nothing more
		hand(h, f[:HeaderLen:HeaderLen], f[HeaderLen:])
		l.mu.Lock()
	}
	l.flushing = false
	if !l.closed {
		// the inbox before bound: a writer that sees bound may queue
		// for a polling rank, whose last Poll must then find the inbox
		// (set after bound, a frame queued between the two stayed there
		// once the rank stopped polling: a gather hung under qemu)
		if c, ok := h.(*conn); ok {
			c.inbox.Store(l)
		}
		l.bound.Store(newBound(h))
	}
	l.mu.Unlock()
}

func (l *memLink) MaxFrame() int { return l.maxFrame }

func (l *memLink) WriteFrame(hdr, payload []byte) (bool, error) {
	if n := len(hdr) + len(payload); n > l.maxFrame {
		return false, fmt.Errorf("memory link: %d-byte frame exceeds %d", n, l.maxFrame)
	}
	r := l.remote
	if b := r.bound.Load(); b != nil {
		if b.flow != nil {
			return b.flow.HandleFrameFlow(hdr, payload), nil
		}
		b.h.HandleFrame(hdr, payload)
		return true, nil
	}
	r.mu.Lock()
	h, closed := r.h, r.closed
	if !closed && (h == nil || r.flushing) {
		r.early = append(r.early, append(append(make([]byte, 0, len(hdr)+len(payload)), hdr...), payload...))
		r.mu.Unlock()
		return true, nil
	}
	r.mu.Unlock()
	if closed {
		return false, ErrClosed
	}
	return hand(h, hdr, payload), nil
}

// Resume implements Resumer: the writer at the remote end hears
// HandleWritable, on the caller's goroutine (which must hold no lock the
// writer's handler takes: a native rank's endpoint writes what it held
// back from there).
func (l *memLink) Resume() {
	r := l.remote
	r.mu.Lock()
	h, closed := r.h, r.closed
	r.mu.Unlock()
	if h != nil && !closed {
		h.HandleWritable()
	}
}

// writeHeader implements headerWriter: a frame for a bound endpoint
// goes to it as a struct; any other takes the encoded way.
func (l *memLink) writeHeader(h Header, payload []byte) (bool, error) {
	r := l.remote
	if b := r.bound.Load(); b != nil && HeaderLen+len(payload) <= l.maxFrame {
		if c, ok := b.h.(*conn); ok {
			if h.Kind == KindData {
				// rendezvous data goes to the receive that asked for it
				// (by its id): no frame before it matters to it, and the
				// one writer keeps the message's frames in order. Straight
				// in, it is copied once and never waits for a drainer.
				c.handle(&h, payload)
			} else {
				r.deliver(c, &h, payload, nil)
			}
			return true, nil
		}
	}
	return l.writeEncoded(h, payload)
}

// deliver gets a frame (or, with closed set, the remote's close) to c,
// this end's handler. If c's rank polls and the frame is small, it is
// queued for the poller: the receiver then matches, reduces and
// completes on its own core, its state stays in its cache, and the
// writer's core touches one cell instead of a dozen of the receiver's
// lines (MPICH's shared-memory queues work so). Otherwise the writer
// hands the frame over itself, as the receiver may not be in the
// library at all (asynchronous progress), after any frames queued before
// it; if another goroutine holds the draining token, the frame is queued
// behind them, and the holder looks again before it leaves.
func (l *memLink) deliver(c *conn, h *Header, payload []byte, closed error) {
	if (c.ep.pollers.Load() == 0 || len(payload) > memQueueMax) && l.draining.CompareAndSwap(false, true) {
		if l.queued.Load() != 0 {
			l.handOver(c)
		}
		if closed != nil {
			c.HandleClose(closed)
		} else {
			c.handle(h, payload)
		}
		l.draining.Store(false)
		l.drain(c) // frames queued by a close racing this write
		return
	}
	l.qmu.Lock()
	if len(l.in) < cap(l.in) {
		l.in = l.in[:len(l.in)+1]
	} else {
		l.in = append(l.in, memCell{})
	}
	cell := &l.in[len(l.in)-1]
	if cell.closed = closed; h != nil {
		cell.h = *h
	}
	cell.data = append(cell.data[:0], payload...)
	l.queued.Store(int32(len(l.in)))
	l.qmu.Unlock()
	// The poller may have stopped since the check above; it drains once
	// after it stops, and one of the two sees the other's write.
	if c.ep.pollers.Load() == 0 {
		l.drain(c)
	}
}

// drain hands the queued frames to c unless another goroutine holds the
// draining token; that one looks again after giving it back.
func (l *memLink) drain(c *conn) {
	for l.queued.Load() != 0 && l.draining.CompareAndSwap(false, true) {
		l.handOver(c)
		l.draining.Store(false)
	}
}

// handOver hands every queued frame to c; the caller holds the token.
// Frames queued meanwhile land in the other slice, for the next round.
func (l *memLink) handOver(c *conn) {
	l.qmu.Lock()
	l.in, l.out = l.out[:0], l.in
	l.queued.Store(0)
	l.qmu.Unlock()
	for i := range l.out {
		cell := &l.out[i]
		if cell.closed != nil {
			c.HandleClose(cell.closed)
		} else {
			c.handle(&cell.h, cell.data)
		}
		if cap(cell.data) > memKeepMax {
			cell.data = nil // a large frame queued behind a drainer: do not keep its copy
		}
	}
}

// writeEncoded is WriteFrame of h encoded (apart from writeHeader, whose
// frames then need no header buffer of their own).
func (l *memLink) writeEncoded(h Header, payload []byte) (bool, error) {
	var hdr [HeaderLen]byte
	h.Encode(hdr[:])
	return l.WriteFrame(hdr[:], payload)
}

func (l *memLink) Close() error {
	l.mu.Lock()
	already := l.closed
	l.closed = true
	l.bound.Store(nil)
	l.mu.Unlock()
	if already || l.remote == l {
		return nil
	}
	r := l.remote
	r.mu.Lock()
	h, rclosed := r.h, r.closed
	r.closed = true
	r.bound.Store(nil)
	r.mu.Unlock()
	if rclosed || h == nil {
		return nil
	}
	if c, ok := h.(*conn); ok {
		r.deliver(c, nil, nil, errRemoteClosed) // behind the frames r's inbox holds
	} else {
		h.HandleClose(errRemoteClosed)
	}
	return nil
}

// Path implements PathReporter.
func (l *memLink) Path() Path { return Path{Link: "memory"} }
