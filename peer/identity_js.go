//go:build js

package peer

import (
	"context"
	"fmt"
	"syscall/js"

	"github.com/meshmpi/meshmpi/internal/jsglue"
)

type identityCert = js.Value

// NewIdentity makes the tab's certificate with
// RTCPeerConnection.generateCertificate (ECDSA P-256), which every
// RTCPeerConnection of the rank then uses.
func NewIdentity() (*Identity, error) {
	ctor := js.Global().Get("RTCPeerConnection")
	if ctor.Type() != js.TypeFunction || ctor.Get("generateCertificate").Type() != js.TypeFunction {
		return nil, fmt.Errorf("peer: this JavaScript context cannot make a WebRTC certificate: %w", ErrNotSupported)
	}
	alg := js.Global().Get("Object").New()
	alg.Set("name", "ECDSA")
	alg.Set("namedCurve", "P-256")
	var p js.Value
	if err := jsglue.Try(func() { p = ctor.Call("generateCertificate", alg) }); err != nil {
		return nil, fmt.Errorf("peer: identity certificate: %w", err)
	}
	cert, err := await(context.Background(), p)
	if err != nil {
		return nil, fmt.Errorf("peer: identity certificate: %w", err)
	}
	fps := cert.Call("getFingerprints")
	if fps.Length() == 0 {
		return nil, fmt.Errorf("peer: identity certificate has no fingerprint")
	}
	fp := fps.Index(0)
	return &Identity{fingerprint: normalizeFingerprint(fp.Get("algorithm").String() + " " + fp.Get("value").String()), cert: cert}, nil
}
