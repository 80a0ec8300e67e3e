// Package peer is meshmpi's point-to-point layer: everything between a
// typed Send or Recv in the root package and the bytes on a link.
//
// An Endpoint is one rank. It matches incoming messages against posted
// receives by (context, source, tag) with AnySource and AnyTag wildcards,
// keeping MPI's non-overtaking order per sender and context (MPI-4.1 §3.5);
// what arrives before its receive waits in the unexpected queue.
//
// Messages up to the eager limit travel as one Eager frame. Larger ones,
// and every synchronous send, use a rendezvous: the sender announces the
// message (RTS), the receiver answers once it has matched it (CTS), and the
// data frames land straight in the receive buffer. An unexpected large
// message therefore costs the receiver one queue entry, never a copy of the
// message. The frame format is in frame.go; this is its version 2, which
// added the Credit frame and the CTS's refusal flag (version 1 peers are
// refused with ErrVersion), and later, within version 2, the Cancel and
// CancelReply frames and the eager frame's message id in its seq field
// (cancel.go: withdrawing an unmatched send). A peer built before them
// ignores the id; a cancel sent to it fails the link as an unknown frame,
// so the ranks of a job that cancels sends must share this build.
//
// Every resource a peer can make an endpoint hold is bounded. Unexpected
// eager data is flow-controlled by credit (credit.go): each link gets a
// share of the endpoint's UnexpectedLimit, a sender past its share sends
// by rendezvous instead, and the receiver grants credit back as it
// receives; a peer that sends past its credit, or announces more
// rendezvous messages than an endpoint can have sends, or leaves more
// cancel replies unread than it can have cancels, has its link failed. An endpoint has at most maxSlots rendezvous operations in
// flight (ErrResources past that), and its pools keep at most a quarter of
// the limit in idle buffers and a few thousand idle Ops and entries.
//
// Each peer rank is reached through a Link: reliable, ordered,
// message-preserving, with data-channel-style backpressure. The memory link
// here serves in-process worlds and tests (it passes headers as structs,
// never encoded: headerWriter). It hands a frame to the receiving
// endpoint on the writer's goroutine, except while a goroutine of the
// receiving rank polls (Endpoint.Polling): then small frames wait in the
// link's inbox and the receiver handles them on its own core, as MPICH's
// shared-memory queues work. The WebRTC, browser and WASI links
// implement the same interface. peer knows nothing of communicators,
// groups or requests: ranks here are world ranks and contexts are numbers
// the root package assigns.
//
// Nothing on the message path allocates once the endpoint's pools are
// warm: Ops, unexpected-message entries and their buffers are recycled.
package peer
