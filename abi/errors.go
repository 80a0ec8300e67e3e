package abi

/*
#include <stdint.h>
#include <stdio.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/meshmpi/meshmpi"
)

// MPI error classes (include/mpi.h).
const (
	errSuccess     = 0
	errBuffer      = 1
	errCount       = 2
	errType        = 3
	errTag         = 4
	errComm        = 5
	errRank        = 6
	errRequest     = 7
	errRoot        = 8
	errGroup       = 9
	errOp          = 10
	errTopology    = 11
	errArg         = 13
	errUnknown     = 14
	errTruncate    = 15
	errOther       = 16
	errIntern      = 17
	errInStatus    = 19
	errKeyval      = 36
	errName        = 38
	errPort        = 43
	errService     = 51
	errUnsupported = 55
	errProcAborted = 58
	errErrhandler  = 61
	errLastClass   = 61
	errLastCode    = 0x3fff
)

// classNames are the classes' texts for MPI_Error_string.
var classNames = map[int32]string{
	errSuccess: "MPI_SUCCESS: no error", errBuffer: "MPI_ERR_BUFFER: invalid buffer",
	errCount: "MPI_ERR_COUNT: invalid count", errType: "MPI_ERR_TYPE: invalid datatype",
	errTag: "MPI_ERR_TAG: invalid tag", errComm: "MPI_ERR_COMM: invalid communicator",
	errRank: "MPI_ERR_RANK: invalid rank", errRequest: "MPI_ERR_REQUEST: invalid request",
	errRoot: "MPI_ERR_ROOT: invalid root", errGroup: "MPI_ERR_GROUP: invalid group",
	errOp: "MPI_ERR_OP: invalid operation", errTopology: "MPI_ERR_TOPOLOGY: invalid topology",
	12: "MPI_ERR_DIMS: invalid dimensions", errArg: "MPI_ERR_ARG: invalid argument",
	errUnknown: "MPI_ERR_UNKNOWN: unknown error", errTruncate: "MPI_ERR_TRUNCATE: message truncated",
	errOther: "MPI_ERR_OTHER: other error", errIntern: "MPI_ERR_INTERN: internal error",
	18: "MPI_ERR_PENDING: operation pending", errInStatus: "MPI_ERR_IN_STATUS: error in a status",
	errKeyval: "MPI_ERR_KEYVAL: invalid attribute key", errName: "MPI_ERR_NAME: invalid name",
	errPort: "MPI_ERR_PORT: invalid port", errService: "MPI_ERR_SERVICE: invalid service name",
	errUnsupported: "MPI_ERR_UNSUPPORTED_OPERATION: operation not supported",
	errProcAborted: "MPI_ERR_PROC_ABORTED: a process aborted",
	errErrhandler:  "MPI_ERR_ERRHANDLER: invalid error handler",
	errBase:        "MPI_ERR_BASE: invalid base",
}

// mpiError is an error the binding itself finds in a call's arguments.
type mpiError struct {
	class int32
	msg   string
}

func (e *mpiError) Error() string { return e.msg }

func errorf(class int32, format string, args ...any) error {
	return &mpiError{class: class, msg: fmt.Sprintf(format, args...)}
}

// classes maps the Go API's sentinels to MPI classes, most specific first.
var classes = []struct {
	err   error
	class int32
}{
	{meshmpi.ErrAborted, errProcAborted},
	{meshmpi.ErrInStatus, errInStatus},
	{meshmpi.ErrTruncate, errTruncate},
	{meshmpi.ErrBuffer, errBuffer},
	{meshmpi.ErrCount, errCount},
	{meshmpi.ErrType, errType},
	{meshmpi.ErrTag, errTag},
	{meshmpi.ErrRoot, errRoot},
	{meshmpi.ErrRank, errRank},
	{meshmpi.ErrComm, errComm},
	{meshmpi.ErrRequest, errRequest},
	{meshmpi.ErrGroup, errGroup},
	{meshmpi.ErrOp, errOp},
	{meshmpi.ErrTopology, errTopology},
	{meshmpi.ErrPort, errPort},
	{meshmpi.ErrService, errService},
	{meshmpi.ErrName, errName},
	{meshmpi.ErrNotSupported, errUnsupported},
	{meshmpi.ErrProcFailed, errOther},
	{meshmpi.ErrArg, errArg},
}

// classOf is the MPI error class of err.
func classOf(err error) int32 {
	if errors.Is(err, meshmpi.ErrInStatus) {
		// before the errors it wraps, which may be the binding's own
		// (a generalized request's callback's, grequest.go)
		return errInStatus
	}
	var me *mpiError
	if errors.As(err, &me) {
		return me.class
	}
	for _, c := range classes {
		if errors.Is(err, c.err) {
			return c.class
		}
	}
	return errOther
}

// codes gives every raised error a code of its own, above the classes, so
// that MPI_Error_string says what went wrong and where; the table is a
// ring that reuses its oldest codes.
var codes struct {
	mu   sync.Mutex
	next int32
	msgs map[int32]codeEntry
}

type codeEntry struct {
	class int32
	msg   string
}

const firstCode = 64

func newCode(class int32, msg string) int32 {
	codes.mu.Lock()
	defer codes.mu.Unlock()
	if codes.msgs == nil {
		codes.msgs = map[int32]codeEntry{}
		codes.next = firstCode
	}
	c := codes.next
	codes.next++
	if codes.next > errLastCode {
		codes.next = firstCode
	}
	codes.msgs[c] = codeEntry{class: class, msg: msg}
	return c
}

// lookupCode returns a code's class and message.
func lookupCode(code int32) (codeEntry, bool) {
	if code >= 0 && code <= errLastClass {
		s, ok := classNames[code]
		if !ok {
			s = fmt.Sprintf("MPI error class %d", code)
		}
		return codeEntry{class: code, msg: s}, true
	}
	codes.mu.Lock()
	defer codes.mu.Unlock()
	e, ok := codes.msgs[code]
	return e, ok
}

// raise reports err from call on communicator comm through its error
// handler: under MPI_ERRORS_RETURN it returns a new error code; under
// MPI_ERRORS_ARE_FATAL (and MPI_ERRORS_ABORT) it prints the message and
// ends the job.
func raise(comm uintptr, call string, err error) C.int {
	if err == nil {
		return errSuccess
	}
	class := classOf(err)
	msg := call + ": " + err.Error()
	code := newCode(class, msg)
	if errhandlerOf(comm) == ehReturn {
		return C.int(code)
	}
	fatal(msg, class)
	return C.int(code)
}

// fatal ends the job after an error under MPI_ERRORS_ARE_FATAL.
func fatal(msg string, class int32) {
	name := classNames[class]
	if i := indexByte(name, ':'); i > 0 {
		name = name[:i]
	}
	C.fflush(nil) // the program's buffered output, which exit would lose
	fmt.Fprintf(os.Stderr, "meshmpi: %s (%s); MPI_ERRORS_ARE_FATAL ends the job\n", msg, name)
	if w := worldComm(); w != nil {
		w.Abort(1)
	}
	os.Exit(1)
}

func indexByte(s string, b byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == b {
			return i
		}
	}
	return -1
}

//export mpiabi_unsupported
func mpiabi_unsupported(comm uintptr, call *C.char) C.int {
	name := C.GoString(call)
	return raise(comm, name, errorf(errUnsupported, "meshmpi does not implement %s yet", name))
}

//export mpiabi_Error_class
func mpiabi_Error_class(code int32, class uintptr) C.int {
	e, ok := lookupCode(code)
	if !ok {
		return raise(self, "MPI_Error_class", errorf(errArg, "%d is not an error code", code))
	}
	if class == 0 {
		return raise(self, "MPI_Error_class", errorf(errArg, "errorclass is NULL"))
	}
	*(*int32)(ptr(class)) = e.class
	return errSuccess
}

//export mpiabi_Error_string
func mpiabi_Error_string(code int32, str, resultlen uintptr) C.int {
	e, ok := lookupCode(code)
	if !ok {
		return raise(self, "MPI_Error_string", errorf(errArg, "%d is not an error code", code))
	}
	if str == 0 || resultlen == 0 {
		return raise(self, "MPI_Error_string", errorf(errArg, "string or resultlen is NULL"))
	}
	*(*int32)(ptr(resultlen)) = int32(putString(str, e.msg, maxErrorString))
	return errSuccess
}

const (
	maxErrorString    = 512
	maxProcessorName  = 256
	maxLibraryVersion = 8192
	maxObjectName     = 128
)

// putString writes s to the C buffer at dst of max bytes (the NUL
// included), cut to fit, and returns the length written without the NUL.
func putString(dst uintptr, s string, max int) int {
	if len(s) > max-1 {
		s = s[:max-1]
	}
	b := cbytes(dst, len(s)+1)
	copy(b, s)
	b[len(s)] = 0
	return len(s)
}
