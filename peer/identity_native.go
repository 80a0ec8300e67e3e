//go:build !js && !wasip1

package peer

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"

	"github.com/pion/webrtc/v4"
)

type identityCert = *webrtc.Certificate

// NewIdentity makes a rank's certificate: ECDSA P-256, as browsers make
// theirs, valid for a month (pion's default), far longer than any job.
func NewIdentity() (*Identity, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("peer: identity key: %w", err)
	}
	cert, err := webrtc.GenerateCertificate(key)
	if err != nil {
		return nil, fmt.Errorf("peer: identity certificate: %w", err)
	}
	fps, err := cert.GetFingerprints()
	if err != nil || len(fps) == 0 {
		return nil, fmt.Errorf("peer: identity fingerprint: %v", err)
	}
	return &Identity{fingerprint: normalizeFingerprint(fps[0].Algorithm + " " + fps[0].Value), cert: cert}, nil
}
