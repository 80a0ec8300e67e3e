package signaling

import (
	"strconv"
	"unicode/utf8"
)

// TypeTelemetry is a rank's report of what it did (client → server): its
// operations, its links and its console lines since its last report (see
// Telemetry in the package doc).
const TypeTelemetry Type = "telemetry"

// Bounds of a Telemetry message, checked by Validate. The server's message
// size and rate limits apply as to any message: a rank splits a large
// report into several.
const (
	MaxTelemetryOps     = 1024 // operations in one message
	MaxTelemetryLinks   = 256  // links in one message
	MaxTelemetryConsole = 256  // console lines in one message
	MaxConsoleLineLen   = 1024 // bytes of one console line (longer lines are cut: ClipText)
	MaxOpNameLen        = 32   // bytes of an operation's name
	MaxCommNameLen      = 128  // bytes of a communicator's name
	MaxAgentLen         = 256  // bytes of Join.Agent
	maxCandidateTypeLen = 16
)

// Console streams of a ConsoleLine.
const (
	StreamOut = "out"
	StreamErr = "err"
)

// Telemetry is a rank's report to the server: the operations it completed,
// the state of its links and the lines it wrote to its console since its
// previous report. Now is the rank's clock when it sent the report (unix
// µs); the server shifts the operations' times onto its own clock by the
// difference between Now and the report's arrival.
type Telemetry struct {
	Now     int64         `json:"now"`
	Ops     []OpEvent     `json:"ops,omitempty"`
	Links   []LinkStat    `json:"links,omitempty"`
	Console []ConsoleLine `json:"console,omitempty"`
	// Dropped counts the operations the rank recorded but did not report
	// (its buffer was full) since its previous report.
	Dropped int `json:"dropped,omitempty"`
}

// OpEvent is one MPI operation a rank completed.
type OpEvent struct {
	// Op is the operation: the lower-case MPI name without an I or
	// Init prefix ("allreduce", "bcast", "send", "recv", …): 1 to
	// MaxOpNameLen bytes of [a-z0-9_].
	Op string `json:"op"`
	// Comm names the communicator ("world", …), at most MaxCommNameLen
	// bytes of UTF-8.
	Comm string `json:"comm,omitempty"`
	// Peer is the other rank of a point-to-point operation, in the
	// world's numbering; nil for a collective.
	Peer *int `json:"peer,omitempty"`
	// Bytes is the payload this rank sent or received.
	Bytes int64 `json:"bytes,omitempty"`
	// Start and End are when the operation was posted and completed, unix
	// µs on the rank's clock (on the server's in an Event); End ≥ Start.
	Start int64 `json:"start"`
	End   int64 `json:"end"`
	// Err is the error the operation failed with, "" if it succeeded: at
	// most MaxTextLen bytes of UTF-8.
	Err string `json:"err,omitempty"`
}

// LinkStat is the state of a rank's link to one peer.
type LinkStat struct {
	Peer int `json:"peer"`
	// Local and Remote are the candidate types of the link's path (host,
	// srflx, prflx, relay; "memory" in one process, "shm" or "unix"
	// between processes of one host, "wasi-host" through a WASI host),
	// "" while unknown.
	Local     string `json:"local,omitempty"`
	Remote    string `json:"remote,omitempty"`
	RTTMicros int    `json:"rttMicros,omitempty"` // the link's round trip, 0 if unknown
	// Sent and Received are the bytes moved on the link since it opened.
	Sent     int64 `json:"sent,omitempty"`
	Received int64 `json:"received,omitempty"`
}

// ConsoleLine is one line a rank wrote to its standard output (Stream
// "out") or error ("err"), without its newline.
type ConsoleLine struct {
	Stream string `json:"stream"`
	// Text is at most MaxConsoleLineLen bytes of UTF-8 (ClipText makes
	// any line so).
	Text string `json:"text"`
}

// ClipText returns s as valid UTF-8 (each invalid byte sequence replaced
// by U+FFFD) of at most n bytes, cut at a character boundary: a console
// line (n = MaxConsoleLineLen) or an error text (MaxTextLen) that
// Telemetry.Validate accepts.
func ClipText(s string, n int) string {
	if !utf8.ValidString(s) {
		b := make([]byte, 0, min(len(s)+8, n+utf8.UTFMax))
		for i := 0; i < len(s) && len(b) <= n; {
			r, size := utf8.DecodeRuneInString(s[i:])
			b = utf8.AppendRune(b, r) // RuneError for an invalid byte
			i += size
		}
		s = string(b)
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Type implements Message.
func (*Telemetry) Type() Type { return TypeTelemetry }

func validText(what string, s string, n int) error {
	if len(s) > n {
		return invalid("%s longer than %d bytes", what, n)
	}
	if !utf8.ValidString(s) {
		return invalid("%s is not valid UTF-8", what)
	}
	return nil
}

func validCandidateType(t string) bool {
	switch t {
	case "", "host", "srflx", "prflx", "relay", "memory", "wasi-host", "shm", "unix":
		return true
	}
	return false
}

// Validate implements Message.
func (m *Telemetry) Validate() error {
	if m.Now <= 0 {
		return invalid("telemetry time %d", m.Now)
	}
	if len(m.Ops) > MaxTelemetryOps || len(m.Links) > MaxTelemetryLinks || len(m.Console) > MaxTelemetryConsole {
		return invalid("telemetry with %d ops, %d links, %d console lines (at most %d, %d, %d)",
			len(m.Ops), len(m.Links), len(m.Console), MaxTelemetryOps, MaxTelemetryLinks, MaxTelemetryConsole)
	}
	if m.Dropped < 0 {
		return invalid("negative dropped count")
	}
	for i := range m.Ops {
		if err := m.Ops[i].validate(); err != nil {
			return err
		}
	}
	for _, l := range m.Links {
		if l.Peer < 0 || l.Peer >= MaxJobSize {
			return invalid("link to rank %d out of range", l.Peer)
		}
		if !validCandidateType(l.Local) || !validCandidateType(l.Remote) {
			return invalid("link candidate types %q, %q", l.Local, l.Remote)
		}
		if l.RTTMicros < 0 || l.Sent < 0 || l.Received < 0 {
			return invalid("link to rank %d with a negative round trip or byte count", l.Peer)
		}
	}
	for _, c := range m.Console {
		if c.Stream != StreamOut && c.Stream != StreamErr {
			return invalid("console stream %q", c.Stream)
		}
		if err := validText("console line", c.Text, MaxConsoleLineLen); err != nil {
			return err
		}
	}
	return nil
}

func (o *OpEvent) validate() error {
	if o.Op == "" || len(o.Op) > MaxOpNameLen {
		return invalid("operation name must have 1..%d bytes", MaxOpNameLen)
	}
	for i := 0; i < len(o.Op); i++ {
		if c := o.Op[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return invalid("operation name %q: want [a-z0-9_]", o.Op)
		}
	}
	if err := validText("communicator name", o.Comm, MaxCommNameLen); err != nil {
		return err
	}
	if o.Peer != nil && (*o.Peer < 0 || *o.Peer >= MaxJobSize) {
		return invalid("operation peer %d out of range", *o.Peer)
	}
	if o.Bytes < 0 {
		return invalid("operation with %d bytes", o.Bytes)
	}
	if o.Start <= 0 || o.End < o.Start {
		return invalid("operation from %d to %d", o.Start, o.End)
	}
	return validText("operation error", o.Err, MaxTextLen)
}

func (m *Telemetry) appendData(b []byte) []byte {
	o := openObject(b)
	o.int64("now", m.Now)
	if len(m.Ops) > 0 {
		o.key("ops")
		o.b = append(o.b, '[')
		for i := range m.Ops {
			if i > 0 {
				o.b = append(o.b, ',')
			}
			o.b = m.Ops[i].appendTo(o.b)
		}
		o.b = append(o.b, ']')
	}
	if len(m.Links) > 0 {
		o.key("links")
		o.b = append(o.b, '[')
		for i := range m.Links {
			if i > 0 {
				o.b = append(o.b, ',')
			}
			o.b = m.Links[i].appendTo(o.b)
		}
		o.b = append(o.b, ']')
	}
	if len(m.Console) > 0 {
		o.key("console")
		o.b = append(o.b, '[')
		for i, c := range m.Console {
			if i > 0 {
				o.b = append(o.b, ',')
			}
			co := openObject(o.b)
			co.str("stream", c.Stream)
			co.str("text", c.Text)
			o.b = co.close()
		}
		o.b = append(o.b, ']')
	}
	if m.Dropped != 0 {
		o.int("dropped", m.Dropped)
	}
	return o.close()
}

func (e *OpEvent) appendTo(b []byte) []byte {
	o := openObject(b)
	o.str("op", e.Op)
	if e.Comm != "" {
		o.str("comm", e.Comm)
	}
	if e.Peer != nil {
		o.int("peer", *e.Peer)
	}
	if e.Bytes != 0 {
		o.int64("bytes", e.Bytes)
	}
	o.int64("start", e.Start)
	o.int64("end", e.End)
	if e.Err != "" {
		o.str("err", e.Err)
	}
	return o.close()
}

func (l *LinkStat) appendTo(b []byte) []byte {
	o := openObject(b)
	o.int("peer", l.Peer)
	if l.Local != "" {
		o.str("local", l.Local)
	}
	if l.Remote != "" {
		o.str("remote", l.Remote)
	}
	if l.RTTMicros != 0 {
		o.int("rttMicros", l.RTTMicros)
	}
	if l.Sent != 0 {
		o.int64("sent", l.Sent)
	}
	if l.Received != 0 {
		o.int64("received", l.Received)
	}
	return o.close()
}

func (o *jsonObject) int64(k string, v int64) { o.key(k); o.b = strconv.AppendInt(o.b, v, 10) }
