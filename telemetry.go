package meshmpi

import (
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/meshmpi/meshmpi/coll"
)

// Job settings of telemetry: what a rank reports to its signaling server
// for dashboards (its operations, its links, its console). Every rank of
// a job receives them identically at join.
const (
	// SettingTelemetry "1" (or "true") makes every rank of the job report
	// to the signaling server. Absent or "0": nothing is recorded or
	// sent, and the operations pay one nil check.
	SettingTelemetry = "telemetry"
	// SettingTelemetryInterval is the time between a rank's reports, in
	// milliseconds: MinTelemetryInterval … MaxTelemetryInterval,
	// DefaultTelemetryInterval when absent.
	SettingTelemetryInterval = "telemetry.interval"
	// SettingTelemetryOps bounds the operations a rank reports per
	// interval (1 … MaxTelemetryOps, DefaultTelemetryOps when absent):
	// operations beyond it are dropped and counted.
	SettingTelemetryOps = "telemetry.ops"
)

// Bounds and defaults of the telemetry settings.
const (
	DefaultTelemetryInterval = 250 * time.Millisecond
	MinTelemetryInterval     = 100 * time.Millisecond
	MaxTelemetryInterval     = 10 * time.Second
	DefaultTelemetryOps      = 256
	MaxTelemetryOps          = 1024
)

// telemetryConfig is a job's telemetry settings; the zero value is off.
type telemetryConfig struct {
	_        [0]func() // never compared: no equality function in the binary
	on       bool
	interval time.Duration
	ops      int
}

// applyTelemetrySetting applies one telemetry setting (k is one of the
// SettingTelemetry keys) to t.
func applyTelemetrySetting(t *telemetryConfig, k, v string) error {
	n, err := strconv.Atoi(v)
	want := "1 or 0"
	switch k {
	case SettingTelemetry:
		if v == "1" || v == "true" || v == "0" || v == "false" || v == "" {
			t.on = v == "1" || v == "true"
			return nil
		}
	case SettingTelemetryInterval:
		if d := time.Duration(n) * time.Millisecond; err == nil && d >= MinTelemetryInterval && d <= MaxTelemetryInterval {
			t.interval = d
			return nil
		}
		want = "milliseconds from 100 to 10000"
	case SettingTelemetryOps:
		if err == nil && n >= 1 && n <= MaxTelemetryOps {
			t.ops = n
			return nil
		}
		want = "1 to 1024 operations"
	}
	return fmt.Errorf("job setting %s=%q: want %s: %w", k, v, want, ErrArg)
}

// withDefaults fills in the settings a job left out.
func (t telemetryConfig) withDefaults() telemetryConfig {
	if t.interval == 0 {
		t.interval = DefaultTelemetryInterval
	}
	if t.ops == 0 {
		t.ops = DefaultTelemetryOps
	}
	return t
}

// opKind is what a recorded operation was: a collective (a coll.Coll) or
// one of the point-to-point kinds after them.
type opKind uint8

const (
	opSend opKind = opKind(coll.NumColls) + iota
	opRecv
)

// name is the operation's name as telemetry reports it: the lower-case
// MPI name without an I or Init prefix.
func (k opKind) name() string {
	switch k {
	case opSend:
		return "send"
	case opRecv:
		return "recv"
	}
	return coll.Coll(k).String()
}

// opRecord is one completed operation as the recorder keeps it: nothing
// in it is formatted until the reporter takes it, so recording allocates
// nothing (the communicator and the error are references the operation
// already held).
type opRecord struct {
	_          [0]func() // never compared: no equality function in the binary
	kind       opKind
	peer       int32 // world rank of a point-to-point operation's peer; -1 for collectives
	comm       *Comm
	bytes      int64
	start, end int64 // unix µs on this rank's clock
	err        error
}

// Op returns the record's operation name.
func (r *opRecord) Op() string { return r.kind.name() }

// CommName returns the name telemetry gives the record's communicator.
func (r *opRecord) CommName() string {
	switch c := r.comm; {
	case c == nil:
		return ""
	case c.name != "":
		return c.name
	default:
		return "comm " + strconv.Itoa(c.id)
	}
}

// ErrText returns the record's error text, "" if it succeeded.
func (r *opRecord) ErrText() string {
	if r.err == nil {
		return ""
	}
	return r.err.Error()
}

// recorder keeps a rank's completed operations until its reporter takes
// them: a fixed buffer of cap records (the job's telemetry.ops), swapped
// with a spare of the same size at each take, so neither recording nor
// taking allocates. Operations that find the buffer full are counted and
// dropped. A nil *recorder records nothing: with telemetry off, the
// operations' only cost is the check for it.
type recorder struct {
	// base is the wall clock at the recorder's start, with its
	// monotonic reading: now reads the monotonic clock alone, one clock
	// reading where time.Now takes two, and never goes back
	base      time.Time
	baseMicro int64

	mu      sync.Mutex
	recs    []opRecord // len is the count recorded since the last take
	spare   []opRecord
	dropped int
}

// newRecorder returns a recorder that keeps up to n operations between
// takes.
func newRecorder(n int) *recorder {
	base := time.Now()
	return &recorder{base: base, baseMicro: base.UnixMicro(), recs: make([]opRecord, 0, n), spare: make([]opRecord, 0, n)}
}

// now is the recorder's clock: unix µs (the wall clock at its start,
// advanced by the monotonic clock).
func (r *recorder) now() int64 { return r.baseMicro + time.Since(r.base).Microseconds() }

// record keeps one operation that ended now.
func (r *recorder) record(kind opKind, c *Comm, peer int, bytes int, start int64, err error) {
	end := r.now()
	r.mu.Lock()
	if len(r.recs) == cap(r.recs) {
		r.dropped++
		r.mu.Unlock()
		return
	}
	r.recs = append(r.recs, opRecord{kind: kind, peer: int32(peer), comm: c, bytes: int64(bytes), start: start, end: end, err: err})
	r.mu.Unlock()
}

// take returns the operations recorded since the last take and how many
// were dropped; give the records back with done once read. Calls of take
// must not overlap (one reporter takes).
func (r *recorder) take() (recs []opRecord, dropped int) {
	r.mu.Lock()
	recs, dropped = r.recs, r.dropped
	r.recs, r.dropped = r.spare[:0], 0
	r.mu.Unlock()
	return recs, dropped
}

// done takes back the records take returned.
func (r *recorder) done(recs []opRecord) {
	clear(recs) // no communicator or error stays reachable from here
	r.spare = recs[:0]
}

// recordDone records a collective request's completion (its run's
// outcome), before result hands its run back.
func (q *collRequest) recordDone(err error) {
	plan := q.run.Plan()
	q.c.p.rec.record(opKind(q.kind), q.c, -1, max(plan.Need[coll.BufSend], plan.Need[coll.BufRecv]), q.t0, err)
	q.t0 = 0
}

// recordDone records a user point-to-point request's completion: n
// bytes moved, from world rank source for a receive.
func (q *p2pRequest) recordDone(n, source int, err error) {
	kind, peer := opSend, q.world
	if q.kind != p2pSend {
		kind = opRecv
		if peer == AnySource {
			peer = source
		}
	}
	q.c.p.rec.record(kind, q.c, peer, n, q.t0, err)
	q.t0 = 0
}

// TelemetrySettings is a job's telemetry settings as its ranks read them
// (SettingTelemetry, SettingTelemetryInterval, SettingTelemetryOps),
// defaults applied.
type TelemetrySettings struct {
	On       bool          // the ranks report
	Interval time.Duration // between reports
	Ops      int           // the most operations reported per interval
}

// ReadTelemetry reads a job's telemetry settings, for a host that
// reports for the rank it runs (package wasm/host); the other settings
// are not looked at.
func ReadTelemetry(settings map[string]string) (TelemetrySettings, error) {
	var t telemetryConfig
	for _, k := range []string{SettingTelemetry, SettingTelemetryInterval, SettingTelemetryOps} {
		if v, ok := settings[k]; ok {
			if err := applyTelemetrySetting(&t, k, v); err != nil {
				return TelemetrySettings{}, err
			}
		}
	}
	t = t.withDefaults()
	return TelemetrySettings{On: t.on, Interval: t.interval, Ops: t.ops}, nil
}
