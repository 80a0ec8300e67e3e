//go:build unix

package peer

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
)

// The unix-socket link is the same-host link where shared memory is not
// to be had (no /dev/shm, a mapping refused): frames on a stream socket,
// each a uint32 length (little endian) and the frame; a length of 0 is the
// orderly close. A writer goroutine drains the frames WriteFrame queued,
// so WriteFrame never blocks on the socket; the queue's size is the
// link's buffered amount.

const (
	// unixMaxFrame is a unix link's largest frame.
	unixMaxFrame = 1 << 20
	// unixHighWater and unixLowWater bound the bytes queued for the
	// writer: above high WriteFrame reports not ready, below low the link
	// calls HandleWritable.
	unixHighWater = 4 << 20
	unixLowWater  = 1 << 20
)

// unixLink is one end of a unix-socket link.
type unixLink struct {
	name     string
	conn     net.Conn
	maxFrame int

	mu      sync.Mutex
	cond    *sync.Cond // the writer waits on it for queued bytes or close
	queue   []byte     // encoded frames waiting for the writer (under mu)
	spare   []byte     // the writer's last buffer, for reuse (under mu)
	closed  bool       // Close was called (under mu)
	blocked bool       // WriteFrame reported not ready (under mu)
	err     error      // the socket failed (under mu)

	h              LinkHandler
	lost           atomic.Bool
	sent, received atomic.Int64
}

// newUnixLink makes a link over conn, a connected stream socket to a
// process of this host that speaks the same framing. It owns conn.
func newUnixLink(name string, conn net.Conn, maxFrame int) *unixLink {
	l := &unixLink{name: name, conn: conn, maxFrame: unixMaxFrame}
	if maxFrame > HeaderLen && maxFrame < unixMaxFrame {
		l.maxFrame = maxFrame
	}
	l.cond = sync.NewCond(&l.mu)
	go l.write()
	return l
}

// Bind implements Link: the reader starts.
func (l *unixLink) Bind(h LinkHandler) {
	l.h = h
	go l.read()
}

// MaxFrame implements Link.
func (l *unixLink) MaxFrame() int { return l.maxFrame }

// WriteFrame implements Link.
func (l *unixLink) WriteFrame(hdr, payload []byte) (bool, error) {
	n := len(hdr) + len(payload)
	if n > l.maxFrame {
		return false, fmt.Errorf("%s: %d-byte frame exceeds %d", l.name, n, l.maxFrame)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		return false, ErrClosed
	case l.err != nil:
		return false, l.err
	}
	l.queue = binary.LittleEndian.AppendUint32(l.queue, uint32(n))
	l.queue = append(append(l.queue, hdr...), payload...)
	l.sent.Add(int64(n))
	l.cond.Signal()
	if len(l.queue) > unixHighWater {
		l.blocked = true
		return false, nil
	}
	return true, nil
}

// write sends the queued frames until the link closes or the socket
// fails; at the close it sends what was queued, then the close mark.
func (l *unixLink) write() {
	l.mu.Lock()
	for {
		for len(l.queue) == 0 && !l.closed && l.err == nil {
			l.cond.Wait()
		}
		if l.err != nil {
			l.mu.Unlock()
			return
		}
		if len(l.queue) == 0 && l.closed {
			l.mu.Unlock()
			_, _ = l.conn.Write([]byte{0, 0, 0, 0})
			_ = l.conn.Close()
			return
		}
		buf := l.queue
		l.queue, l.spare = l.spare[:0], nil
		l.mu.Unlock()
		_, err := l.conn.Write(buf)
		l.mu.Lock()
		if l.spare == nil && cap(buf) <= unixHighWater*2 {
			l.spare = buf
		}
		if err != nil && l.err == nil {
			l.err = Failure(l.name, fmt.Errorf("write: %w", err))
		}
		if l.blocked && len(l.queue) < unixLowWater && !l.closed && l.err == nil {
			l.blocked = false
			l.mu.Unlock()
			l.h.HandleWritable()
			l.mu.Lock()
		}
	}
}

// read hands the socket's frames to the handler until the close mark,
// the socket's end (the remote process died) or a malformed frame.
func (l *unixLink) read() {
	buf := make([]byte, 4+l.maxFrame)
	var err error
	orderly := false
	for {
		if _, err = io.ReadFull(l.conn, buf[:4]); err != nil {
			break
		}
		n := binary.LittleEndian.Uint32(buf)
		if n == 0 {
			err, orderly = fmt.Errorf("%s: closed by its remote end", l.name), true
			break
		}
		if n < HeaderLen || int(n) > l.maxFrame {
			err = fmt.Errorf("%s: %w: frame of %d bytes", l.name, ErrFrame, n)
			break
		}
		if _, err = io.ReadFull(l.conn, buf[:n]); err != nil {
			break
		}
		l.received.Add(int64(n))
		l.h.HandleFrame(buf[:HeaderLen:HeaderLen], buf[HeaderLen:n])
	}
	l.mu.Lock()
	closed := l.closed
	switch {
	case l.err != nil:
	case orderly:
		l.err = err
	default:
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			err = fmt.Errorf("the remote process is gone (%w)", err)
		}
		l.err = Failure(l.name, err)
	}
	l.cond.Signal()
	l.mu.Unlock()
	l.lost.Store(true)
	if !closed {
		l.h.HandleClose(l.err)
	}
	_ = l.conn.Close()
}

// Close implements Link: queued frames go first, then the close mark.
func (l *unixLink) Close() error {
	l.mu.Lock()
	l.closed = true
	l.cond.Signal()
	l.mu.Unlock()
	return nil
}

// Path implements PathReporter.
func (l *unixLink) Path() Path { return Path{Link: "unix"} }

// Counts implements Counter.
func (l *unixLink) Counts() (sent, received int64, closed bool) {
	l.mu.Lock()
	closed = l.closed
	l.mu.Unlock()
	return l.sent.Load(), l.received.Load(), closed || l.lost.Load()
}
