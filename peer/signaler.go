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
)

// Signaler carries connection set-up messages between this rank and one
// remote rank; the signaling client implements it. Messages must arrive in
// the order they were sent, and messages sent before the remote side
// started receiving must be kept for it. Both methods must return promptly
// once ctx is done. The link uses a Signaler only inside DialWebRTC and
// AcceptWebRTC, never after they return.
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
