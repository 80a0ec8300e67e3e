package peer

import (
	"errors"
	"fmt"
	"strings"
)

// ErrIdentity means a peer presented a DTLS certificate other than the one
// the signaling server vouched for its rank: the link is refused.
var ErrIdentity = errors.New("peer identity refused")

// Identity is a rank's DTLS certificate, one for all of its WebRTC links,
// so that the signaling server can vouch for it: the rank announces its
// fingerprint when it joins (authenticated by its seat token), the server
// hands every rank the fingerprints of the others, and a link whose remote
// presents another certificate is refused (WebRTCConfig.RemoteFingerprint).
// DTLS itself proves the remote holds the private key of the certificate
// its SDP names; the vouched fingerprint binds that key to a rank.
type Identity struct {
	fingerprint string // "sha-256 AB:CD:…"
	cert        identityCert
}

// Fingerprint is the certificate's fingerprint as SDP's a=fingerprint
// writes it: the hash function's name, a space, the upper-case hex bytes
// separated by colons.
func (id *Identity) Fingerprint() string { return id.fingerprint }

// normalizeFingerprint writes an SDP fingerprint ("sha-256 ab:cd…") the
// way Identity does; "" if it is not one.
func normalizeFingerprint(f string) string {
	alg, val, ok := strings.Cut(strings.TrimSpace(f), " ")
	val = strings.TrimSpace(val)
	if !ok || alg == "" || val == "" {
		return ""
	}
	return strings.ToLower(alg) + " " + strings.ToUpper(val)
}

// ValidFingerprint reports whether f is a fingerprint as Identity writes
// it: a hash name and colon-separated hex bytes, at most 200 bytes.
func ValidFingerprint(f string) bool {
	if len(f) > 200 || normalizeFingerprint(f) != f {
		return false
	}
	alg, val, _ := strings.Cut(f, " ")
	for _, c := range alg {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	for i, part := range strings.Split(val, ":") {
		if len(part) != 2 || i > 64 {
			return false
		}
		for _, c := range part {
			if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// checkFingerprint reports whether the remote description sdp names the
// certificate want (a fingerprint as Identity writes it) and only that
// one; ErrIdentity otherwise. An SDP that names several certificates is
// refused: DTLS would accept any of them.
func checkFingerprint(sdp, want string) error {
	var got []string
	for _, line := range strings.Split(sdp, "\n") {
		line = strings.TrimSpace(line)
		if f, ok := strings.CutPrefix(line, "a=fingerprint:"); ok {
			got = append(got, normalizeFingerprint(f))
		}
	}
	if len(got) == 1 && got[0] == want {
		return nil
	}
	if len(got) == 0 {
		return fmt.Errorf("the remote's description names no certificate; the signaling server vouched for %s: %w", want, ErrIdentity)
	}
	return fmt.Errorf("the remote presented certificate %s; the signaling server vouched for %s: %w", strings.Join(got, ", "), want, ErrIdentity)
}
