package wasm

import "errors"

// ErrProtocol means the other side of the guest↔host stream broke the
// protocol: a length out of bounds, an unknown message type, a body of the
// wrong size, a rank out of range. The stream is closed.
var ErrProtocol = errors.New("wasm: guest/host protocol violation")

// The name service's errors, as a guest sees them (Guest.Publish,
// Unpublish, Lookup): the host's answer names the class, which the guest
// turns back into these (the guest does not link package signaling,
// whose ErrNameTaken, ErrNameUnknown and ErrNameLimit they mirror). They
// come wrapped with the call and its service name ("wasm: publish
// "svc": service name taken"), so their own text has no prefix.
var (
	// ErrNameTaken: Publish of a service name that is published already.
	ErrNameTaken = errors.New("service name taken")
	// ErrNameUnknown: Unpublish of a service name that is not published.
	ErrNameUnknown = errors.New("service name not published")
	// ErrNameLimit: the job holds as many names as its signaling server
	// keeps for it.
	ErrNameLimit = errors.New("too many service names")
)
