//go:build !js && !wasip1

package host

import (
	"io"
	"sync"
	"sync/atomic"

	"github.com/meshmpi/meshmpi/mesh"
	"github.com/meshmpi/meshmpi/signaling"
	"github.com/meshmpi/meshmpi/wasm"
)

// hostTelemetry is what a host reports for its guest rank when the job's
// telemetry is on (mesh.TelemetrySource): the operations the guest sends
// in telemetry messages, kept up to the job's bound per interval, and the
// guest's console as the host sees it. The mesh adds the links, which
// are the host's.
type hostTelemetry struct {
	mu      sync.Mutex
	ops     []signaling.OpEvent
	max     int
	dropped int
	console *mesh.Console // nil: the host does not see the guest's output
}

// add takes a guest's telemetry message. An operation telemetry cannot
// carry (a name that is not one) is dropped and counted.
func (t *hostTelemetry) add(m *wasm.Msg) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dropped += m.Dropped
	for _, op := range m.Ops {
		if len(t.ops) == t.max || !opName(op.Op) {
			t.dropped++
			continue
		}
		e := signaling.OpEvent{Op: op.Op, Comm: signaling.ClipText(op.Comm, signaling.MaxCommNameLen), Bytes: op.Bytes,
			Start: op.Start, End: op.End, Err: signaling.ClipText(op.Err, signaling.MaxTextLen)}
		if op.Peer >= 0 {
			p := op.Peer
			e.Peer = &p
		}
		t.ops = append(t.ops, e)
	}
}

// opName reports whether s is an operation name as telemetry has them:
// 1 to 32 bytes of [a-z0-9_].
func opName(s string) bool {
	if s == "" || len(s) > signaling.MaxOpNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// TakeOps implements mesh.TelemetrySource.
func (t *hostTelemetry) TakeOps(dst []signaling.OpEvent) ([]signaling.OpEvent, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	dst = append(dst, t.ops...)
	clear(t.ops)
	dropped := t.dropped
	t.ops, t.dropped = t.ops[:0], 0
	return dst, dropped
}

// TakeConsole implements mesh.TelemetrySource.
func (t *hostTelemetry) TakeConsole(dst []signaling.ConsoleLine) []signaling.ConsoleLine {
	if t.console == nil {
		return dst
	}
	return t.console.Take(dst)
}

// consoleLines bounds the guest's console lines kept between reports.
const consoleLines = 1024

// consoleTap passes a guest's standard output and error on to where the
// launcher wants them and, once the relay found the job's telemetry on
// (start), keeps their lines for the reporter too.
type consoleTap struct {
	c        atomic.Pointer[mesh.Console]
	out, err atomic.Pointer[mesh.ConsoleWriter]
}

// start begins keeping lines and returns the console they go to.
func (t *consoleTap) start() *mesh.Console {
	if t == nil {
		return nil
	}
	c := mesh.NewConsole(consoleLines)
	t.out.Store(c.Writer(signaling.StreamOut))
	t.err.Store(c.Writer(signaling.StreamErr))
	t.c.Store(c)
	return c
}

// writer returns the tap of one stream in front of real (nil discards).
func (t *consoleTap) writer(real io.Writer, stream string) io.Writer {
	w := &t.out
	if stream == signaling.StreamErr {
		w = &t.err
	}
	return tapWriter{real: real, line: w}
}

type tapWriter struct {
	real io.Writer
	line *atomic.Pointer[mesh.ConsoleWriter]
}

func (w tapWriter) Write(b []byte) (int, error) {
	if l := w.line.Load(); l != nil {
		_, _ = l.Write(b)
	}
	if w.real == nil {
		return len(b), nil
	}
	return w.real.Write(b)
}
