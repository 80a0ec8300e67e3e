package peer

import (
	"errors"
	"fmt"
)

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
	// ErrCancelArg means CancelSend was given an Op that is not a started
	// send, or a cancel Op that is still active.
	ErrCancelArg = errors.New("not a started send")
)

// Failure is the error of an operation on a lost peer: "what: cause",
// matching ErrProcFailed. It names ErrProcFailed once, even when cause
// already wraps it (a departure the mesh reported, a link that failed),
// so messages never read "process failed: process failed".
func Failure(what string, cause error) error {
	if cause == nil {
		return fmt.Errorf("%s: %w", what, ErrProcFailed)
	}
	if errors.Is(cause, ErrProcFailed) {
		return fmt.Errorf("%s: %w", what, cause)
	}
	return fmt.Errorf("%s: %w: %w", what, ErrProcFailed, cause)
}

// TagMismatchError is a message whose tag differs from the receive's in
// the bits the receive matched on (RecvNotify's partial matching: the
// collective engine's signature bits). It matches ErrTagMismatch.
type TagMismatchError struct {
	Source    int // the sender's rank
	Tag, Want int // the message's tag and the receive's
}

func (e *TagMismatchError) Error() string {
	return fmt.Sprintf("message from rank %d tagged %#x where %#x was expected: %s", e.Source, uint32(e.Tag), uint32(e.Want), ErrTagMismatch)
}

// Is makes errors.Is(err, ErrTagMismatch) hold.
func (e *TagMismatchError) Is(target error) bool { return target == ErrTagMismatch }
