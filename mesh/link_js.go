//go:build js

package mesh

import (
	"context"
	"fmt"
	"runtime"

	"github.com/meshmpi/meshmpi/peer"
)

// connectLink has no WebRTC stack in the browser yet: the syscall/js link
// over the page's RTCPeerConnection is still to come.
func connectLink(context.Context, Net, peer.Signaler, bool) (peer.Link, error) {
	return nil, fmt.Errorf("webrtc link under GOOS=%s: %w", runtime.GOOS, peer.ErrNotSupported)
}
