package coll

import "github.com/meshmpi/meshmpi/op"

// Transport is what a communicator gives the engine: point-to-point in the
// communicator's collective context, ranks local to the communicator.
type Transport interface {
	Rank() int
	Size() int
	// Send and Recv start a transfer and return at once. Exactly one
	// c.Complete(id, n, err) follows, possibly before they return; it is
	// called with no lock held that the engine might need. A receive
	// completes with n, the bytes received; receiving more than len(p)
	// is an error. Receives match on the tag's sequence bits (SeqMask)
	// and fail if the rest differs.
	Send(peer int, tag uint32, p []byte, c Completer, id int32) error
	Recv(peer int, tag uint32, p []byte, c Completer, id int32) error
	// Abandon is called once when a run fails: the transport completes
	// (with err) this rank's transfers still pending under tag, and when
	// err says the ranks disagree (ErrMismatch) it tells the other ranks,
	// whose runs of this collective then fail too instead of waiting.
	Abandon(tag uint32, err error)
}

// RecvReducer is a Transport that reduces a message into the receive
// buffer as it lands, fragment by fragment (the accumulating receive):
// p = msg ⊕ p with o on elements of t, the message the left operand. The
// engine then runs a plan's fused receive-and-reduce steps without
// touching scratch; other transports receive into scratch and reduce.
// Completion and length rules are Recv's.
type RecvReducer interface {
	RecvReduce(peer int, tag uint32, p []byte, o *op.Op, t op.Type, c Completer, id int32) error
}

// Channels is a Transport that gives a Run transfer handles of its own
// (Channel), one per transfer step, started again at every start: the
// messages of a persistent or pooled Run then take nothing from the
// transport's pools and give nothing back, which on memory links is a
// good part of a small message's cost (MPI-4.1 §7.13's planned transfers).
type Channels interface {
	NewChannel() Channel
}

// Channel is one transfer step's handle. Its methods are the Transport's
// (RecvReduce is called only if the transport is a RecvReducer); one
// transfer at a time is active on a channel. Release gives it back, idle,
// when its Run no longer needs it; a Run that is dropped without it just
// drops its channels.
type Channel interface {
	Send(peer int, tag uint32, p []byte, c Completer, id int32) error
	Recv(peer int, tag uint32, p []byte, c Completer, id int32) error
	RecvReducer
	Release()
}

// Completer receives the completion of one transfer.
type Completer interface {
	Complete(id int32, n int, err error)
}
