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

// memLink is one side of an in-process link. WriteFrame hands the frame to
// the remote endpoint synchronously, on the writer's goroutine, so the link
// itself never buffers and is always writable. The endpoint keeps a single
// writer per link, which gives HandleFrame its one-at-a-time order.
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
}

// boundHandler boxes a LinkHandler for an atomic pointer.
type boundHandler struct{ h LinkHandler }

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
		h.HandleFrame(f[:HeaderLen:HeaderLen], f[HeaderLen:])
		l.mu.Lock()
	}
	l.flushing = false
	if !l.closed {
		l.bound.Store(&boundHandler{h})
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
	h.HandleFrame(hdr, payload)
	return true, nil
}

// writeHeader implements headerWriter: a frame for a bound endpoint
// goes to it as a struct; any other takes the encoded way.
func (l *memLink) writeHeader(h Header, payload []byte) (bool, error) {
	if b := l.remote.bound.Load(); b != nil && HeaderLen+len(payload) <= l.maxFrame {
		if c, ok := b.h.(*conn); ok {
			c.handle(&h, payload)
			return true, nil
		}
	}
	return l.writeEncoded(h, payload)
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
	if !rclosed && h != nil {
		h.HandleClose(errRemoteClosed)
	}
	return nil
}
