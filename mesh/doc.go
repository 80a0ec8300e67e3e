// Package mesh connects the ranks of a job to each other: it is the
// peer.Dialer that turns a rank's first message to another rank into a
// WebRTC data channel, set up through the job's signaling connection.
//
// It sits between the signaling client (signaling.Client, which joined the
// job) and the point-to-point layer (peer): the root package builds one per
// rank that joins a job, and a WASI host builds one for the guest rank it
// carries. Every pair of ranks has exactly one offerer, the lower rank, so
// two ranks that start talking at once never build two connections; a
// higher rank that wants a link sends the lower one a connect request and
// answers the offer that follows. A departure the server announces fails
// the rank's pending operations with peer.ErrProcFailed (Endpoint.FailPeer).
//
// Failure knowledge spreads through the server: a link the rank's
// endpoint loses (peer.Endpoint.OnPeerFailed; a WASI host calls
// Mesh.Suspect for the links it relays) is reported to the server
// (signaling.Suspect), which declares the remote rank failed and tells
// every rank of the job, so ranks with no link to it learn too, and a
// rank frozen or cut off from one peer is out of the job for good. A rank
// the server declared failed is evicted: the mesh fails every peer with
// an error wrapping signaling.ErrDeclaredFailed and tells Net.Evicted.
//
// The link itself is peer's WebRTC link, pion's native stack or the
// browser's RTCPeerConnection by build target (link.go); under WASI there
// is none, the host carries the mesh (link_wasip1.go).
package mesh
