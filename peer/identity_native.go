//go:build !js && !wasip1

package peer

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
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

// tlsCertificate is the certificate and its key as DTLS takes them, for
// the native data path (link_native.go), which runs DTLS itself.
func (id *Identity) tlsCertificate() (tls.Certificate, error) {
	pems, err := id.cert.PEM()
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("peer: identity certificate: %w", err)
	}
	c, err := tls.X509KeyPair([]byte(pems), []byte(pems))
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("peer: identity certificate: %w", err)
	}
	return c, nil
}
