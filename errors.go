package meshmpi

import (
	"errors"

	"github.com/meshmpi/meshmpi/coll"
	"github.com/meshmpi/meshmpi/peer"
)

// MPI error classes (MPI-4.1 §9.4) as sentinel errors. Every error meshmpi
// returns wraps one of them with context; test with errors.Is.
var (
	// ErrBuffer: an invalid buffer, such as a send and receive buffer that must differ.
	ErrBuffer = errors.New("invalid buffer")
	// ErrCount: an invalid count, or a message that is not a whole number of elements.
	ErrCount = errors.New("invalid count")
	// ErrType: an invalid or mismatched element type.
	ErrType = errors.New("invalid datatype")
	// ErrTag: a tag outside [0, TagUB] (or AnyTag where a wildcard is not allowed).
	ErrTag = errors.New("invalid tag")
	// ErrComm: a nil, freed or otherwise unusable communicator.
	ErrComm = errors.New("invalid communicator")
	// ErrRank: a rank outside the communicator (or a wildcard where none is allowed).
	ErrRank = errors.New("invalid rank")
	// ErrRoot: an invalid root rank.
	ErrRoot = errors.New("invalid root")
	// ErrGroup: an invalid group, or one that does not fit the operation.
	ErrGroup = errors.New("invalid group")
	// ErrOp: an invalid reduction operation.
	ErrOp = errors.New("invalid operation")
	// ErrArg: an invalid argument not covered by a more specific class.
	ErrArg = errors.New("invalid argument")
	// ErrTopology: a communicator without the process topology the call
	// needs (a Cartesian query on a graph, a neighborhood collective on a
	// plain communicator).
	ErrTopology = errors.New("invalid topology")
	// ErrRequest: an invalid request or a request used in the wrong state
	// (starting an active request, waiting on a freed one, freeing an
	// active persistent request, cancelling an inactive request or a
	// collective).
	ErrRequest = errors.New("invalid request")
	// ErrInStatus: a multiple-completion call (Waitall …) in which some
	// request failed; the statuses say which, and the error joins theirs.
	ErrInStatus = errors.New("error in status")
	// ErrNotSupported: the operation is not available in this build or world.
	ErrNotSupported = peer.ErrNotSupported
	// ErrTruncate: a message longer than the receive buffer. The buffer
	// holds the message's first bytes; nothing is written past its end.
	ErrTruncate = peer.ErrTruncate
	// ErrProcFailed: a process the operation involves has failed or left,
	// or the world was aborted.
	ErrProcFailed = peer.ErrProcFailed
	// ErrResources: a bounded resource of the runtime is used up (more
	// than 2^20-1 rendezvous operations in flight at one rank); the
	// operation fails, the world goes on.
	ErrResources = peer.ErrResources
	// ErrPort: a port name that is malformed, or names a port that is
	// not open (MPI_ERR_PORT): Accept on a port this process did not open
	// or closed, Connect to a port that its owner closed.
	ErrPort = errors.New("invalid port")
	// ErrService: publishing a service name that is published already, or
	// unpublishing one that is not (MPI_ERR_SERVICE).
	ErrService = errors.New("invalid service name")
	// ErrName: a service name that is not published (MPI_ERR_NAME), or
	// one that is malformed.
	ErrName = errors.New("invalid name")
	// ErrRevoked: the communicator was revoked (Comm.Revoke, on this
	// rank or another): every operation on it fails, except the recovery
	// calls (Agree, Shrink, GetFailed, AckFailed …).
	ErrRevoked = errors.New("communicator revoked")
	// ErrProcFailedPending: an AnySource receive was interrupted by the
	// failure of a rank of its communicator that is not acknowledged
	// (Comm.AckFailed); a nonblocking one stays active (wait on it again
	// after AckFailed, or Cancel it). The error matches ErrProcFailed too.
	ErrProcFailedPending = errors.New("process failed, operation pending")
	// ErrTimeout: a Run with WithTimeout did not finish in time; the error
	// says what every rank was blocked in.
	ErrTimeout = errors.New("timed out")
	// ErrAborted: a rank of the job called Comm.Abort; the error wraps
	// the *AbortError that names it.
	ErrAborted = errors.New("job aborted")
	// ErrAlgorithm: a collective algorithm forced by a Hint or a job
	// setting does not exist or its restrictions do not hold for the call.
	ErrAlgorithm = coll.ErrAlgorithm
)
