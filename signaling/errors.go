package signaling

import "errors"

// Decoding and validation errors. Decode wraps exactly one of these.
var (
	// ErrTooLarge means a message is larger than the limit (MaxMessageBytes,
	// or the server's configured limit).
	ErrTooLarge = errors.New("signaling: message too large")
	// ErrMalformed means a message is not a well-formed envelope: bad JSON,
	// unknown fields or trailing data.
	ErrMalformed = errors.New("signaling: malformed message")
	// ErrVersion means the envelope carries a protocol version this package
	// does not speak.
	ErrVersion = errors.New("signaling: unsupported protocol version")
	// ErrUnknownType means the envelope's type is not one of the message types.
	ErrUnknownType = errors.New("signaling: unknown message type")
	// ErrInvalid means a message decoded but a field is missing or out of range.
	ErrInvalid = errors.New("signaling: invalid message")
)

// Token errors.
var (
	// ErrBadToken means a token is malformed, not signed with the server's
	// secret, or minted for another job.
	ErrBadToken = errors.New("signaling: bad token")
	// ErrExpired means a token was valid but its expiry has passed.
	ErrExpired = errors.New("signaling: token expired")
)

// ErrJobGone means the job is over and will not form: a rank of it left
// before it formed (CodeJobFailed), or it formed and every rank has left
// (CodeJobEnded).
var ErrJobGone = errors.New("signaling: job failed or ended")

// ErrDeclaredFailed means the server declared this rank failed (a peer
// lost its link to it, or it stopped answering pings) and evicted it, or
// refused its join as a rank declared failed: failures are fail-stop, and
// the rank cannot take part in the job again (CodeDeclaredFailed).
var ErrDeclaredFailed = errors.New("signaling: rank declared failed")

// ErrNotFormed means an open token of a seated job that may grow was
// refused because the job has not formed yet: it admits late ranks only
// (CodeNotFormed). A later join may succeed.
var ErrNotFormed = errors.New("signaling: job not formed yet")

// Name service errors: Name.Err wraps one of these when a Publish,
// Unpublish or Lookup failed (see Names in the package doc). The
// connection stays up.
var (
	// ErrNameTaken means a Publish named a service the job has published
	// already (CodeNameTaken; MPI_ERR_SERVICE).
	ErrNameTaken = errors.New("signaling: service name taken")
	// ErrNameUnknown means an Unpublish or Lookup named a service the job
	// has not published (CodeNameUnknown; MPI_ERR_NAME, or MPI_ERR_SERVICE
	// for an unpublish).
	ErrNameUnknown = errors.New("signaling: service name unknown")
	// ErrNameLimit means the job has published MaxNames services, or the
	// connection has parked MaxWaitingLookups lookups (CodeNameLimit).
	ErrNameLimit = errors.New("signaling: name service limit")
)

// Configuration and client errors.
var (
	// ErrConfig means a server Config is invalid.
	ErrConfig = errors.New("signaling: invalid config")
	// ErrRejected means the server answered with an error message; the
	// *RemoteError in the chain carries its code.
	ErrRejected = errors.New("signaling: rejected by server")
	// ErrClosed means the client is closed.
	ErrClosed = errors.New("signaling: client closed")
)

// RemoteError is an error message received from the server. It wraps
// ErrRejected and, for token failures, ErrBadToken or ErrExpired, for a job
// that is over, ErrJobGone, for a rank declared failed,
// ErrDeclaredFailed, and for a late join before the job formed,
// ErrNotFormed.
type RemoteError struct {
	Code    ErrorCode
	Message string
}

func (e *RemoteError) Error() string {
	return "signaling: server error " + string(e.Code) + ": " + e.Message
}

// Unwrap lets errors.Is match ErrRejected and the token sentinels.
func (e *RemoteError) Unwrap() []error {
	switch e.Code {
	case CodeBadToken:
		return []error{ErrRejected, ErrBadToken}
	case CodeExpiredToken:
		return []error{ErrRejected, ErrExpired}
	case CodeJobFailed, CodeJobEnded:
		return []error{ErrRejected, ErrJobGone}
	case CodeDeclaredFailed:
		return []error{ErrRejected, ErrDeclaredFailed}
	case CodeNotFormed:
		return []error{ErrRejected, ErrNotFormed}
	}
	return []error{ErrRejected}
}
