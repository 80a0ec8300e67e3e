//go:build !js

package signaling

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The codec in json.go replaced encoding/json for the protocol's messages.
// These tests hold it to encoding/json with the messages' json tags: the
// bytes it writes are the bytes encoding/json wrote, and what it reads,
// encoding/json read the same way (it reads a subset: no case folding,
// no repeated keys, valid UTF-8 only).

// refDecode is Decode as it was with encoding/json.
func refDecode(data []byte) (Message, error) {
	var env refEnvelope
	if err := strictUnmarshal(data, &env); err != nil {
		return nil, err
	}
	m := newMessage(env.Type)
	if env.V != Version || m == nil {
		return nil, ErrInvalid
	}
	data = bytes.TrimSpace(env.Data)
	if len(data) == 0 || bytes.Equal(data, []byte("null")) {
		data = []byte("{}")
	}
	var target any = m
	var sig refSignal
	s, isSignal := m.(*Signal)
	if isSignal {
		target = &sig
	}
	if err := strictUnmarshal(data, target); err != nil {
		return nil, err
	}
	if isSignal {
		*s = Signal{To: sig.To, From: sig.From, Kind: sig.Kind, Payload: []byte(sig.Payload)}
	}
	return m, m.Validate()
}

// edgeMessages have what encoding/json treats specially: escapes, HTML
// characters, U+2028, invalid UTF-8, floats of every size.
func edgeMessages() []Message {
	text := "a\"b\\c\x00\x01\x1f\b\f\n\r\t<>&\u2028\u2029 üñï ☃ 𝄞 \xff\xfe end"
	utext := "a\"b\\c\x00\x01\x1f\b\f\n\r\t<>&\u2028\u2029 üñï ☃ 𝄞 end"
	var ms []Message
	for _, rate := range []float64{1, 0.5, 1e-7, 1e-6, 123456789, 1e20, 1e21, 1.5e300, 5e-324} {
		ms = append(ms, &Welcome{Protocol: Version, Job: "j", Rank: 0, Size: 1,
			Limits: &Limits{MessageRate: rate, MessageBurst: 1, MessageBytes: 1 << 20}})
	}
	return append(ms,
		&Join{Job: "j", Token: text, Kind: KindWASI, Rank: intp(65535)},
		&Welcome{Protocol: Version, Job: "j", Rank: 2, Size: 3,
			ICEServers: []ICEServer{{URLs: []string{"stun:a", text}}, {URLs: []string{"turn:b"}, Credential: text}},
			Settings:   map[string]string{"z": "1", "a": text, text: "", "m\u2028": "<>"}},
		&Signal{To: 2, From: 1, Kind: SignalAnswer, Payload: EncodeString(text)},
		&Signal{To: 2, From: 1, Kind: SignalConnect, Payload: []byte(`{"a":[1,-2.5e-3,true,false,null,{}],"b":"\u00e9\ud834\udd1e"}`)},
		&Left{Rank: 65535, Reason: text},
		&Error{Code: ErrorCode(text[:20]), Message: text},
		&Ping{ID: 1<<64 - 1},
		&Pong{ID: 1},
		// the name service's strings are valid UTF-8
		&Publish{Service: utext, Port: utext},
		&Lookup{Service: utext, Wait: true},
		&Unpublish{Service: utext},
		&Name{Op: TypeLookup, Service: utext, Port: utext},
		&Name{Op: TypePublish, Service: utext, Code: CodeNameTaken, Message: text},
		&Join{Job: "j", Token: "t", Kind: KindBrowser, Agent: utext},
		&Telemetry{Now: 1<<63 - 1, Dropped: 1<<31 - 1,
			Ops:     []OpEvent{{Op: "reduce_scatter_block", Comm: utext, Peer: intp(0), Bytes: 1<<63 - 1, Start: 1, End: 1<<63 - 1, Err: utext}},
			Links:   []LinkStat{{Peer: 65535, Local: "prflx", Remote: "relay", RTTMicros: 1 << 40, Sent: 1<<63 - 1, Received: 1}},
			Console: []ConsoleLine{{Stream: StreamErr, Text: utext}, {Stream: StreamOut, Text: "<b>&amp;</b>\u2028"}}},
	)
}

func TestEncodeMatchesEncodingJSON(t *testing.T) {
	for _, m := range append(sampleMessages(), edgeMessages()...) {
		got, err := Encode(m)
		require.NoError(t, err)
		require.Equal(t, string(refEncode(t, m)), string(got))
	}
}

func TestDecodeMatchesEncodingJSON(t *testing.T) {
	for _, m := range append(sampleMessages(), edgeMessages()...) {
		data, err := Encode(m)
		require.NoError(t, err)
		got, err := Decode(data)
		require.NoError(t, err, string(data))
		want, err := refDecode(data)
		require.NoError(t, err, string(data))
		require.Equal(t, want, got)
	}
}

func TestEncodeStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "v=0\r\na=candidate:1 1 udp 1 127.0.0.1 5000 typ host\r\n", "\"\\/<>&\u2028\u2029", "\x00\x7f\x80\xff", "𝄞 ☃"} {
		want, err := json.Marshal(s)
		require.NoError(t, err)
		enc := EncodeString(s)
		require.Equal(t, string(want), string(enc))
		var back string
		require.NoError(t, json.Unmarshal(enc, &back))
		got, err := DecodeString(enc)
		require.NoError(t, err)
		require.Equal(t, back, got)
	}
	// escapes encoding/json never writes, and lone surrogates
	for _, in := range []string{` "\/\u0041\u00e9\ud834\udd1e\ud834\u0041\udd1e\ud834" `, `"\uD834\uDD1E\u12aB"`} {
		var want string
		require.NoError(t, json.Unmarshal([]byte(in), &want))
		got, err := DecodeString([]byte(in))
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
}

func FuzzDecode(f *testing.F) {
	for _, m := range append(sampleMessages(), edgeMessages()...) {
		data, err := Encode(m)
		require.NoError(f, err)
		f.Add(data)
	}
	for _, s := range []string{``, `{}`, `{"v":1,"type":"ping","data":null}`, `{"v":1,"type":"signal","data":{"to":1,"kind":"sdp-offer","payload":{}}}`, `{"v":1e400}`, "\xff",
		`{"V":1,"Type":"ping"}`, `{"v":1,"type":"ping","data":{"id":1},"data":{}}`, ` {"data":{"id":18446744073709551615},"type":"pong","v":1} `,
		`{"v":1,"type":"welcome","data":{"protocol":1,"job":"a","rank":0,"size":1,"limits":{"messageRate":1e-7,"messageBurst":1,"messageBytes":1},"settings":{"b":"\u2028","a":"x"}}}`,
		`{"v":1,"type":"lookup","data":{"wait":false,"service":"\ud834\udd1e"}}`, `{"v":1,"type":"name","data":{"op":"lookup","service":"s","code":"name-limit","message":"m"}}`,
		`{"v":1,"type":"telemetry","data":{"now":5,"ops":[{"end":3,"start":2,"op":"bcast","peer":null,"comm":null}],"links":null,"console":[{"text":"\ud834\udd1e","stream":"err"}],"dropped":0}}`,
		`{"v":1,"type":"telemetry","data":{"now":5,"ops":[],"links":[{"peer":0,"sent":0}],"console":[]}}`,
		`{"v":1,"type":"join","data":{"job":"a","token":"t","kind":"wasi","agent":"meshmpi wasip1 (wazero)"}}`,
		`{"v":1,"type":"ready","data":{"hosts":["h1:ab","",null],"kinds":["native","wasi","browser"],"size":3}}`,
		`{"v":1,"type":"joined","data":{"host":"","rank":3,"kind":"native"}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data)
		if err != nil {
			require.Nil(t, m)
			return
		}
		// encoding/json read the same message
		want, err := refDecode(data)
		require.NoError(t, err)
		require.Equal(t, want, m)
		// Whatever decodes re-encodes, and the encoding is a fixed point.
		enc, err := Encode(m)
		require.NoError(t, err)
		m2, err := Decode(enc)
		require.NoError(t, err)
		enc2, err := Encode(m2)
		require.NoError(t, err)
		require.True(t, bytes.Equal(enc, enc2), "%s != %s", enc, enc2)
		// and it is what encoding/json wrote, given the payload it wrote
		// (encoding/json compacted a payload and escaped <, > and &)
		if s, ok := m.(*Signal); ok {
			s.Payload, err = json.Marshal(json.RawMessage(s.Payload))
			require.NoError(t, err)
			enc, err = Encode(s)
			require.NoError(t, err)
		}
		require.Equal(t, string(refEncode(t, m)), string(enc))
	})
}

func TestDecodeRejectsDeepPayload(t *testing.T) {
	for _, depth := range []int{maxDepth - 2, maxDepth - 1} {
		payload := strings.Repeat("[", depth) + strings.Repeat("]", depth)
		msg := `{"v":1,"type":"signal","data":{"to":1,"kind":"sdp-offer","payload":` + payload + `}}`
		_, err := Decode([]byte(msg))
		_, refErr := refDecode([]byte(msg))
		if depth == maxDepth-2 { // with the envelope and data: maxDepth deep
			require.NoError(t, err)
			require.NoError(t, refErr)
		} else {
			require.ErrorIs(t, err, ErrMalformed)
			require.Error(t, refErr)
		}
	}
}

// BenchmarkDecode compares the codec with the encoding/json decoder it
// replaced, on an offer (the server decodes one per relayed signal).
func BenchmarkDecode(b *testing.B) {
	sdp := "v=0\r\n" + strings.Repeat("a=candidate:1 1 udp 2130706431 127.0.0.1 5000 typ host\r\n", 20)
	data, err := Encode(&Signal{To: 1, From: 0, Kind: SignalOffer, Payload: EncodeString(sdp)})
	require.NoError(b, err)
	for _, bc := range []struct {
		name   string
		decode func([]byte) (Message, error)
	}{{"codec", Decode}, {"encoding-json", refDecode}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := bc.decode(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
