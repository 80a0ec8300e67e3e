//go:build !js && !wasip1

package host

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/meshmpi/meshmpi/wasm"
)

// Why the guest's writes are read on its own goroutine.
//
// A guest's message to the host (a frame for a remote rank, its credit)
// left the guest through wazero's fd_write into the stream's socket, and
// the relay's reader, parked in the Go netpoller on the host's end, woke
// on another thread to take it: a thread wake-up per message, which on
// the loaded 2-core development machine cost 10-50 us of every 8-byte
// round trip in BenchmarkRelay (the trace shows the reader waking 14 us
// after the guest's write began, in quiet rounds). Now the guest's
// fd_write, once wazero wrote the bytes, reads them at the host's end and
// hands them on (streamReader.drain), on the guest's goroutine: the
// bytes are in the socket by then, as loopback TCP queues them at the
// receiver before write returns. The reader goroutine stays as before
// for everything else (bytes that arrived later, the end of the stream,
// a guest that never calls fd_write, a stream that is no socket) and
// finds the socket empty when the guest took its bytes already. A
// one-consumer lock keeps the two from handling messages at once, so
// they stay in stream order; the guest's side never waits for it (the
// reader, which holds it, reads until the socket is empty).

// Why the guest's writes are taken from its memory.
//
// Read from the socket, every byte a guest sends crossed the kernel
// twice: wazero's fd_write copied it from the guest's memory into the
// socket, and the relay's read copied it out again, two system calls and
// two copies per frame, most of the host's time on a 1 MiB message. Now
// the relay's own fd_write (poll.go's guestWrite), once the relay reads
// the stream (after the welcome), hands the guest's iovecs to take,
// which handles the messages in them straight from the guest's memory
// (a frame for a memory link is copied once, into the other guest's
// queue) and keeps only the beginning of a message the write cut in its
// buffer. Ordering holds: take first drains the socket, where writes
// before it, or those made while the reader goroutine held the lock
// (take does not wait for it: the guest's bytes then go through the
// socket, as before), still are.

// streamReader reads the guest's messages from a socket without
// blocking, for the reader goroutine (run) and the guest's fd_write
// (drain) alike.
type streamReader struct {
	rc     syscall.RawConn
	handle func(*wasm.Msg) error

	mu   sync.Mutex // one consumer at a time
	buf  []byte     // the bytes read and not yet handled are buf[r:w]
	r, w int
	// err ends the stream for good: its end, a read error, the first
	// error handle returned
	err error

	// inSocket says the guest may have written to the socket since take
	// last drained it: before take first ran, or a write take left to
	// wazero (guestWrite sets it first)
	inSocket atomic.Bool

	// wake makes the reader goroutine look at err (the stream's read
	// deadline, moved to now): drain may end the stream while it waits
	wake func()

	// the raw calls' state and functions, made once: the hot path
	// allocates nothing
	n         int
	rerr      error
	readFn    func(fd uintptr) bool
	controlFn func(fd uintptr)
}

// errAgain says the socket is empty for now.
var errAgain = errors.New("no bytes to read yet")

// newStreamReader reads from rc after the bytes a previous reader
// buffered (pre, copied).
func newStreamReader(rc syscall.RawConn, pre []byte, handle func(*wasm.Msg) error, wake func()) *streamReader {
	s := &streamReader{rc: rc, handle: handle, wake: wake, buf: make([]byte, 4+wasm.MaxMessage+64<<10)}
	s.w = copy(s.buf, pre)
	s.inSocket.Store(true)
	s.readFn = func(fd uintptr) bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.consume(fd) != errAgain
	}
	s.controlFn = func(fd uintptr) { s.consume(fd) }
	return s
}

// run is the reader goroutine: it handles messages as they come until
// the stream ends, and returns why (io.EOF at its end).
func (s *streamReader) run() error {
	for {
		err := s.rc.Read(s.readFn)
		s.mu.Lock()
		serr := s.err
		s.mu.Unlock()
		switch {
		case serr != nil:
			return serr
		case err != nil:
			return err
		}
	}
}

// drain handles what the socket holds now, unless the reader goroutine
// is at it (it then reads until the socket is empty itself). It never
// waits.
func (s *streamReader) drain() {
	if !s.mu.TryLock() {
		return
	}
	if s.err != nil {
		s.mu.Unlock()
		return
	}
	// Control, unlike Read, takes no lock of the descriptor's, which the
	// reader goroutine holds while it waits; it keeps the descriptor open
	s.rc.Control(s.controlFn)
	ended := s.err != nil
	s.mu.Unlock()
	if ended {
		s.wake() // the reader goroutine returns it
	}
}

// endAfterExit ends the stream of a guest that exited, without waiting
// for the end of the stream: wazero (v1.12) closes no socket of a guest
// that exits without closing it, as a program that calls os.Exit does,
// so the end never came and the relay waited out its drain (guestDrain,
// 5 s) before the job heard that the rank had left. Nothing the guest
// wrote can be on its way by now: its fd_write returned, and loopback
// TCP queues the bytes at the receiver before write returns (as drain
// relies on). So what the socket holds now is the rest of the stream:
// this handles it, ends the stream there (io.EOF; the beginning of a
// message the guest never finished is dropped with it) and wakes the
// reader goroutine to return.
func (s *streamReader) endAfterExit() {
	s.mu.Lock()
	if s.err == nil {
		s.rc.Control(s.controlFn) // as drain: no descriptor lock
	}
	if s.err == nil {
		s.err = io.EOF
	}
	s.mu.Unlock()
	s.wake()
}

// consume handles the buffered messages and reads more until the socket
// is empty (errAgain) or the stream ends (s.err, returned). s.mu held.
func (s *streamReader) consume(fd uintptr) error {
	for s.err == nil {
		if err := s.handleBuffered(); err != nil {
			s.err = err
			break
		}
		if s.r > 0 { // keep the partial message at the front
			s.w = copy(s.buf, s.buf[s.r:s.w])
			s.r = 0
		}
		s.n, s.rerr = 0, nil
		s.readOnce(fd)
		switch {
		case s.rerr == syscall.EAGAIN || s.rerr == syscall.EINTR:
			return errAgain
		case s.rerr != nil:
			s.err = s.rerr
		case s.n == 0:
			s.err = io.EOF
			if s.w > 0 {
				s.err = fmt.Errorf("%w: stream ends inside a message", wasm.ErrProtocol)
			}
		default:
			s.w += s.n
		}
	}
	return s.err
}

// readOnce is one non-blocking read into the buffer's free space.
func (s *streamReader) readOnce(fd uintptr) {
	s.n, s.rerr = fdRead(fd, s.buf[s.w:])
	if s.n < 0 {
		s.n = 0
	}
}

// handleBuffered handles every whole message in buf[r:w].
func (s *streamReader) handleBuffered() error {
	n, err := s.handleIn(s.buf[s.r:s.w])
	s.r += n
	if s.r == s.w {
		s.r, s.w = 0, 0
	}
	return err
}

// handleIn handles the whole messages at the start of b and returns the
// bytes they took; what is left is the beginning of a message.
func (s *streamReader) handleIn(b []byte) (int, error) {
	done := 0
	for len(b)-done >= 4 {
		n, err := messageLen(b[done:])
		if err != nil {
			return done, err
		}
		if len(b)-done < 4+n {
			break
		}
		body := b[done+4 : done+4+n]
		done += 4 + n
		m, err := wasm.Decode(wasm.MsgType(body[0]), body[1:])
		if err == nil {
			err = s.handle(&m)
		}
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// messageLen reads a message's length prefix, at least 4 bytes at b.
func messageLen(b []byte) (int, error) {
	n := int(binary.LittleEndian.Uint32(b))
	if n < 1 || n > wasm.MaxMessage {
		return 0, fmt.Errorf("%w: message length %d (want 1 … %d)", wasm.ErrProtocol, n, wasm.MaxMessage)
	}
	return n, nil
}

// take handles what the guest's fd_write hands its stream, the iovecs
// in the guest's memory, in place of the socket (see "Why the guest's
// writes are taken from its memory"), and reports whether it did: not
// while the reader goroutine handles messages, nor once the stream
// ended; the guest's bytes then go through the socket as before. It
// never waits. The frames handled alias the guest's memory, which
// stands still while its fd_write runs.
func (s *streamReader) take(iovs [][]byte) bool {
	if !s.mu.TryLock() {
		return false
	}
	// first whatever earlier writes left in the socket, in stream order
	if s.err == nil && s.inSocket.Load() {
		s.inSocket.Store(false)
		s.rc.Control(s.controlFn)
	}
	if s.err != nil {
		s.mu.Unlock()
		s.wake() // the reader goroutine returns it; the socket write fails
		return false
	}
	if !s.feedData(iovs) {
		for _, p := range iovs {
			s.feed(p)
		}
	}
	ended := s.err != nil
	s.mu.Unlock()
	if ended {
		s.wake()
	}
	return true
}

// feedData handles a write of two iovecs that are one data message, its
// head and its payload (the guest's two-buffer write of a large frame,
// wasm's writev_wasip1.go): the payload goes on from the guest's memory
// as it is, not joined to its head in the buffer first. It reports
// false, having done nothing, for any other write. s.mu held; the
// socket was drained first.
func (s *streamReader) feedData(iovs [][]byte) bool {
	if len(iovs) != 2 || s.w != s.r || s.err != nil {
		return false
	}
	head, payload := iovs[0], iovs[1]
	if len(head) != 4+wasm.DataHead || len(payload) == 0 || wasm.MsgType(head[4]) != wasm.MsgData {
		return false
	}
	if n, err := messageLen(head); err != nil || 4+n != len(head)+len(payload) {
		return false
	}
	m, err := wasm.Decode(wasm.MsgData, head[5:])
	if err == nil {
		m.Payload = payload
		err = s.handle(&m)
	}
	s.err = err
	return true
}

// feed handles bytes of the stream that did not come through the
// socket: whole messages straight from p, a message begun in the
// buffer completed from p, the beginning of one kept in the buffer.
// s.mu held; the socket was drained first.
func (s *streamReader) feed(p []byte) {
	for len(p) > 0 && s.err == nil {
		if s.w == s.r {
			n, err := s.handleIn(p)
			if err != nil {
				s.err = err
				return
			}
			// less than a message is left, which the buffer holds
			s.r, s.w = 0, copy(s.buf, p[n:])
			return
		}
		if s.r > 0 {
			s.w = copy(s.buf, s.buf[s.r:s.w])
			s.r = 0
		}
		want := 4 - s.w // the rest of the length, then of the message
		if s.w >= 4 {
			n, err := messageLen(s.buf)
			if err != nil {
				s.err = err
				return
			}
			want = 4 + n - s.w
		}
		k := copy(s.buf[s.w:s.w+min(want, len(p))], p)
		s.w += k
		p = p[k:]
		if err := s.handleBuffered(); err != nil {
			s.err = err
		}
	}
}
