//go:build !wasip1

package meshmpi

import (
	"github.com/meshmpi/meshmpi/mesh"
	"github.com/meshmpi/meshmpi/signaling"
)

// rankTelemetry is what a rank that joined through a signaling server
// reports (mesh.TelemetrySource): its recorder's operations and, when
// the process is the rank (Init, Main), its console.
type rankTelemetry struct {
	_   [0]func() // never compared: no equality function in the binary
	rec *recorder

	console consoleCapture // nil: the process is not the rank (or could not capture)
}

// consoleCapture is a rank's captured console (telemetry_console_*.go).
type consoleCapture interface {
	// take appends the lines written since the last take.
	take(dst []signaling.ConsoleLine) []signaling.ConsoleLine
	// stop ends the capture once what was written before it is taken in.
	stop()
}

// startTelemetry starts m's reporter for the rank of s, whose job's
// telemetry is on, with the process's console when console says the
// process is the rank, and makes the rank's leaving stop it after its
// last report.
func startTelemetry(s *Session, m *mesh.Mesh, tc telemetryConfig, console bool) {
	t := &rankTelemetry{rec: s.p.rec}
	if console {
		t.console = captureConsole()
	}
	m.StartTelemetry(mesh.Telemetry{Interval: tc.withDefaults().interval, Source: t})
	s.p.leave = func() {
		t.stopConsole() // its last lines go in the reporter's last report
		m.Leave()
	}
}

// TakeOps implements mesh.TelemetrySource.
func (t *rankTelemetry) TakeOps(dst []signaling.OpEvent) ([]signaling.OpEvent, int) {
	recs, dropped := t.rec.take()
	for i := range recs {
		dst = append(dst, opEvent(&recs[i]))
	}
	t.rec.done(recs)
	return dst, dropped
}

// TakeConsole implements mesh.TelemetrySource.
func (t *rankTelemetry) TakeConsole(dst []signaling.ConsoleLine) []signaling.ConsoleLine {
	if t.console == nil {
		return dst
	}
	return t.console.take(dst)
}

// stopConsole stops the capture; the lines captured stay for the last
// report.
func (t *rankTelemetry) stopConsole() {
	if t.console != nil {
		t.console.stop()
	}
}

// opEvent is a record as telemetry carries it.
func opEvent(r *opRecord) signaling.OpEvent {
	e := signaling.OpEvent{Op: r.Op(), Comm: signaling.ClipText(r.CommName(), signaling.MaxCommNameLen),
		Bytes: r.bytes, Start: r.start, End: max(r.end, r.start)}
	if r.peer >= 0 {
		p := int(r.peer)
		e.Peer = &p
	}
	if r.err != nil {
		e.Err = signaling.ClipText(r.err.Error(), signaling.MaxTextLen)
	}
	return e
}
