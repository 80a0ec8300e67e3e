//go:build !wasip1

package mesh

import (
	"context"

	"github.com/meshmpi/meshmpi/peer"
)

// connectLink opens a WebRTC data channel to a remote rank through sig,
// as the offerer or the answerer: pion natively, the page's
// RTCPeerConnection in a browser (which picks its interfaces itself: the
// loopback mode only matters to native peers, which then publish
// 127.0.0.1 candidates a page run with --allow-loopback-in-peer-connection
// can reach).
//
// remote is the certificate fingerprint the server vouched for the remote
// rank: a remote that presents another is refused (peer.ErrIdentity).
// native says the remote is native Go (a native rank or a WASI host): the
// offerer then offers peer's native data path, several times pion's
// standard throughput; browsers keep the standard path.
func connectLink(ctx context.Context, n Net, remote string, sig peer.Signaler, offerer, native bool) (peer.Link, error) {
	cfg := peer.WebRTCConfig{Loopback: n.Loopback, Identity: n.Identity, RemoteFingerprint: remote, NativeRemote: native, MaxFrame: n.maxFrame}
	for _, s := range n.ICEServers {
		cfg.ICEServers = append(cfg.ICEServers, peer.ICEServer{URLs: s.URLs, Username: s.Username, Credential: s.Credential})
	}
	if offerer {
		return peer.DialWebRTC(ctx, cfg, sig)
	}
	return peer.AcceptWebRTC(ctx, cfg, sig)
}
