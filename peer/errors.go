package peer

import "errors"

// Errors of the point-to-point layer. The root package re-exports the MPI
// error classes among them, so users test them with errors.Is.
var (
	// ErrTruncate means a message was longer than the receive buffer; the
	// buffer holds the message's first bytes and nothing past its end.
	ErrTruncate = errors.New("message truncated")
	// ErrProcFailed means the peer an operation involves is gone: its link
	// closed or failed, or the job was aborted.
	ErrProcFailed = errors.New("process failed")
	// ErrFrame means a malformed frame arrived; the link that carried it is closed.
	ErrFrame = errors.New("malformed frame")
	// ErrVersion means a frame of an unknown protocol version arrived.
	ErrVersion = errors.New("unsupported frame version")
	// ErrTagMismatch means a receive that matches on part of the tag
	// (RecvNotify) met a message whose other tag bits differ.
	ErrTagMismatch = errors.New("message tag differs from the receive's")
	// ErrNotSupported means the operation is not available in this build
	// (a link kind this target has no stack for).
	ErrNotSupported = errors.New("not supported")
	// ErrResources means a bounded resource of the endpoint is used up
	// (its table of rendezvous operations): the operation fails, the
	// endpoint and its links go on.
	ErrResources = errors.New("resources exhausted")
	// ErrClosed means the endpoint or link was closed locally.
	ErrClosed = errors.New("endpoint closed")
)
