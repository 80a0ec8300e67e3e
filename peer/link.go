package peer

import (
	"context"
	"time"
)

// Link is one reliable, ordered, message-preserving connection from this
// endpoint to one peer. The in-process memory link, the WebRTC data channel
// (native pion), the browser's RTCDataChannel and the WASI host link all
// implement it; the Endpoint is its only consumer.
//
// Backpressure follows the data channel's bufferedAmount model: WriteFrame
// always takes the frame (copies or transmits it before returning) and
// reports whether the link is still below its high-water mark. After a false
// report the endpoint stops writing until the link calls HandleWritable.
type Link interface {
	// Bind installs the receiver of this link's events. The endpoint calls it
	// once, before the first WriteFrame; the link must not deliver before.
	Bind(h LinkHandler)
	// WriteFrame sends one frame made of hdr followed by payload, with
	// len(hdr)+len(payload) ≤ MaxFrame(). It never blocks on the network.
	// Both slices may be reused as soon as it returns.
	WriteFrame(hdr, payload []byte) (ready bool, err error)
	// MaxFrame is the largest frame, header included, the remote accepts:
	// min(remote max-message-size, 65535) for WebRTC.
	MaxFrame() int
	// Close tears the link down; the remote side sees HandleClose.
	Close() error
}

// LinkHandler receives a link's events. HandleFrame calls arrive one at a
// time, in the order the remote wrote the frames; the slices are only valid
// during the call.
type LinkHandler interface {
	HandleFrame(hdr, payload []byte)
	// HandleWritable reports that the link dropped below its low-water mark.
	HandleWritable()
	// HandleClose reports that the link is gone; no frame follows.
	HandleClose(err error)
}

// headerWriter is a link whose frames stay in this process (the memory
// link): it hands the remote endpoint the header as a struct, which
// spares both ends encoding and decoding it, the larger part of a small
// message's cost on such a link. h is a value: through an interface, a
// pointer would make every caller's header escape to the heap.
type headerWriter interface {
	writeHeader(h Header, payload []byte) (ready bool, err error)
}

// Path says how a link reaches its peer: what kind of link it is and,
// for a WebRTC link, the ICE candidate pair it uses and ICE's round-trip
// time on it.
type Path struct {
	// Link is the kind of link: "webrtc", "memory", or the name a
	// link of another kind gives itself.
	Link string
	// Local and Remote are the selected candidates' types, "host",
	// "srflx" (the address a NAT mapped, learned by STUN), "prflx"
	// (learned from a connectivity check) or "relay" (a TURN server's);
	// empty for links that do not use ICE.
	Local, Remote string
	// LocalAddr and RemoteAddr are the candidates' addresses.
	LocalAddr, RemoteAddr string
	// RTT is the last round trip ICE measured on the pair, 0 if none yet.
	RTT time.Duration
	// Restarts counts the ICE restarts that healed the link's path.
	Restarts int
}

// Relayed reports whether the path goes through a TURN relay.
func (p Path) Relayed() bool { return p.Local == "relay" || p.Remote == "relay" }

// PathReporter is a link that can say how it reaches its peer.
type PathReporter interface {
	Path() Path
}

// Counter is a link that counts the bytes it moved, frame headers
// included, since it opened: the WebRTC links (native and browser) do,
// with an atomic add per frame, for telemetry. Closed reports whether
// the link is closed or lost (its counts are final).
type Counter interface {
	Counts() (sent, received int64, closed bool)
}

// PathRefresher is a link whose Path is a snapshot taken by an
// asynchronous query (the browser's getStats): RefreshPath takes a new
// one, for a fresh round trip, and returns it. It may block until ctx
// ends; never call it from a JavaScript callback.
type PathRefresher interface {
	RefreshPath(ctx context.Context) Path
}
