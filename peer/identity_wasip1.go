//go:build wasip1

package peer

// identityCert is empty under WASI: a guest's links are its host's, and
// the host's identity is the rank's.
type identityCert = struct{}

// NewIdentity is not available under WASI (its host holds the rank's
// WebRTC links and identity).
func NewIdentity() (*Identity, error) { return nil, ErrNotSupported }
