//go:build js || wasip1

package meshmpi

import (
	"context"
	"fmt"
	"runtime"

	"github.com/meshmpi/meshmpi/peer"
)

// connectLink has no WebRTC stack to use in a wasm build yet: the browser
// and WASI links arrive with the wasm runtime (wasm/).
func connectLink(context.Context, meshNet, peer.Signaler, bool) (peer.Link, error) {
	return nil, fmt.Errorf("webrtc link under GOOS=%s: %w", runtime.GOOS, ErrNotSupported)
}
