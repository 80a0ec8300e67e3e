//go:build !js && !wasip1

package mesh

import (
	"context"

	"github.com/meshmpi/meshmpi/peer"
)

// connectLink opens a WebRTC data channel to a remote rank through sig,
// as the offerer or the answerer.
func connectLink(ctx context.Context, n Net, sig peer.Signaler, offerer bool) (peer.Link, error) {
	cfg := peer.WebRTCConfig{Loopback: n.Loopback}
	for _, s := range n.ICEServers {
		cfg.ICEServers = append(cfg.ICEServers, peer.ICEServer{URLs: s.URLs, Username: s.Username, Credential: s.Credential})
	}
	if offerer {
		return peer.DialWebRTC(ctx, cfg, sig)
	}
	return peer.AcceptWebRTC(ctx, cfg, sig)
}
