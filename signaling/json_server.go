//go:build !js

package signaling

import "strings"

// internKey returns the interned member name spelled by b, if it is one
// of the envelope's or the messages' (knownKeys): the server reads a key
// without allocating. A browser rank reads few messages and leaves the
// table out (proto_js.go).
func internKey(b []byte) (string, bool) {
	k, ok := knownKeys[string(b)]
	return k, ok
}

// knownKeys are the member names of the envelope and the messages.
var knownKeys = func() map[string]string {
	m := make(map[string]string)
	for _, k := range strings.Fields(`v type data job token rank kind fingerprint agent protocol size iceServers
		settings limits max late urls username credential messageRate messageBurst messageBytes kinds
		fingerprints to from payload peer local remote rttMicros also reason aborted code message where
		service port wait op id now ops links console dropped comm bytes start end err sent received
		stream text host hosts`) {
		m[k] = k
	}
	return m
}()
