//go:build !js

package signaling

import "slices"

// The encoders of the messages only the server sends (welcome, ready,
// joined, left, error, name). A browser rank decodes them but never encodes
// one, and leaving them out of its build (proto_js.go) saves it some 4
// KB gzipped: the sorted settings and the float of the limits.

// encodable reports whether this build encodes m: every message.
func encodable(Message) bool { return true }

func (m *Welcome) appendData(b []byte) []byte {
	o := openObject(b)
	o.int("protocol", m.Protocol)
	o.str("job", m.Job)
	o.int("rank", m.Rank)
	o.int("size", m.Size)
	if len(m.ICEServers) > 0 {
		o.key("iceServers")
		o.b = append(o.b, '[')
		for i, s := range m.ICEServers {
			if i > 0 {
				o.b = append(o.b, ',')
			}
			so := openObject(o.b)
			so.key("urls")
			so.b = appendStrings(so.b, s.URLs)
			if s.Username != "" {
				so.str("username", s.Username)
			}
			if s.Credential != "" {
				so.str("credential", s.Credential)
			}
			o.b = so.close()
		}
		o.b = append(o.b, ']')
	}
	if len(m.Settings) > 0 {
		o.key("settings")
		so := openObject(o.b)
		keys := make([]string, 0, len(m.Settings))
		for k := range m.Settings {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			so.str(k, m.Settings[k])
		}
		o.b = so.close()
	}
	if l := m.Limits; l != nil {
		o.key("limits")
		lo := openObject(o.b)
		lo.key("messageRate")
		lo.b = appendFloat(lo.b, l.MessageRate)
		lo.int("messageBurst", l.MessageBurst)
		lo.int("messageBytes", l.MessageBytes)
		if l.HeartbeatMillis != 0 {
			lo.int("heartbeatMillis", l.HeartbeatMillis)
		}
		o.b = lo.close()
	}
	if m.Max != 0 {
		o.int("max", m.Max)
	}
	if m.Late {
		o.bool("late", true)
	}
	if m.Resume != "" {
		o.str("resume", m.Resume)
	}
	if m.Resumed {
		o.bool("resumed", true)
	}
	return o.close()
}

func (m *Ready) appendData(b []byte) []byte {
	o := openObject(b)
	o.int("size", m.Size)
	o.key("kinds")
	o.b = appendStrings(o.b, m.Kinds)
	if len(m.Fingerprints) > 0 {
		o.key("fingerprints")
		o.b = appendStrings(o.b, m.Fingerprints)
	}
	if len(m.Hosts) > 0 {
		o.key("hosts")
		o.b = appendStrings(o.b, m.Hosts)
	}
	if m.Max != 0 {
		o.int("max", m.Max)
	}
	return o.close()
}

func (m *Joined) appendData(b []byte) []byte {
	o := openObject(b)
	o.int("rank", m.Rank)
	o.str("kind", string(m.Kind))
	if m.Fingerprint != "" {
		o.str("fingerprint", m.Fingerprint)
	}
	if m.Host != "" {
		o.str("host", m.Host)
	}
	return o.close()
}

func (m *Left) appendData(b []byte) []byte {
	o := openObject(b)
	o.int("rank", m.Rank)
	if m.Reason != "" {
		o.str("reason", m.Reason)
	}
	if len(m.Also) > 0 {
		o.key("also")
		o.b = appendInts(o.b, m.Also)
	}
	if m.Aborted {
		o.bool("aborted", true)
	}
	if m.Code != 0 {
		o.int("code", m.Code)
	}
	return o.close()
}

func (m *Error) appendData(b []byte) []byte {
	o := openObject(b)
	o.str("code", string(m.Code))
	if m.Message != "" {
		o.str("message", m.Message)
	}
	return o.close()
}

func (m *Name) appendData(b []byte) []byte {
	o := openObject(b)
	o.str("op", string(m.Op))
	o.str("service", m.Service)
	if m.Port != "" {
		o.str("port", m.Port)
	}
	if m.Code != "" {
		o.str("code", string(m.Code))
	}
	if m.Message != "" {
		o.str("message", m.Message)
	}
	return o.close()
}
