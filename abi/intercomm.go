package abi

/*
#include <stdint.h>
*/
import "C"

import "github.com/meshmpi/meshmpi"

// Intercommunicators (MPI-4.1 §7.6) over the Go API's: MPICH's test
// utilities (MTestGetIntercomm) build them with MPI_Intercomm_create and
// MPI_Intercomm_merge and run most point-to-point and collective tests
// over them too.

//export mpiabi_Comm_test_inter
func mpiabi_Comm_test_inter(comm, flag uintptr) C.int {
	e, err := lookupComm(comm)
	if err == nil && flag == 0 {
		err = errorf(errArg, "flag is NULL")
	}
	if err == nil {
		putInt(flag, b2i(e.c.TestInter()))
	}
	return raise(comm, "MPI_Comm_test_inter", err)
}

//export mpiabi_Comm_remote_size
func mpiabi_Comm_remote_size(comm, size uintptr) C.int {
	e, err := lookupComm(comm)
	if err == nil && size == 0 {
		err = errorf(errArg, "size is NULL")
	}
	if err == nil && !e.c.TestInter() {
		err = errorf(errComm, "not an intercommunicator")
	}
	if err == nil {
		putInt(size, e.c.RemoteSize())
	}
	return raise(comm, "MPI_Comm_remote_size", err)
}

//export mpiabi_Comm_remote_group
func mpiabi_Comm_remote_group(comm, out uintptr) C.int {
	e, err := lookupComm(comm)
	if err == nil && out == 0 {
		err = errorf(errArg, "group is NULL")
	}
	var g *meshmpi.Group
	if err == nil {
		g, err = e.c.RemoteGroup()
	}
	if err == nil {
		err = putGroup(g, out)
	}
	return raise(comm, "MPI_Comm_remote_group", err)
}

//export mpiabi_Intercomm_create
func mpiabi_Intercomm_create(local uintptr, localLeader int32, peer uintptr, remoteLeader, tag int32, out uintptr) C.int {
	const call = "MPI_Intercomm_create"
	e, err := lookupComm(local)
	if err != nil {
		return raise(local, call, err)
	}
	if out == 0 {
		return raise(local, call, errorf(errArg, "newintercomm is NULL"))
	}
	// peer, remote_leader and tag are significant only at the local
	// leader; the other ranks may pass MPI_COMM_NULL (MPI-4.1 §7.6.2).
	var pc *meshmpi.Comm
	if int(localLeader) == e.c.Rank() {
		p, err := lookupComm(peer)
		if err != nil {
			return raise(local, call, err)
		}
		pc = p.c
	}
	n, err := meshmpi.IntercommCreate(e.c, int(localLeader), pc, int(remoteLeader), int(tag))
	if err != nil {
		return raise(local, call, err)
	}
	h, err := addComm(e, n)
	if err != nil {
		return raise(local, call, err)
	}
	putHandle(out, h)
	return errSuccess
}

//export mpiabi_Intercomm_merge
func mpiabi_Intercomm_merge(inter uintptr, high int32, out uintptr) C.int {
	const call = "MPI_Intercomm_merge"
	e, err := lookupComm(inter)
	if err != nil {
		return raise(inter, call, err)
	}
	if out == 0 {
		return raise(inter, call, errorf(errArg, "newintracomm is NULL"))
	}
	n, err := e.c.IntercommMerge(high != 0)
	if err != nil {
		return raise(inter, call, err)
	}
	h, err := addComm(e, n)
	if err != nil {
		return raise(inter, call, err)
	}
	putHandle(out, h)
	return errSuccess
}
