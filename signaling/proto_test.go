package signaling

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func intp(v int) *int { return &v }

func sampleMessages() []Message {
	return []Message{
		&Join{Job: "job-1", Token: "t.x", Kind: KindNative},
		&Join{Job: "job.2_x", Token: "t.x", Rank: intp(0), Kind: KindBrowser},
		&Welcome{Protocol: Version, Job: "j", Rank: 1, Size: 4,
			ICEServers: []ICEServer{{URLs: []string{"stun:127.0.0.1:3478"}, Username: "u", Credential: "c"}},
			Settings:   map[string]string{"coll.allreduce": "ring"}},
		&Ready{Size: 2, Kinds: []ClientKind{KindNative, KindWASI}},
		&Signal{To: 1, From: 0, Kind: SignalOffer, Payload: json.RawMessage(`{"type":"offer","sdp":"v=0"}`)},
		&Signal{To: 0, From: 3, Kind: SignalCandidate, Payload: json.RawMessage(`"candidate:1 1 udp 1 127.0.0.1 5000 typ host"`)},
		&Left{Rank: 3, Reason: "connection closed"},
		&Error{Code: CodeBadToken, Message: "nope"},
		&Ping{ID: 7},
		&Pong{},
	}
}

func TestRoundTrip(t *testing.T) {
	for _, m := range sampleMessages() {
		data, err := Encode(m)
		require.NoError(t, err)
		got, err := Decode(data)
		require.NoError(t, err, string(data))
		require.Equal(t, m, got)
	}
}

func TestDecodeRejects(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want error
	}{
		{"empty", ``, ErrMalformed},
		{"not json", `hello`, ErrMalformed},
		{"array", `[1]`, ErrMalformed},
		{"trailing", `{"v":1,"type":"ping"} {}`, ErrMalformed},
		{"unknown envelope field", `{"v":1,"type":"ping","x":1}`, ErrMalformed},
		{"unknown data field", `{"v":1,"type":"ping","data":{"x":1}}`, ErrMalformed},
		{"no version", `{"type":"ping"}`, ErrVersion},
		{"future version", `{"v":2,"type":"ping"}`, ErrVersion},
		{"unknown type", `{"v":1,"type":"hello"}`, ErrUnknownType},
		{"no type", `{"v":1}`, ErrUnknownType},
		{"join without data", `{"v":1,"type":"join"}`, ErrInvalid},
		{"join no token", `{"v":1,"type":"join","data":{"job":"a","kind":"native"}}`, ErrInvalid},
		{"join bad job", `{"v":1,"type":"join","data":{"job":"a/b","token":"t","kind":"native"}}`, ErrInvalid},
		{"join bad kind", `{"v":1,"type":"join","data":{"job":"a","token":"t","kind":"toaster"}}`, ErrInvalid},
		{"join negative rank", `{"v":1,"type":"join","data":{"job":"a","token":"t","kind":"native","rank":-1}}`, ErrInvalid},
		{"join rank type", `{"v":1,"type":"join","data":{"job":"a","token":"t","kind":"native","rank":"1"}}`, ErrMalformed},
		{"signal bad kind", `{"v":1,"type":"signal","data":{"to":1,"kind":"sdp","payload":"x"}}`, ErrInvalid},
		{"signal no payload", `{"v":1,"type":"signal","data":{"to":1,"kind":"sdp-offer"}}`, ErrInvalid},
		{"signal null payload", `{"v":1,"type":"signal","data":{"to":1,"kind":"sdp-offer","payload":null}}`, ErrInvalid},
		{"signal negative to", `{"v":1,"type":"signal","data":{"to":-1,"kind":"sdp-offer","payload":"x"}}`, ErrInvalid},
		{"welcome rank >= size", `{"v":1,"type":"welcome","data":{"protocol":1,"job":"a","rank":2,"size":2}}`, ErrInvalid},
		{"ready kinds mismatch", `{"v":1,"type":"ready","data":{"size":2,"kinds":["native"]}}`, ErrInvalid},
		{"error no code", `{"v":1,"type":"error","data":{}}`, ErrInvalid},
		{"too large", `{"v":1,"type":"ping","data":{"id":1}}` + strings.Repeat(" ", MaxMessageBytes), ErrTooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Decode([]byte(tc.in))
			require.ErrorIs(t, err, tc.want)
			require.Nil(t, m)
		})
	}
}

func TestEncodeRejectsInvalid(t *testing.T) {
	_, err := Encode(&Join{Job: "", Token: "t", Kind: KindNative})
	require.ErrorIs(t, err, ErrInvalid)
	_, err = Encode(nil)
	require.ErrorIs(t, err, ErrInvalid)
}

func FuzzDecode(f *testing.F) {
	for _, m := range sampleMessages() {
		data, err := Encode(m)
		require.NoError(f, err)
		f.Add(data)
	}
	for _, s := range []string{``, `{}`, `{"v":1,"type":"ping","data":null}`, `{"v":1,"type":"signal","data":{"to":1,"kind":"sdp-offer","payload":{}}}`, `{"v":1e400}`, "\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data)
		if err != nil {
			require.Nil(t, m)
			return
		}
		// Whatever decodes re-encodes, and the encoding is a fixed point.
		enc, err := Encode(m)
		require.NoError(t, err)
		m2, err := Decode(enc)
		require.NoError(t, err)
		enc2, err := Encode(m2)
		require.NoError(t, err)
		require.True(t, bytes.Equal(enc, enc2), "%s != %s", enc, enc2)
	})
}
