//go:build wasip1

package mesh

import (
	"context"
	"fmt"

	"github.com/meshmpi/meshmpi/peer"
)

// connectLink has no network under WASI: a WASI guest cannot open UDP
// sockets, so its host joins the mesh for it and relays its frames.
func connectLink(context.Context, Net, string, peer.Signaler, bool, bool) (peer.Link, error) {
	return nil, fmt.Errorf("webrtc link under GOOS=wasip1 (the WASI host carries the mesh): %w", peer.ErrNotSupported)
}
