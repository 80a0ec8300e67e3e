package meshmpi

import (
	"fmt"
	"time"
)

// LinkInfo says how this rank reaches another: the kind of link and, over
// WebRTC, the ICE path it took — directly between host addresses, through
// the addresses NATs mapped (server-reflexive, learned from a STUN server,
// or peer-reflexive, learned from a connectivity check), or through a TURN
// relay — and ICE's round-trip time on it.
type LinkInfo struct {
	// Link is "webrtc"; "memory" (ranks in one process: goroutine
	// ranks, or the WASI ranks one host process carries); "shm" (ranks
	// in two processes of one host and user, native or WASI hosts,
	// through rings in shared memory) or "unix" (the same over a
	// unix-domain socket, where shared memory cannot be had); "self";
	// "wasi-host" (a WASI guest's link, a stream through its host, which
	// holds the link and reports its path to the signaling server); or
	// "" when there is no link to the rank yet (links open on first use
	// in large jobs). The job setting SettingLink "webrtc" makes every
	// pair use WebRTC.
	Link string
	// Local and Remote are the ICE candidate types of the two ends:
	// "host", "srflx", "prflx" or "relay"; empty off WebRTC.
	Local, Remote string
	// LocalAddr and RemoteAddr are the candidates' addresses (host:port).
	LocalAddr, RemoteAddr string
	// RTT is the last round trip ICE measured, 0 if none yet.
	RTT time.Duration
	// Restarts counts the ICE restarts that healed the link when its path
	// broke (a route gone, a NAT that forgot its mapping, a relay
	// restarted).
	Restarts int
}

// Relayed reports whether the link goes through a TURN relay.
func (l LinkInfo) Relayed() bool { return l.Local == "relay" || l.Remote == "relay" }

// LinkInfo reports how this rank's link to rank of c reaches it (a rank of
// the remote group on an intercommunicator). An invalid rank is ErrRank.
func (c *Comm) LinkInfo(rank int) (LinkInfo, error) {
	if err := c.check(); err != nil {
		return LinkInfo{}, err
	}
	peers := c.peerRanks()
	if rank < 0 || rank >= len(peers) {
		return LinkInfo{}, fmt.Errorf("link info on %s: rank %d: %w", c, rank, ErrRank)
	}
	w := peers[rank]
	if w == c.p.ep.Rank() {
		return LinkInfo{Link: "self"}, nil
	}
	p, ok := c.p.ep.LinkPath(w)
	if !ok {
		return LinkInfo{}, nil
	}
	return LinkInfo{Link: p.Link, Local: p.Local, Remote: p.Remote, LocalAddr: p.LocalAddr, RemoteAddr: p.RemoteAddr, RTT: p.RTT, Restarts: p.Restarts}, nil
}
