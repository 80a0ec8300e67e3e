package signaling

import (
	"encoding/json"
	"math"
	"runtime"
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
		&Join{Job: "j", Token: "t", Kind: KindWASI, Fingerprint: "sha-256 AB:CD:EF"},
		&Ready{Size: 2, Kinds: []ClientKind{KindNative, KindBrowser}, Fingerprints: []string{"sha-256 01:02", ""}},
		&Path{Peer: 3, Local: "host", Remote: "relay", RTTMicros: 812},
		&Path{Peer: 0, Local: "srflx", Remote: "prflx"},
		&Path{Peer: 1, Local: "shm", Remote: "shm"},
		&Signal{To: 3, From: 1, Kind: SignalLink, Payload: json.RawMessage(`"shm1 @meshmpi-ab 00ff"`)},
		&Signal{To: 1, From: 0, Kind: SignalOffer, Payload: json.RawMessage(`{"type":"offer","sdp":"v=0"}`)},
		&Signal{To: 0, From: 3, Kind: SignalCandidate, Payload: json.RawMessage(`"candidate:1 1 udp 1 127.0.0.1 5000 typ host"`)},
		&Left{Rank: 3, Reason: "connection closed"},
		&Left{Rank: 2, Reason: "called Abort(3) at pi.go:12", Aborted: true, Code: 3},
		&Abort{Code: 3, Where: "pi.go:12"},
		&Abort{Code: -1},
		&Suspect{Rank: 3, Reason: "webrtc link: process failed: path broken: ICE did not reconnect within 6s"},
		&Suspect{Rank: 0},
		&Leaving{},
		&Error{Code: CodeDeclaredFailed, Message: "rank 3 was declared failed: rank 1 lost its link to it"},
		&Left{Rank: 0, Reason: "called Abort(0)", Aborted: true},
		&Error{Code: CodeBadToken, Message: "nope"},
		&Ping{ID: 7},
		&Pong{},
		&Welcome{Protocol: Version, Job: "j", Rank: 1, Size: 2, Max: 8},
		&Welcome{Protocol: Version, Job: "j", Rank: 7, Size: 2, Max: 8, Late: true},
		&Ready{Size: 2, Kinds: []ClientKind{KindNative, KindWASI}, Max: 8},
		&Ready{Size: 2, Kinds: []ClientKind{KindNative, KindWASI, KindBrowser}, Fingerprints: []string{"", "", "sha-256 0A"}, Max: 3},
		&Joined{Rank: 5, Kind: KindBrowser},
		&Joined{Rank: 2, Kind: KindNative, Fingerprint: "sha-256 AB:CD"},
		&Join{Job: "j", Token: "t", Kind: KindNative, Fingerprint: "sha-256 AB", Host: "h1:0123456789abcdef0123456789abcdef"},
		&Ready{Size: 3, Kinds: []ClientKind{KindNative, KindWASI, KindBrowser}, Hosts: []string{"h1:aa", "h1:aa", ""}},
		&Joined{Rank: 3, Kind: KindWASI, Host: "token.from-launcher"},
		&Publish{Service: "ocean", Port: "meshmpi-port:job/0/1"},
		&Unpublish{Service: "ocean"},
		&Lookup{Service: "ocean"},
		&Lookup{Service: "ocean", Wait: true},
		&Name{Op: TypePublish, Service: "ocean"},
		&Name{Op: TypeUnpublish, Service: "ocean"},
		&Name{Op: TypeLookup, Service: "ocean", Port: "meshmpi-port:job/0/1"},
		&Name{Op: TypePublish, Service: "ocean", Code: CodeNameTaken, Message: "rank 0 published the service already"},
		&Name{Op: TypeLookup, Service: "ocean", Code: CodeNameUnknown},
		&Name{Op: TypeLookup, Service: "ocean", Code: CodeNameLimit, Message: "16 lookups wait"},
		&Join{Job: "j", Token: "t", Kind: KindBrowser, Agent: "Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0"},
		&Telemetry{Now: 1764400000000000},
		&Telemetry{Now: 1764400000000000, Dropped: 7,
			Ops: []OpEvent{
				{Op: "allreduce", Comm: "world", Bytes: 8, Start: 1764399999999000, End: 1764399999999123},
				{Op: "send", Comm: "world", Peer: intp(0), Bytes: 1 << 40, Start: 1, End: 1},
				{Op: "recv", Peer: intp(65535), Start: 5, End: 9, Err: "rank 3 left the job"},
			},
			Links: []LinkStat{
				{Peer: 1, Local: "host", Remote: "srflx", RTTMicros: 250, Sent: 1 << 33, Received: 12},
				{Peer: 0, Local: "memory", Remote: "memory"},
				{Peer: 2, Local: "wasi-host"},
				{Peer: 3},
			},
			Console: []ConsoleLine{{Stream: StreamOut, Text: "pi ≈ 3.14159"}, {Stream: StreamErr, Text: ""}},
		},
	}
}

func TestRoundTrip(t *testing.T) {
	for _, m := range sampleMessages() {
		data, err := Encode(m)
		if !encodable(m) {
			// under js, a server's message: the browser decodes it as
			// the server writes it
			require.ErrorIs(t, err, ErrInvalid)
			data, err = refEncode(t, m), nil
		}
		require.NoError(t, err)
		got, err := Decode(data)
		if _, ok := m.(*Telemetry); ok && runtime.GOOS == "js" {
			// a browser sends telemetry, never reads one
			require.ErrorIs(t, err, ErrMalformed)
			continue
		}
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
		{"trailing NUL", "{\"v\":1,\"type\":\"ping\"}\x00", ErrMalformed},
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
		{"ready fingerprints mismatch", `{"v":1,"type":"ready","data":{"size":2,"kinds":["native","native"],"fingerprints":["sha-256 AB"]}}`, ErrInvalid},
		{"ready empty fingerprints", `{"v":1,"type":"ready","data":{"size":1,"kinds":["native"],"fingerprints":[]}}`, ErrInvalid},
		{"ready bad fingerprint", `{"v":1,"type":"ready","data":{"size":1,"kinds":["native"],"fingerprints":["sha-256 zz"]}}`, ErrInvalid},
		{"path bad type", `{"v":1,"type":"path","data":{"peer":1,"local":"host","remote":"tunnel"}}`, ErrInvalid},
		{"path negative rtt", `{"v":1,"type":"path","data":{"peer":1,"local":"host","remote":"host","rttMicros":-1}}`, ErrInvalid},
		{"path negative peer", `{"v":1,"type":"path","data":{"peer":-1,"local":"host","remote":"host"}}`, ErrInvalid},
		{"abort code too large", `{"v":1,"type":"abort","data":{"code":4294967296}}`, ErrInvalid},
		{"abort code not a number", `{"v":1,"type":"abort","data":{"code":"3"}}`, ErrMalformed},
		{"left aborted not a bool", `{"v":1,"type":"left","data":{"rank":1,"aborted":1}}`, ErrMalformed},
		{"suspect negative rank", `{"v":1,"type":"suspect","data":{"rank":-1}}`, ErrInvalid},
		{"suspect rank too large", `{"v":1,"type":"suspect","data":{"rank":65536}}`, ErrInvalid},
		{"suspect rank not a number", `{"v":1,"type":"suspect","data":{"rank":"3"}}`, ErrMalformed},
		{"suspect rank fraction", `{"v":1,"type":"suspect","data":{"rank":1.5}}`, ErrMalformed},
		{"suspect long reason", `{"v":1,"type":"suspect","data":{"rank":1,"reason":"` + strings.Repeat("x", MaxTextLen+1) + `"}}`, ErrInvalid},
		{"suspect reason not a string", `{"v":1,"type":"suspect","data":{"rank":1,"reason":5}}`, ErrMalformed},
		{"leaving with a field", `{"v":1,"type":"leaving","data":{"rank":1}}`, ErrMalformed},
		{"suspect unknown field", `{"v":1,"type":"suspect","data":{"rank":1,"job":"other"}}`, ErrMalformed},
		{"join bad fingerprint", `{"v":1,"type":"join","data":{"job":"a","token":"t","kind":"native","fingerprint":"AB:CD"}}`, ErrInvalid},
		{"join long fingerprint", `{"v":1,"type":"join","data":{"job":"a","token":"t","kind":"native","fingerprint":"sha-256 ` + strings.Repeat("AB:", 80) + `AB"}}`, ErrInvalid},
		{"error no code", `{"v":1,"type":"error","data":{}}`, ErrInvalid},
		{"too large", `{"v":1,"type":"ping","data":{"id":1}}` + strings.Repeat(" ", MaxMessageBytes), ErrTooLarge},
		{"repeated field", `{"v":1,"v":1,"type":"ping"}`, ErrMalformed},
		{"repeated data field", `{"v":1,"type":"ping","data":{"id":1,"id":2}}`, ErrMalformed},
		{"repeated setting", `{"v":1,"type":"welcome","data":{"protocol":1,"job":"a","rank":0,"size":1,"settings":{"a":"1","a":"2"}}}`, ErrMalformed},
		{"key case", `{"V":1,"type":"ping"}`, ErrMalformed},
		{"data not an object", `{"v":1,"type":"ping","data":5}`, ErrMalformed},
		{"version with fraction", `{"v":1.0,"type":"ping"}`, ErrMalformed},
		{"version with exponent", `{"v":1e0,"type":"ping"}`, ErrMalformed},
		{"leading zero", `{"v":01,"type":"ping"}`, ErrMalformed},
		{"negative id", `{"v":1,"type":"ping","data":{"id":-1}}`, ErrMalformed},
		{"id overflow", `{"v":1,"type":"ping","data":{"id":18446744073709551616}}`, ErrMalformed},
		{"rate overflow", `{"v":1,"type":"welcome","data":{"protocol":1,"job":"a","rank":0,"size":1,"limits":{"messageRate":1e400,"messageBurst":1,"messageBytes":1}}}`, ErrMalformed},
		{"string for int", `{"v":"1","type":"ping"}`, ErrMalformed},
		{"bad escape", `{"v":1,"type":"p\ing"}`, ErrMalformed},
		{"short unicode escape", `{"v":1,"type":"\u12"}`, ErrMalformed},
		{"control character", "{\"v\":1,\"type\":\"pi\nng\"}", ErrMalformed},
		{"invalid utf-8", "{\"v\":1,\"type\":\"error\",\"data\":{\"code\":\"\xff\"}}", ErrMalformed},
		{"unterminated", `{"v":1,"type":"ping"`, ErrMalformed},
		{"missing colon", `{"v" 1}`, ErrMalformed},
		{"trailing comma", `{"v":1,"type":"ping",}`, ErrMalformed},
		{"bad payload", `{"v":1,"type":"signal","data":{"to":1,"kind":"sdp-offer","payload":{"a":}}}`, ErrMalformed},
		{"bad payload literal", `{"v":1,"type":"signal","data":{"to":1,"kind":"sdp-offer","payload":nul}}`, ErrMalformed},
		{"welcome late rank not late", `{"v":1,"type":"welcome","data":{"protocol":1,"job":"a","rank":2,"size":2,"max":4}}`, ErrInvalid},
		{"welcome late in the world", `{"v":1,"type":"welcome","data":{"protocol":1,"job":"a","rank":1,"size":2,"max":4,"late":true}}`, ErrInvalid},
		{"welcome late without max", `{"v":1,"type":"welcome","data":{"protocol":1,"job":"a","rank":2,"size":2,"late":true}}`, ErrInvalid},
		{"welcome rank >= max", `{"v":1,"type":"welcome","data":{"protocol":1,"job":"a","rank":4,"size":2,"max":4,"late":true}}`, ErrInvalid},
		{"welcome max < size", `{"v":1,"type":"welcome","data":{"protocol":1,"job":"a","rank":0,"size":2,"max":1}}`, ErrInvalid},
		{"welcome negative max", `{"v":1,"type":"welcome","data":{"protocol":1,"job":"a","rank":0,"size":2,"max":-1}}`, ErrInvalid},
		{"welcome max too large", `{"v":1,"type":"welcome","data":{"protocol":1,"job":"a","rank":0,"size":2,"max":65537}}`, ErrInvalid},
		{"welcome late not a bool", `{"v":1,"type":"welcome","data":{"protocol":1,"job":"a","rank":2,"size":2,"max":4,"late":1}}`, ErrMalformed},
		{"welcome max not a number", `{"v":1,"type":"welcome","data":{"protocol":1,"job":"a","rank":0,"size":2,"max":"4"}}`, ErrMalformed},
		{"ready kinds past max", `{"v":1,"type":"ready","data":{"size":1,"kinds":["native","native","native"],"max":2}}`, ErrInvalid},
		{"ready kinds past size", `{"v":1,"type":"ready","data":{"size":1,"kinds":["native","native"]}}`, ErrInvalid},
		{"ready max < size", `{"v":1,"type":"ready","data":{"size":2,"kinds":["native","native"],"max":1}}`, ErrInvalid},
		{"ready fingerprints short of late kinds", `{"v":1,"type":"ready","data":{"size":1,"kinds":["native","native"],"fingerprints":["sha-256 AB"],"max":2}}`, ErrInvalid},
		{"joined without data", `{"v":1,"type":"joined"}`, ErrInvalid},
		{"joined negative rank", `{"v":1,"type":"joined","data":{"rank":-1,"kind":"native"}}`, ErrInvalid},
		{"joined rank too large", `{"v":1,"type":"joined","data":{"rank":65536,"kind":"native"}}`, ErrInvalid},
		{"joined bad kind", `{"v":1,"type":"joined","data":{"rank":2,"kind":"toaster"}}`, ErrInvalid},
		{"joined bad fingerprint", `{"v":1,"type":"joined","data":{"rank":2,"kind":"native","fingerprint":"AB"}}`, ErrInvalid},
		{"join host with a space", `{"v":1,"type":"join","data":{"job":"a","token":"t","kind":"native","host":"a b"}}`, ErrInvalid},
		{"join long host", `{"v":1,"type":"join","data":{"job":"a","token":"t","kind":"native","host":"` + strings.Repeat("a", MaxHostLen+1) + `"}}`, ErrInvalid},
		{"join host not a string", `{"v":1,"type":"join","data":{"job":"a","token":"t","kind":"native","host":5}}`, ErrMalformed},
		{"ready hosts mismatch", `{"v":1,"type":"ready","data":{"size":2,"kinds":["native","native"],"hosts":["h"]}}`, ErrInvalid},
		{"ready empty hosts", `{"v":1,"type":"ready","data":{"size":1,"kinds":["native"],"hosts":[]}}`, ErrInvalid},
		{"ready bad host", `{"v":1,"type":"ready","data":{"size":1,"kinds":["native"],"hosts":["h/1"]}}`, ErrInvalid},
		{"joined bad host", `{"v":1,"type":"joined","data":{"rank":2,"kind":"native","host":"\u00e9"}}`, ErrInvalid},
		{"joined unknown field", `{"v":1,"type":"joined","data":{"rank":2,"kind":"native","late":true}}`, ErrMalformed},
		{"joined rank not a number", `{"v":1,"type":"joined","data":{"rank":"2","kind":"native"}}`, ErrMalformed},
		{"publish without data", `{"v":1,"type":"publish"}`, ErrInvalid},
		{"publish empty service", `{"v":1,"type":"publish","data":{"service":"","port":"p"}}`, ErrInvalid},
		{"publish no port", `{"v":1,"type":"publish","data":{"service":"s"}}`, ErrInvalid},
		{"publish long service", `{"v":1,"type":"publish","data":{"service":"` + strings.Repeat("x", MaxNameLen+1) + `","port":"p"}}`, ErrInvalid},
		{"publish long port", `{"v":1,"type":"publish","data":{"service":"s","port":"` + strings.Repeat("é", MaxNameLen/2+1) + `"}}`, ErrInvalid},
		{"publish invalid utf-8", "{\"v\":1,\"type\":\"publish\",\"data\":{\"service\":\"\xff\",\"port\":\"p\"}}", ErrMalformed},
		{"publish port not a string", `{"v":1,"type":"publish","data":{"service":"s","port":5}}`, ErrMalformed},
		{"publish unknown field", `{"v":1,"type":"publish","data":{"service":"s","port":"p","job":"j"}}`, ErrMalformed},
		{"unpublish empty service", `{"v":1,"type":"unpublish","data":{"service":""}}`, ErrInvalid},
		{"unpublish with a port", `{"v":1,"type":"unpublish","data":{"service":"s","port":"p"}}`, ErrMalformed},
		{"lookup no service", `{"v":1,"type":"lookup","data":{"wait":true}}`, ErrInvalid},
		{"lookup long service", `{"v":1,"type":"lookup","data":{"service":"` + strings.Repeat("x", MaxNameLen+1) + `"}}`, ErrInvalid},
		{"lookup wait not a bool", `{"v":1,"type":"lookup","data":{"service":"s","wait":1}}`, ErrMalformed},
		{"name bad op", `{"v":1,"type":"name","data":{"op":"signal","service":"s"}}`, ErrInvalid},
		{"name no op", `{"v":1,"type":"name","data":{"service":"s"}}`, ErrInvalid},
		{"name empty service", `{"v":1,"type":"name","data":{"op":"publish","service":""}}`, ErrInvalid},
		{"name long service", `{"v":1,"type":"name","data":{"op":"publish","service":"` + strings.Repeat("x", MaxNameLen+1) + `"}}`, ErrInvalid},
		{"name bad code", `{"v":1,"type":"name","data":{"op":"lookup","service":"s","code":"rank-absent"}}`, ErrInvalid},
		{"name found lookup without port", `{"v":1,"type":"name","data":{"op":"lookup","service":"s"}}`, ErrInvalid},
		{"name failed lookup with port", `{"v":1,"type":"name","data":{"op":"lookup","service":"s","port":"p","code":"name-unknown"}}`, ErrInvalid},
		{"name publish with port", `{"v":1,"type":"name","data":{"op":"publish","service":"s","port":"p"}}`, ErrInvalid},
		{"name message without code", `{"v":1,"type":"name","data":{"op":"unpublish","service":"s","message":"ok"}}`, ErrInvalid},
		{"name long message", `{"v":1,"type":"name","data":{"op":"lookup","service":"s","code":"name-unknown","message":"` + strings.Repeat("x", MaxTextLen+1) + `"}}`, ErrInvalid},
		{"name unknown field", `{"v":1,"type":"name","data":{"op":"publish","service":"s","rank":1}}`, ErrMalformed},
		{"join long agent", `{"v":1,"type":"join","data":{"job":"a","token":"t","kind":"native","agent":"` + strings.Repeat("x", MaxAgentLen+1) + `"}}`, ErrInvalid},
		{"join agent not a string", `{"v":1,"type":"join","data":{"job":"a","token":"t","kind":"native","agent":1}}`, ErrMalformed},
		{"telemetry without data", `{"v":1,"type":"telemetry"}`, ErrInvalid},
		{"telemetry zero now", `{"v":1,"type":"telemetry","data":{"now":0}}`, ErrInvalid},
		{"telemetry now not a number", `{"v":1,"type":"telemetry","data":{"now":"1"}}`, ErrMalformed},
		{"telemetry now fraction", `{"v":1,"type":"telemetry","data":{"now":1.5}}`, ErrMalformed},
		{"telemetry now overflow", `{"v":1,"type":"telemetry","data":{"now":9223372036854775808}}`, ErrMalformed},
		{"telemetry negative dropped", `{"v":1,"type":"telemetry","data":{"now":1,"dropped":-1}}`, ErrInvalid},
		{"telemetry unknown field", `{"v":1,"type":"telemetry","data":{"now":1,"rank":2}}`, ErrMalformed},
		{"telemetry ops not an array", `{"v":1,"type":"telemetry","data":{"now":1,"ops":{}}}`, ErrMalformed},
		{"telemetry too many ops", `{"v":1,"type":"telemetry","data":{"now":1,"ops":[` + strings.Repeat(`{"op":"send","start":1,"end":1},`, MaxTelemetryOps) + `{"op":"send","start":1,"end":1}]}}`, ErrMalformed},
		{"telemetry too many links", `{"v":1,"type":"telemetry","data":{"now":1,"links":[` + strings.Repeat(`{"peer":1},`, MaxTelemetryLinks) + `{"peer":1}]}}`, ErrMalformed},
		{"telemetry too many lines", `{"v":1,"type":"telemetry","data":{"now":1,"console":[` + strings.Repeat(`{"stream":"out","text":""},`, MaxTelemetryConsole) + `{"stream":"out","text":""}]}}`, ErrMalformed},
		{"op no name", `{"v":1,"type":"telemetry","data":{"now":1,"ops":[{"start":1,"end":1}]}}`, ErrInvalid},
		{"op upper case", `{"v":1,"type":"telemetry","data":{"now":1,"ops":[{"op":"Allreduce","start":1,"end":1}]}}`, ErrInvalid},
		{"op long name", `{"v":1,"type":"telemetry","data":{"now":1,"ops":[{"op":"` + strings.Repeat("a", MaxOpNameLen+1) + `","start":1,"end":1}]}}`, ErrInvalid},
		{"op long comm", `{"v":1,"type":"telemetry","data":{"now":1,"ops":[{"op":"bcast","comm":"` + strings.Repeat("c", MaxCommNameLen+1) + `","start":1,"end":1}]}}`, ErrInvalid},
		{"op negative peer", `{"v":1,"type":"telemetry","data":{"now":1,"ops":[{"op":"send","peer":-1,"start":1,"end":1}]}}`, ErrInvalid},
		{"op peer too large", `{"v":1,"type":"telemetry","data":{"now":1,"ops":[{"op":"send","peer":65536,"start":1,"end":1}]}}`, ErrInvalid},
		{"op negative bytes", `{"v":1,"type":"telemetry","data":{"now":1,"ops":[{"op":"send","bytes":-8,"start":1,"end":1}]}}`, ErrInvalid},
		{"op no start", `{"v":1,"type":"telemetry","data":{"now":1,"ops":[{"op":"send","end":1}]}}`, ErrInvalid},
		{"op ends before it starts", `{"v":1,"type":"telemetry","data":{"now":1,"ops":[{"op":"send","start":5,"end":4}]}}`, ErrInvalid},
		{"op long error", `{"v":1,"type":"telemetry","data":{"now":1,"ops":[{"op":"send","start":1,"end":1,"err":"` + strings.Repeat("e", MaxTextLen+1) + `"}]}}`, ErrInvalid},
		{"op unknown field", `{"v":1,"type":"telemetry","data":{"now":1,"ops":[{"op":"send","start":1,"end":1,"tag":3}]}}`, ErrMalformed},
		{"op repeated field", `{"v":1,"type":"telemetry","data":{"now":1,"ops":[{"op":"send","op":"recv","start":1,"end":1}]}}`, ErrMalformed},
		{"op not an object", `{"v":1,"type":"telemetry","data":{"now":1,"ops":["send"]}}`, ErrMalformed},
		{"link negative peer", `{"v":1,"type":"telemetry","data":{"now":1,"links":[{"peer":-1}]}}`, ErrInvalid},
		{"link bad candidate type", `{"v":1,"type":"telemetry","data":{"now":1,"links":[{"peer":1,"local":"tunnel"}]}}`, ErrInvalid},
		{"link negative rtt", `{"v":1,"type":"telemetry","data":{"now":1,"links":[{"peer":1,"rttMicros":-1}]}}`, ErrInvalid},
		{"link negative bytes", `{"v":1,"type":"telemetry","data":{"now":1,"links":[{"peer":1,"sent":-1}]}}`, ErrInvalid},
		{"link unknown field", `{"v":1,"type":"telemetry","data":{"now":1,"links":[{"peer":1,"path":"x"}]}}`, ErrMalformed},
		{"console bad stream", `{"v":1,"type":"telemetry","data":{"now":1,"console":[{"stream":"in","text":"x"}]}}`, ErrInvalid},
		{"console long line", `{"v":1,"type":"telemetry","data":{"now":1,"console":[{"stream":"out","text":"` + strings.Repeat("x", MaxConsoleLineLen+1) + `"}]}}`, ErrInvalid},
		{"console invalid utf-8", "{\"v\":1,\"type\":\"telemetry\",\"data\":{\"now\":1,\"console\":[{\"stream\":\"out\",\"text\":\"\xff\"}]}}", ErrMalformed},
		{"ice server not an object", `{"v":1,"type":"welcome","data":{"protocol":1,"job":"a","rank":0,"size":1,"iceServers":["stun:a"]}}`, ErrMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if runtime.GOOS == "js" && strings.Contains(tc.in, `"type":"telemetry"`) {
				t.Skip("a browser never reads telemetry")
			}
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
	for _, rate := range []float64{0, -1, math.Inf(1), math.NaN()} {
		_, err = Encode(&Welcome{Protocol: Version, Job: "j", Size: 1, Limits: &Limits{MessageRate: rate, MessageBurst: 1, MessageBytes: 1}})
		require.ErrorIs(t, err, ErrInvalid, "rate %v", rate)
	}
	_, err = Encode(&Signal{To: 1, Kind: SignalOffer, Payload: []byte(`{"a":1}x`)})
	require.ErrorIs(t, err, ErrInvalid)
	// the name service's strings: 1..MaxNameLen bytes of valid UTF-8
	for _, m := range []Message{
		&Publish{Service: "", Port: "p"},
		&Publish{Service: "s", Port: ""},
		&Publish{Service: "s\xff", Port: "p"},
		&Publish{Service: "s", Port: "p\xc3"},
		&Publish{Service: strings.Repeat("s", MaxNameLen+1), Port: "p"},
		&Publish{Service: "s", Port: strings.Repeat("p", MaxNameLen+1)},
		&Unpublish{Service: strings.Repeat("s", MaxNameLen+1)},
		&Unpublish{Service: "\xff"},
		&Lookup{},
		&Lookup{Service: "\xed\xa0\x80", Wait: true}, // a surrogate: not UTF-8
	} {
		_, err = Encode(m)
		require.ErrorIs(t, err, ErrInvalid, "%#v", m)
	}
	for _, m := range []Message{
		&Publish{Service: strings.Repeat("s", MaxNameLen), Port: strings.Repeat("é", MaxNameLen/2)},
		&Lookup{Service: "𝄞"},
	} {
		_, err = Encode(m)
		require.NoError(t, err)
	}
}

// Name.Err is nil for a success and otherwise wraps the code's sentinel
// and names the service.
func TestNameErr(t *testing.T) {
	for _, tc := range []struct {
		code ErrorCode
		want error
	}{
		{"", nil},
		{CodeNameTaken, ErrNameTaken},
		{CodeNameUnknown, ErrNameUnknown},
		{CodeNameLimit, ErrNameLimit},
	} {
		t.Run(string(tc.code), func(t *testing.T) {
			err := (&Name{Op: TypeLookup, Service: "ocean", Code: tc.code, Message: "why"}).Err()
			if tc.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.want)
			require.Contains(t, err.Error(), `lookup "ocean"`)
			require.Contains(t, err.Error(), "why")
			for _, other := range []error{ErrNameTaken, ErrNameUnknown, ErrNameLimit} {
				if other != tc.want {
					require.NotErrorIs(t, err, other)
				}
			}
		})
	}
}

// Encode refuses a Telemetry Validate rejects, so a rank never sends one
// the server would answer with bad-message; ClipText makes any text fit.
func TestTelemetryBounds(t *testing.T) {
	ok := OpEvent{Op: "send", Start: 1, End: 2}
	for _, m := range []Message{
		&Telemetry{},
		&Telemetry{Now: -1},
		&Telemetry{Now: 1, Ops: make([]OpEvent, MaxTelemetryOps+1)},
		&Telemetry{Now: 1, Links: make([]LinkStat, MaxTelemetryLinks+1)},
		&Telemetry{Now: 1, Console: make([]ConsoleLine, MaxTelemetryConsole+1)},
		&Telemetry{Now: 1, Ops: []OpEvent{ok, {Op: "send", Start: 0, End: 0}}},
		&Telemetry{Now: 1, Ops: []OpEvent{{Op: "send", Comm: "\xff", Start: 1, End: 1}}},
		&Telemetry{Now: 1, Ops: []OpEvent{{Op: "send", Start: 1, End: 1, Err: "\xc3"}}},
		&Telemetry{Now: 1, Ops: []OpEvent{{Op: "all reduce", Start: 1, End: 1}}},
		&Telemetry{Now: 1, Console: []ConsoleLine{{Stream: StreamOut, Text: "a\xffb"}}},
		&Telemetry{Now: 1, Console: []ConsoleLine{{Text: "no stream"}}},
		&Join{Job: "j", Token: "t", Kind: KindNative, Agent: "\xff"},
	} {
		_, err := Encode(m)
		require.ErrorIs(t, err, ErrInvalid, "%#v", m)
	}
	full := &Telemetry{Now: 1, Ops: make([]OpEvent, MaxTelemetryOps), Links: make([]LinkStat, MaxTelemetryLinks),
		Console: make([]ConsoleLine, MaxTelemetryConsole)}
	for i := range full.Ops {
		full.Ops[i] = ok
	}
	for i := range full.Console {
		full.Console[i] = ConsoleLine{Stream: StreamErr, Text: "x"}
	}
	data, err := Encode(full)
	require.NoError(t, err)
	if runtime.GOOS != "js" { // a browser sends telemetry, never reads one
		got, err := Decode(data)
		require.NoError(t, err)
		require.Equal(t, full, got)
	}

	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"", 4, ""},
		{"abc", 3, "abc"},
		{"abcd", 3, "abc"},
		{"aé", 2, "a"}, // é is 2 bytes: not cut in two
		{"a\xffb", 8, "a\ufffdb"},
		{"\xff\xff\xff", 4, "\ufffd"},
		{"𝄞𝄞", 7, "𝄞"},
		{strings.Repeat("x", 5000), MaxConsoleLineLen, strings.Repeat("x", MaxConsoleLineLen)},
	} {
		got := ClipText(tc.in, tc.n)
		require.Equal(t, tc.want, got, "%q", tc.in)
		require.NoError(t, validText("text", got, tc.n))
	}
}

func TestDecodeString(t *testing.T) {
	for _, s := range []string{"", "v=0\r\n", "x\"y", "𝄞"} {
		got, err := DecodeString(EncodeString(s))
		require.NoError(t, err)
		require.Equal(t, s, got)
	}
	for _, in := range []string{``, `null`, `1`, `{}`, `"a" "b"`, `"a`, "\"\xff\""} {
		_, err := DecodeString([]byte(in))
		require.ErrorIs(t, err, ErrMalformed, in)
	}
}
