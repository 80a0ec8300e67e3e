//go:build wasip1

package meshmpi

import (
	"sync"
	"time"

	"github.com/meshmpi/meshmpi/wasm"
)

// guestTelemetry sends a WASI rank's operations to its host every
// interval (the host reports them with the links and the console it sees
// itself), and once more when the rank leaves, before its links close.
type guestTelemetry struct {
	rec *recorder
	g   *wasm.Guest

	mu  sync.Mutex // one send at a time
	ops []wasm.Op

	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

// startTelemetry starts the guest's sending, when its host takes
// telemetry (a host built before it is told nothing).
func startTelemetry(s *Session, g *wasm.Guest, tc telemetryConfig) {
	if !g.OffersTelemetry() {
		return
	}
	t := &guestTelemetry{rec: s.p.rec, g: g, stop: make(chan struct{}), done: make(chan struct{})}
	go t.run(tc.withDefaults().interval)
	// Finalize calls leave before it closes the links: the host has
	// the last operations before it tells the job the rank leaves
	s.p.leave = t.last
}

func (t *guestTelemetry) run(interval time.Duration) {
	defer close(t.done)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			t.send()
		case <-t.stop:
			return
		}
	}
}

// last stops the ticks and sends what is left.
func (t *guestTelemetry) last() {
	t.stopOnce.Do(func() { close(t.stop) })
	<-t.done
	t.send()
}

// send sends the operations recorded since the last send.
func (t *guestTelemetry) send() {
	t.mu.Lock()
	defer t.mu.Unlock()
	recs, dropped := t.rec.take()
	ops := t.ops[:0]
	for i := range recs {
		r := &recs[i]
		ops = append(ops, wasm.Op{Op: r.Op(), Comm: r.CommName(), Peer: int(r.peer), Bytes: r.bytes,
			Start: r.start, End: max(r.end, r.start), Err: r.ErrText()})
	}
	t.rec.done(recs)
	if len(ops) > 0 || dropped > 0 {
		_ = t.g.SendTelemetry(dropped, ops) // a stream that failed fails the rank's links too
	}
	clear(ops)
	t.ops = ops[:0]
}
