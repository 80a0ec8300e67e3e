package abi

/*
#include <stdint.h>
*/
import "C"

// MPI_Comm_create_group (MPI-4.1 §7.4.2) over the Go API's
// CreateGroup: collective over the group's members only. MPICH's
// MTestGetIntracomm makes one of its test communicators so.
//
//export mpiabi_Comm_create_group
func mpiabi_Comm_create_group(comm, gh uintptr, tag int32, out uintptr) C.int {
	const call = "MPI_Comm_create_group"
	e, err := lookupComm(comm)
	if err != nil {
		return raise(comm, call, err)
	}
	g, err := lookupGroup(gh)
	if err == nil && out == 0 {
		err = errorf(errArg, "newcomm is NULL")
	}
	if err != nil {
		return raise(comm, call, err)
	}
	n, err := e.c.CreateGroup(g, int(tag))
	if err != nil {
		return raise(comm, call, err)
	}
	if n == nil {
		putHandle(out, commNull)
		return errSuccess
	}
	h, err := addComm(e, n)
	if err == nil {
		putHandle(out, h)
	}
	return raise(comm, call, err)
}
