//go:build !js

package signaling

import "strconv"

// The decoder of Telemetry, which only the server reads: a browser rank
// sends telemetry and never decodes one, and leaving this out of its build
// (proto_js.go) saves it some 3 KB gzipped.

func (m *Telemetry) field(r *jsonReader, key string) (bool, error) {
	switch key {
	case "now":
		return true, r.int64(&m.Now)
	case "ops":
		if r.null() {
			return true, nil
		}
		m.Ops = []OpEvent{}
		return true, r.array(func() error {
			if len(m.Ops) == MaxTelemetryOps {
				return r.syntaxError("more than %d ops", MaxTelemetryOps)
			}
			m.Ops = append(m.Ops, OpEvent{})
			return r.fields(m.Ops[len(m.Ops)-1].field)
		})
	case "links":
		if r.null() {
			return true, nil
		}
		m.Links = []LinkStat{}
		return true, r.array(func() error {
			if len(m.Links) == MaxTelemetryLinks {
				return r.syntaxError("more than %d links", MaxTelemetryLinks)
			}
			m.Links = append(m.Links, LinkStat{})
			return r.fields(m.Links[len(m.Links)-1].field)
		})
	case "console":
		if r.null() {
			return true, nil
		}
		m.Console = []ConsoleLine{}
		return true, r.array(func() error {
			if len(m.Console) == MaxTelemetryConsole {
				return r.syntaxError("more than %d console lines", MaxTelemetryConsole)
			}
			m.Console = append(m.Console, ConsoleLine{})
			return r.fields(m.Console[len(m.Console)-1].field)
		})
	case "dropped":
		return true, r.int(&m.Dropped)
	}
	return false, nil
}

func (e *OpEvent) field(r *jsonReader, key string) (bool, error) {
	switch key {
	case "op":
		return true, r.str(&e.Op)
	case "comm":
		return true, r.str(&e.Comm)
	case "peer":
		return true, r.optInt(&e.Peer)
	case "bytes":
		return true, r.int64(&e.Bytes)
	case "start":
		return true, r.int64(&e.Start)
	case "end":
		return true, r.int64(&e.End)
	case "err":
		return true, r.str(&e.Err)
	}
	return false, nil
}

func (l *LinkStat) field(r *jsonReader, key string) (bool, error) {
	switch key {
	case "peer":
		return true, r.int(&l.Peer)
	case "local":
		return true, r.str(&l.Local)
	case "remote":
		return true, r.str(&l.Remote)
	case "rttMicros":
		return true, r.int(&l.RTTMicros)
	case "sent":
		return true, r.int64(&l.Sent)
	case "received":
		return true, r.int64(&l.Received)
	}
	return false, nil
}

func (c *ConsoleLine) field(r *jsonReader, key string) (bool, error) {
	switch key {
	case "stream":
		return true, r.str(&c.Stream)
	case "text":
		return true, r.str(&c.Text)
	}
	return false, nil
}

// int64 reads an integer into *v.
func (r *jsonReader) int64(v *int64) error {
	if r.null() {
		return nil
	}
	lit, err := r.number()
	if err != nil {
		return err
	}
	n, err := strconv.ParseInt(lit, 10, 64)
	if err != nil {
		return r.syntaxError("number %s is not an int64", lit)
	}
	*v = n
	return nil
}
