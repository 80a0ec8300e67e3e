package wasmtime

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
)

// pipeSize is each direction's buffer: a few 64 KiB frames, so neither
// side waits for the other's every frame. A frame up to wasm.MaxMessage
// (1 MiB since protocol version 3) passes through it in pieces; a larger
// pipe for those is not measured yet.
const pipeSize = 256 << 10

// pipe is the stream between one guest's meshmpi host functions and
// host.Serve: a bounded ring of bytes each way. The guest's end never
// blocks (its functions move what fits and return, since a blocking host
// call would freeze every goroutine of the guest); the host's end
// (hostEnd, an io.ReadWriteCloser) blocks as a socket would.
type pipe struct {
	mu       sync.Mutex
	readable sync.Cond // up has bytes, or an end closed
	writable sync.Cond // down has room, or an end closed
	up       ring      // guest → host
	down     ring      // host → guest
	// guestClosed: the guest closed the stream or is gone. hostClosed:
	// Serve closed it.
	guestClosed, hostClosed bool
	// stopped: the rank's context ended; its host functions trap.
	stopped atomic.Bool
}

func newPipe(size int) *pipe {
	p := &pipe{up: ring{buf: make([]byte, size)}, down: ring{buf: make([]byte, size)}}
	p.readable.L, p.writable.L = &p.mu, &p.mu
	return p
}

// guestWrite is stream_write: it takes what fits of b, and -1 once
// either end closed.
func (p *pipe) guestWrite(b []byte) int32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.guestClosed || p.hostClosed {
		return -1
	}
	n := p.up.write(b)
	if n > 0 {
		p.readable.Signal()
	}
	return int32(n)
}

// guestRead is stream_read: it copies what the host wrote into b, and
// -1 once the stream is closed and nothing is left to read (what the
// host wrote before closing, a refusal say, is read first).
func (p *pipe) guestRead(b []byte) int32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.guestClosed {
		return -1
	}
	n := p.down.read(b)
	switch {
	case n > 0:
		p.writable.Signal()
	case p.hostClosed:
		return -1
	}
	return int32(n)
}

// closeGuest is stream_close, and what the host does when the guest
// exits: Serve reads the end of the stream.
func (p *pipe) closeGuest() {
	p.mu.Lock()
	p.guestClosed = true
	p.readable.Broadcast()
	p.writable.Broadcast()
	p.mu.Unlock()
}

// stop makes the guest's next host function call trap, and ends the
// stream for both sides.
func (p *pipe) stop() {
	p.stopped.Store(true)
	p.closeGuest()
}

// hostEnd is the pipe as Serve's stream.
type hostEnd struct{ *pipe }

// Read blocks until the guest wrote something; io.EOF once the guest
// closed the stream and everything it wrote was read.
func (h hostEnd) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	p := h.pipe
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.up.n == 0 {
		switch {
		case p.hostClosed:
			return 0, net.ErrClosed
		case p.guestClosed:
			return 0, io.EOF
		}
		p.readable.Wait()
	}
	return p.up.read(b), nil
}

// Write blocks until all of b is queued for the guest (or an end closed).
func (h hostEnd) Write(b []byte) (int, error) {
	p := h.pipe
	p.mu.Lock()
	defer p.mu.Unlock()
	done := 0
	for done < len(b) {
		switch {
		case p.hostClosed:
			return done, net.ErrClosed
		case p.guestClosed:
			return done, io.ErrClosedPipe
		}
		n := p.down.write(b[done:])
		if n == 0 {
			p.writable.Wait()
		}
		done += n
	}
	return done, nil
}

// Close ends the stream from the host's side: the guest reads what is
// left, then the end.
func (h hostEnd) Close() error {
	p := h.pipe
	p.mu.Lock()
	p.hostClosed = true
	p.readable.Broadcast()
	p.writable.Broadcast()
	p.mu.Unlock()
	return nil
}

// ring is a fixed-size byte queue.
type ring struct {
	buf  []byte
	r, n int // first byte, bytes held
}

// write appends what fits of b and returns how much that was.
func (q *ring) write(b []byte) int {
	total := 0
	for len(b) > 0 && q.n < len(q.buf) {
		w := (q.r + q.n) % len(q.buf)
		end := len(q.buf)
		if w < q.r {
			end = q.r
		}
		c := copy(q.buf[w:end], b)
		q.n += c
		total += c
		b = b[c:]
	}
	return total
}

// read takes up to len(b) bytes and returns how many.
func (q *ring) read(b []byte) int {
	total := 0
	for len(b) > 0 && q.n > 0 {
		end := min(q.r+q.n, len(q.buf))
		c := copy(b, q.buf[q.r:end])
		q.r = (q.r + c) % len(q.buf)
		q.n -= c
		total += c
		b = b[c:]
	}
	return total
}
