package peer

import "context"

// Signal kinds exchanged through a Signaler while a WebRTC link connects.
const (
	// SignalOffer carries the offerer's SDP (the text of the session description).
	SignalOffer = "offer"
	// SignalAnswer carries the answerer's SDP.
	SignalAnswer = "answer"
	// SignalCandidate carries one trickled ICE candidate, the JSON of an
	// RTCIceCandidateInit ({"candidate": …, "sdpMid": …, "sdpMLineIndex": …}).
	SignalCandidate = "candidate"
	// SignalRestart asks the offerer to restart ICE: the answerer's path
	// broke (no payload). The offerer answers with a new SignalOffer.
	SignalRestart = "restart"
)

// Signaler carries connection set-up messages between this rank and one
// remote rank; the signaling client implements it. Messages must arrive in
// the order they were sent, and messages sent before the remote side
// started receiving must be kept for it. Both methods must return promptly
// once ctx is done. The link keeps using its Signaler after DialWebRTC
// or AcceptWebRTC return, for late candidates and ICE restarts, until it
// is closed; a Recv error ends that use (the link then carries on without
// restarts).
type Signaler interface {
	Send(ctx context.Context, kind string, payload []byte) error
	Recv(ctx context.Context) (kind string, payload []byte, err error)
}

// ICEServer is a STUN or TURN server (RTCIceServer).
type ICEServer struct {
	URLs       []string // stun:, turn: or turns: URLs
	Username   string   // TURN only
	Credential string   // TURN only
}
