//go:build js

package signaling

// A browser rank never encodes the messages only the server sends
// (welcome, ready, joined, left, error, name): Encode refuses them under js,
// and their encoders (proto_server.go) stay out of its build.

func encodable(m Message) bool {
	switch m.(type) {
	case *Welcome, *Ready, *Joined, *Left, *Error, *Name:
		return false
	}
	return true
}

func (*Welcome) appendData(b []byte) []byte { return b }
func (*Ready) appendData(b []byte) []byte   { return b }
func (*Joined) appendData(b []byte) []byte  { return b }
func (*Left) appendData(b []byte) []byte    { return b }
func (*Error) appendData(b []byte) []byte   { return b }
func (*Name) appendData(b []byte) []byte    { return b }

// A browser rank sends telemetry but never reads one: Decode of a
// telemetry fails under js (unknown field), and its decoder
// (proto_telemetry_server.go) stays out of browser ranks.
func (*Telemetry) field(*jsonReader, string) (bool, error) { return false, nil }

// internKey interns nothing in a browser rank (json_server.go).
func internKey([]byte) (string, bool) { return "", false }
