package abi

/*
#include <stdint.h>
*/
import "C"

import "github.com/meshmpi/meshmpi"

// MPI_Comm_idup (MPI-4.1 §7.4.2) over the Go API's Idup. The new
// communicator gets its handle, its attributes (copied at the call, as
// MPI_Comm_dup copies them) and the parent's error handler when the
// request completes, and only then is *newcomm written: MPI lets the
// program use it no earlier (MPICH's comm/comm_idup*).
func idup(call string, comm, newcomm, req uintptr) C.int {
	e, err := lookupComm(comm)
	if err != nil {
		return raise(comm, call, err)
	}
	if newcomm == 0 || req == 0 {
		return raise(comm, call, errorf(errArg, "newcomm or request is NULL"))
	}
	attrs, err := copyAttrs(comm, e)
	if err != nil {
		return raise(comm, call, err)
	}
	n := new(*meshmpi.Comm)
	r, err := e.c.Idup(n)
	if err != nil {
		return raise(comm, call, err)
	}
	state.mu.Lock()
	h, ok := state.reqs.add(&reqEntry{r: r, comm: comm, size: 1, complete: func() {
		if *n == nil { // the request's error says why
			putHandle(newcomm, commNull)
			return
		}
		ch, err := addComm(e, *n)
		if err != nil {
			putHandle(newcomm, commNull)
			return
		}
		state.mu.Lock()
		nc, _ := state.comms.get(ch)
		nc.attrs = attrs
		state.mu.Unlock()
		putHandle(newcomm, ch)
	}})
	state.mu.Unlock()
	if !ok {
		return raise(comm, call, errorf(errIntern, "too many requests"))
	}
	putHandle(req, h)
	return errSuccess
}

//export mpiabi_Comm_idup
func mpiabi_Comm_idup(comm, newcomm, req uintptr) C.int {
	return idup("MPI_Comm_idup", comm, newcomm, req)
}

// MPI_Comm_idup_with_info reads no hints, as MPI_Comm_dup_with_info.
//
//export mpiabi_Comm_idup_with_info
func mpiabi_Comm_idup_with_info(comm, info, newcomm, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Comm_idup_with_info", err)
	}
	return idup("MPI_Comm_idup_with_info", comm, newcomm, req)
}
