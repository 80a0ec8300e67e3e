//go:build !js

package signaling

import (
	"strconv"
	"strings"
)

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
		return true, r.internStr(&e.Op)
	case "comm":
		return true, r.internStr(&e.Comm)
	case "peer":
		if r.null() {
			e.Peer = nil
			return true, nil
		}
		var n int
		if err := r.int(&n); err != nil {
			return true, err
		}
		e.Peer = r.intPtr(n)
		return true, nil
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
		return true, r.internStr(&l.Local)
	case "remote":
		return true, r.internStr(&l.Remote)
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
		return true, r.internStr(&c.Stream)
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
	n, err := strconv.ParseInt(string(lit), 10, 64)
	if err != nil {
		return r.syntaxError("number %s is not an int64", lit)
	}
	*v = n
	return nil
}

// internStr reads a string into *s, without allocating one of
// telemetryWords: a batch of ops names a few operations and
// communicators many times over.
func (r *jsonReader) internStr(s *string) error {
	if r.null() {
		return nil
	}
	body, escaped, err := r.scanString()
	switch {
	case err != nil:
		return err
	case escaped:
		*s = unescape(body)
	default:
		if w, ok := telemetryWords[string(body)]; ok {
			*s = w
		} else {
			*s = string(body)
		}
	}
	return nil
}

// telemetryWords are the strings that come again and again in telemetry:
// operation names, the world's name, streams and candidate types.
var telemetryWords = func() map[string]string {
	m := make(map[string]string)
	for _, w := range strings.Fields(`allreduce reduce bcast barrier gather gatherv scatter scatterv allgather
		allgatherv alltoall alltoallv alltoallw reduce_scatter reduce_scatter_block reduce_local scan exscan
		neighbor_allgather neighbor_allgatherv neighbor_alltoall neighbor_alltoallv neighbor_alltoallw
		send recv ssend bsend rsend sendrecv sendrecv_replace probe mprobe mrecv psend precv
		world self out err host srflx prflx relay memory wasi-host`) {
		m[w] = w
	}
	return m
}()

// intPtr returns a pointer to a copy of n, carved from a slab the reader
// allocates 64 at a time.
func (r *jsonReader) intPtr(n int) *int {
	if len(r.slab) == cap(r.slab) {
		r.slab = make([]int, 0, 64)
	}
	r.slab = append(r.slab, n)
	return &r.slab[len(r.slab)-1]
}
