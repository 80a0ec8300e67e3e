//go:build cgo

package abi

/*
#include <stdint.h>
*/
import "C"

import "sync/atomic"

// The point-to-point calls' fast path. A C rank's 8 B latency is the Go
// rank's plus what each MPI_Send and MPI_Recv costs on top of the Go
// API's call: the cgo crossing, which stays, and the binding's own work,
// which this keeps to an index and a few compares (issue 19's bar: within
// 1.2× of a Go rank's on the same link). A call whose arguments are not
// the common case (an error to report, MPI_DATATYPE_NULL with count 0, a
// derived type) takes the checked path, which reports exactly what it did
// before. BenchmarkP2PBinding measures the difference to the Go API.

// predefBase is the first predefined datatype handle (MPI_DATATYPE_NULL);
// the predefined ones lie below predefBase+len(predef) (include/mpi.h).
const predefBase uintptr = typeNull

// predef is dtypes by handle, for the types meshmpi moves (nil for the
// others and for the handles that are not types): an index where the map
// costs a hash lookup per call.
var predef = func() (t [0x100]*dtype) {
	for h, d := range dtypes {
		if d.k != nil && h >= predefBase && h-predefBase < uintptr(len(t)) {
			t[h-predefBase] = &d
		}
	}
	return t
}()

// fastType is the predefined datatype of handle h if meshmpi moves it;
// ok is false for every other handle (lookupType says why).
func fastType(h uintptr) (d *dtype, ok bool) {
	if i := h - predefBase; i < uintptr(len(predef)) {
		d = predef[i]
	}
	return d, d != nil
}

// isDerived reports whether h may be a derived datatype's handle, without
// a lock: the predefined ones take the direct path.
func isDerived(h uintptr) bool { return h >= firstType }

// ret is raise for the common case, inlined: a call that succeeded costs
// one compare.
func ret(comm uintptr, call string, err error) C.int {
	if err == nil {
		return errSuccess
	}
	return raise(comm, call, err)
}

// fastWorld and fastSelf are MPI_COMM_WORLD's and MPI_COMM_SELF's entries
// while MPI is initialized (initialize sets them, MPI_Finalize clears
// them first): the point-to-point calls find the communicator most
// programs pass without taking the tables' lock, which every thread's
// call otherwise takes (a lock and an unlock on each MPI_Send and
// MPI_Recv).
var fastWorld, fastSelf atomic.Pointer[commEntry]

// commFast is lookupComm, without the lock for MPI_COMM_WORLD and
// MPI_COMM_SELF.
func commFast(h uintptr) (*commEntry, error) {
	var p *atomic.Pointer[commEntry]
	switch h {
	case world:
		p = &fastWorld
	case self:
		p = &fastSelf
	default:
		return lookupComm(h)
	}
	if e := p.Load(); e != nil {
		return e, nil
	}
	return lookupComm(h) // not initialized, or finalized: it says which
}
