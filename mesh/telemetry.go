package mesh

import (
	"context"
	"sync"
	"time"

	"github.com/meshmpi/meshmpi/peer"
	"github.com/meshmpi/meshmpi/signaling"
)

// TelemetrySource is what a rank's reporter sends besides the state of
// its links, which the mesh knows: the rank's operations and console.
// The reporter calls its methods from one goroutine at a time.
type TelemetrySource interface {
	// TakeOps appends to dst the operations completed since the last
	// call and returns how many were recorded but dropped meanwhile.
	TakeOps(dst []signaling.OpEvent) ([]signaling.OpEvent, int)
	// TakeConsole appends to dst the console lines written since the
	// last call.
	TakeConsole(dst []signaling.ConsoleLine) []signaling.ConsoleLine
}

// Telemetry configures a mesh's reporter (StartTelemetry).
type Telemetry struct {
	// Interval is the time between reports.
	Interval time.Duration
	// Source gives the rank's operations and console lines; nil reports
	// the links alone.
	Source TelemetrySource
}

// reporter sends a rank's signaling.Telemetry every interval: its
// operations, its console lines and the links whose state changed since
// the last report. A report with nothing in it is not sent.
type reporter struct {
	m   *Mesh
	cfg Telemetry

	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once

	// the reporter goroutine's own buffers, reused report after report
	ops     []signaling.OpEvent
	console []signaling.ConsoleLine
	links   []signaling.LinkStat
	// last is what was last sent of the link to each rank, its Peer
	// rank+1 (0: not sent since it opened)
	last []signaling.LinkStat
}

// StartTelemetry starts reporting to the signaling server every
// t.Interval (call it before Start: the links connected before are not
// reported) until Leave (which sends the last report before the word
// that the rank leaves), Abort or Close (which send it too, within a
// short wait). A mesh reports at most once: later calls do nothing.
func (m *Mesh) StartTelemetry(t Telemetry) {
	if t.Interval <= 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tel != nil || m.stopped {
		return
	}
	r := &reporter{m: m, cfg: t, stop: make(chan struct{}), done: make(chan struct{}), last: make([]signaling.LinkStat, m.size)}
	m.tel = r
	m.opened = make([]peer.Link, m.size) // filled as links connect: Start comes after
	go r.run()
}

// stopTelemetry ends the reporter, if any, after its last report.
func (m *Mesh) stopTelemetry() {
	m.mu.Lock()
	r := m.tel
	m.mu.Unlock()
	if r == nil {
		return
	}
	r.stopOnce.Do(func() { close(r.stop) })
	<-r.done
}

func (r *reporter) run() {
	t := time.NewTicker(r.cfg.Interval)
	for last := false; !last; {
		select {
		case <-t.C:
		case <-r.stop:
			last = true
		}
		// bounded, the last one too: Leave waits for it (once the
		// signaling connection is gone, a send fails at once)
		ctx, cancel := context.WithTimeout(r.m.ctx, abortNotice)
		r.report(ctx)
		cancel()
	}
	t.Stop()
	close(r.done)
}

// report sends what happened since the last report, in as many messages
// as the server's bounds need.
func (r *reporter) report(ctx context.Context) {
	dropped := 0
	r.ops, r.console = r.ops[:0], r.console[:0]
	if src := r.cfg.Source; src != nil {
		r.ops, dropped = src.TakeOps(r.ops)
		r.console = src.TakeConsole(r.console)
	}
	r.links = r.linkStats(ctx, r.links[:0])
	ops, links, console := r.ops, r.links, r.console
	limit := 64 << 10
	if l := r.m.client.Welcome().Limits; l != nil && l.MessageBytes > 0 {
		limit = l.MessageBytes
	}
	for len(ops)+len(links)+len(console) > 0 || dropped > 0 {
		msg := fill(&signaling.Telemetry{Now: time.Now().UnixMicro(), Dropped: dropped}, ops, links, console, limit)
		for sizeBound(msg) > limit {
			data, err := signaling.Encode(msg)
			if err != nil {
				return // a source broke the message's rules: nothing of it can go
			}
			if len(data) <= limit || len(msg.Ops)+len(msg.Links)+len(msg.Console) <= 1 {
				break
			}
			// the estimate was short: halve the message's largest part,
			// the rest goes in the next
			switch n := max(len(msg.Ops), len(msg.Links), len(msg.Console)); n {
			case len(msg.Ops):
				msg.Ops = msg.Ops[:n/2]
			case len(msg.Links):
				msg.Links = msg.Links[:n/2]
			default:
				msg.Console = msg.Console[:n/2]
			}
		}
		if err := r.m.client.Send(ctx, msg); err != nil {
			return // the connection is going: so is the job's view of this rank
		}
		ops, links, console = ops[len(msg.Ops):], links[len(msg.Links):], console[len(msg.Console):]
		dropped = 0
	}
	clear(r.ops) // let the strings go
	clear(r.console)
}

// fill gives msg the first of ops, links and console that its encoding
// should hold within limit bytes, by the texts' lengths (each message
// takes one item at least).
func fill(msg *signaling.Telemetry, ops []signaling.OpEvent, links []signaling.LinkStat, console []signaling.ConsoleLine, limit int) *signaling.Telemetry {
	const num = 24 // a number and its key
	size := 64
	n := 0
	for n < len(ops) && n < signaling.MaxTelemetryOps {
		o := &ops[n]
		if size += 64 + 5*num + len(o.Op) + len(o.Comm) + len(o.Err); size > limit && n > 0 {
			break
		}
		n++
	}
	msg.Ops = ops[:n]
	n = 0
	for n < len(links) && n < signaling.MaxTelemetryLinks {
		if size += 48 + 6*num + 2*16; size > limit && n+len(msg.Ops) > 0 {
			break
		}
		n++
	}
	msg.Links = links[:n]
	n = 0
	for n < len(console) && n < signaling.MaxTelemetryConsole {
		if size += 32 + len(console[n].Text); size > limit && n+len(msg.Ops)+len(msg.Links) > 0 {
			break
		}
		n++
	}
	msg.Console = console[:n]
	return msg
}

// sizeBound bounds the length of msg's encoding (JSON escapes a byte in
// at most 6), so that most reports are encoded once, by the client.
func sizeBound(msg *signaling.Telemetry) int {
	const num = 24 // a number and its key
	n := 64
	for i := range msg.Ops {
		o := &msg.Ops[i]
		n += 64 + 5*num + 6*(len(o.Op)+len(o.Comm)+len(o.Err))
	}
	n += len(msg.Links) * (48 + 6*num + 6*16)
	for _, c := range msg.Console {
		n += 32 + 6*len(c.Text)
	}
	return n
}

// linkStats appends the state of this rank's links that changed since
// the last report: candidate types, round trip, bytes each way. A link
// that closed since is reported once more if its counts moved.
func (r *reporter) linkStats(ctx context.Context, dst []signaling.LinkStat) []signaling.LinkStat {
	m := r.m
	for rank := range r.last {
		m.mu.Lock()
		l := m.opened[rank]
		m.mu.Unlock()
		var (
			sent, received int64
			closed         bool
		)
		if c, ok := l.(peer.Counter); ok {
			sent, received, closed = c.Counts()
		} else if pr, ok := l.(peer.PathReporter); !ok || !sameHostLink(pr.Path().Link) {
			continue // no link (or one that does not count)
		} // a memory link counts nothing (its hot path stays bare): its kind alone
		prev := r.last[rank] // Peer is 0 until the link was reported
		if closed {
			// reported now with its last counts, then forgotten
			m.mu.Lock()
			m.opened[rank] = nil
			m.mu.Unlock()
			r.last[rank] = signaling.LinkStat{}
			if prev.Peer == rank+1 && prev.Sent == sent && prev.Received == received {
				continue
			}
		}
		var path peer.Path
		pr, canRefresh := l.(peer.PathRefresher)
		switch {
		case closed && prev.Peer != 0: // its path as last reported (below)
		case canRefresh && !closed:
			path = pr.RefreshPath(ctx)
		default:
			if p, ok := l.(peer.PathReporter); ok {
				path = p.Path()
			}
		}
		if path.Local == "" && sameHostLink(path.Link) {
			path.Local, path.Remote = path.Link, path.Link // no ICE: the link's kind
		}
		st := signaling.LinkStat{Peer: rank, Local: candidateType(path.Local), Remote: candidateType(path.Remote),
			RTTMicros: int(path.RTT.Microseconds()), Sent: sent, Received: received}
		if closed && prev.Peer != 0 {
			st.Local, st.Remote, st.RTTMicros = prev.Local, prev.Remote, prev.RTTMicros
		}
		if prev.Peer != rank+1 || st.Local != prev.Local || st.Remote != prev.Remote || st.RTTMicros != prev.RTTMicros ||
			st.Sent != prev.Sent || st.Received != prev.Received {
			dst = append(dst, st)
			if !closed {
				st.Peer = rank + 1 // the mark of a reported link
				r.last[rank] = st
			}
		}
	}
	return dst
}

// candidateType is an ICE candidate type as telemetry carries it, "" for
// one it does not know.
func candidateType(t string) string {
	switch t {
	case "host", "srflx", "prflx", "relay", "memory", "shm", "unix":
		return t
	}
	return ""
}
