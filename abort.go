package meshmpi

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// AbortError is how a job ends when one of its ranks calls Comm.Abort: it
// names the rank (in the world), the code it passed and where it called
// Abort. Errors that wrap it match ErrAborted.
type AbortError struct {
	Rank  int    // the world rank that called Abort
	Code  int    // the code it passed: the job's exit status
	Where string // file:line of the call, "" if unknown
}

func (e *AbortError) Error() string {
	s := "rank " + strconv.Itoa(e.Rank) + " called Abort(" + strconv.Itoa(e.Code) + ")"
	if e.Where != "" {
		s += " at " + e.Where
	}
	return s
}

// Is makes errors.Is(err, ErrAborted) hold for an *AbortError.
func (e *AbortError) Is(target error) bool { return target == ErrAborted }

// Abort ends every rank of the job, with code as its exit status
// (MPI_Abort; meshmpi aborts the whole job whatever the communicator). It
// does not return.
//
// A process rank (Init, Main, a Session) tells the job through its
// signaling server, prints "meshmpi: rank R called Abort(C) at FILE:LINE"
// to standard error and exits with code; every other rank of the job
// prints the same and exits with code too, and meshrun exits with it. In
// a Run world the calling goroutine ends (runtime.Goexit: its deferred
// calls run), every pending and later operation of every rank fails with
// ErrProcFailed (the error names the abort, and matches ErrAborted, where
// the abort reaches the rank before its lost links do), and Run returns
// the *AbortError alone: the other ranks' errors are its consequences.
// Codes outside 0..255 exit with status 255 (a process status has 8
// bits).
func (c *Comm) Abort(code int) {
	e := &AbortError{Code: code, Where: callerPlace()}
	if c == nil || c.p == nil {
		e.Rank = -1
		exitAborted(e, "")
	}
	e.Rank = c.p.world.rank
	if h := c.p.abort; h != nil {
		h(e) // a Run world: ends the goroutine; a session: tells the job
	}
	exitAborted(e, "")
}

// callerPlace is the file:line of Abort's caller.
func callerPlace() string {
	_, file, line, ok := runtime.Caller(2)
	if !ok {
		return ""
	}
	// the file's base name; path/filepath would add a package to every
	// browser rank for this one call (runtime paths use '/' everywhere)
	return file[strings.LastIndexByte(file, '/')+1:] + ":" + strconv.Itoa(line)
}

// exitAborted ends the process for abort e, saying so on standard error;
// by names the rank ending when it is not the one that called Abort.
func exitAborted(e *AbortError, by string) {
	msg := "meshmpi: " + e.Error()
	if by != "" {
		msg += ": ending " + by
	}
	fmt.Fprintln(os.Stderr, msg)
	os.Exit(exitStatus(e.Code))
}

// exitStatus is the process exit status of abort code c.
func exitStatus(c int) int {
	if c < 0 || c > 255 {
		return 255
	}
	return c
}
