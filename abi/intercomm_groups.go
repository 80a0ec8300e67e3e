package abi

/*
#include <stdint.h>
*/
import "C"

import "github.com/meshmpi/meshmpi"

// MPI_Intercomm_create_from_groups (MPI-4.1 §7.6.2) over the Go API's
// IntercommCreateFromGroups, with MPI_COMM_WORLD as the parent: the
// binding has no sessions, so a program's groups are groups of
// MPI_COMM_WORLD's processes. The new intercommunicator gets the error
// handler passed; the info is not read.

//export mpiabi_Intercomm_create_from_groups
func mpiabi_Intercomm_create_from_groups(lg uintptr, localLeader int32, rg uintptr, remoteLeader int32, stringtag, info, eh, out uintptr) C.int {
	const call = "MPI_Intercomm_create_from_groups"
	if out == 0 || stringtag == 0 {
		return raise(self, call, errorf(errArg, "stringtag or newintercomm is NULL"))
	}
	switch eh {
	case ehFatal, ehReturn, ehAbort:
	default:
		return raise(self, call, errorf(errArg, "%#x is not an error handler meshmpi knows (MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN, MPI_ERRORS_ABORT)", eh))
	}
	local, err := lookupGroup(lg)
	if err != nil {
		return raise(self, call, err)
	}
	remote, err := lookupGroup(rg)
	if err != nil {
		return raise(self, call, err)
	}
	w := worldComm()
	if w == nil {
		return raise(self, call, errorf(errOther, "MPI is not initialized"))
	}
	ic, err := meshmpi.IntercommCreateFromGroups(w, local, int(localLeader), remote, int(remoteLeader), cstring(stringtag))
	if err != nil {
		return raise(self, call, err)
	}
	h, err := addComm(&commEntry{eh: eh}, ic)
	if err != nil {
		_ = ic.Free()
		return raise(self, call, err)
	}
	putHandle(out, h)
	return errSuccess
}
