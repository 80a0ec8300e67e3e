package signaling

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// The reference encoder, encoding/json with the messages' json tags, on
// every target: json_test.go holds the codec to it natively, and under js
// it writes the server's messages that the browser build does not encode
// (proto_js.go) for TestRoundTrip.

// refSignal is Signal as encoding/json saw it: the payload a RawMessage.
type refSignal struct {
	To      int             `json:"to"`
	From    int             `json:"from"`
	Kind    SignalKind      `json:"kind"`
	Payload json.RawMessage `json:"payload"`
}

// refEnvelope is the wire form of every message, as encoding/json saw it.
type refEnvelope struct {
	V    int             `json:"v"`
	Type Type            `json:"type"`
	Data json.RawMessage `json:"data,omitempty"`
}

// refEncode is Encode as it was with encoding/json.
func refEncode(t testing.TB, m Message) []byte {
	var v any = m
	if s, ok := m.(*Signal); ok {
		v = refSignal{s.To, s.From, s.Kind, s.Payload}
	}
	data, err := json.Marshal(v)
	require.NoError(t, err)
	out, err := json.Marshal(refEnvelope{V: Version, Type: m.Type(), Data: data})
	require.NoError(t, err)
	return out
}
