//go:build wasip1

package wasm

import (
	"context"
	"io"
	"net"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"
)

// The meshmpi host functions, call interface version CallsVersion (the
// package doc's "Host functions" section is their contract). None of
// them blocks: a blocking host call would freeze every goroutine of the
// guest.

// hostStreamWrite offers the host n bytes at p; it returns how many the
// host took (0: none fit now), or -1 once the stream is closed.
//
//go:wasmimport meshmpi stream_write
//go:noescape
func hostStreamWrite(p unsafe.Pointer, n uint32) int32

// hostStreamRead copies up to n bytes the host has for the guest to p;
// it returns how many (0: none yet), or -1 once the stream is closed and
// drained.
//
//go:wasmimport meshmpi stream_read
//go:noescape
func hostStreamRead(p unsafe.Pointer, n uint32) int32

// hostStreamClose closes the stream: the host leaves the job for the
// guest.
//
//go:wasmimport meshmpi stream_close
func hostStreamClose()

// Polling back-off of the call stream. After the stream moved bytes the
// guest polls again at once, yielding to its other goroutines in between,
// for spinWindow: the answer to what the rank just sent usually arrives
// within it, and a runtime's sleeps can be far coarser than a round trip
// (wasmtime's last at least a millisecond). Then it sleeps between polls,
// doubling from minPollSleep to maxPollSleep. time.Sleep parks the
// goroutine: the other goroutines run, and when none can, the Go runtime
// waits in poll_oneoff, so an idle rank costs a wake-up per
// maxPollSleep, not a core.
const (
	spinWindow   = 500 * time.Microsecond
	spinCheck    = 32 // polls between looks at the clock while spinning
	minPollSleep = 20 * time.Microsecond
	maxPollSleep = time.Millisecond
)

// joinCallsEnv joins the job through the meshmpi host functions when env
// (meshmpi.EnvHost's value) asks for them; ok says it did.
func joinCallsEnv(ctx context.Context, env string) (g *Guest, ok bool, err error) {
	calls, err := isCallsEnv(env)
	if !calls || err != nil {
		return nil, calls, err
	}
	g, err = Connect(ctx, &callStream{}, [KeyLen]byte{})
	return g, true, err
}

// callStream is the guest's end of the stream over the host functions:
// Read and Write poll them with back-off, so only the calling goroutine
// waits, never the guest.
type callStream struct {
	closed atomic.Bool
	// sent counts the writes that moved bytes: a reader that sees it
	// change goes back to polling quickly, since an answer is likely.
	sent atomic.Uint32
}

// backoff is one wait's polling state.
type backoff struct {
	polls int       // since the stream was last active
	idle  time.Time // when it was, as far as this wait knows; zero: not looked yet
	sleep time.Duration
	sent  uint32
}

// reset starts the spinning again: the stream moved bytes.
func (b *backoff) reset() { b.polls, b.idle, b.sleep = 0, time.Time{}, 0 }

// wait waits before the next poll: yields while the stream was active
// within spinWindow, then sleeps that grow.
func (b *backoff) wait(s *callStream) {
	if sent := s.sent.Load(); sent != b.sent {
		b.sent = sent
		b.reset()
	}
	if b.sleep == 0 {
		b.polls++
		switch {
		case b.polls == 1:
			b.idle = time.Now()
		case b.polls%spinCheck == 0 && time.Since(b.idle) > spinWindow:
			b.sleep = minPollSleep
		}
		if b.sleep == 0 {
			runtime.Gosched()
			return
		}
	}
	time.Sleep(b.sleep)
	b.sleep = min(2*b.sleep, maxPollSleep)
}

func (s *callStream) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	b := backoff{sent: s.sent.Load()}
	for {
		if s.closed.Load() {
			return 0, net.ErrClosed
		}
		n := hostStreamRead(unsafe.Pointer(unsafe.SliceData(p)), uint32(len(p)))
		switch {
		case n > 0:
			return int(n), nil
		case n < 0:
			return 0, io.EOF
		}
		b.wait(s)
	}
}

func (s *callStream) Write(p []byte) (int, error) {
	var b backoff
	done := 0
	for done < len(p) {
		if s.closed.Load() {
			return done, net.ErrClosed
		}
		rest := p[done:]
		n := hostStreamWrite(unsafe.Pointer(unsafe.SliceData(rest)), uint32(len(rest)))
		switch {
		case n > 0:
			done += int(n)
			b.reset()
		case n < 0:
			return done, io.ErrClosedPipe
		default:
			b.wait(s)
		}
	}
	s.sent.Add(1)
	return done, nil
}

// Close closes the stream once; a Read polling in another goroutine
// returns at its next poll.
func (s *callStream) Close() error {
	if s.closed.CompareAndSwap(false, true) {
		hostStreamClose()
	}
	return nil
}
