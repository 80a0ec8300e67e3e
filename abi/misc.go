package abi

/*
#include <stdint.h>
#include <stdlib.h>
*/
import "C"

import (
	"sync"
	"unsafe"
)

// MPI_Errhandler_free on a predefined handler (what MPI_Comm_get_errhandler
// hands out) only sets the handle to MPI_ERRHANDLER_NULL: the C binding
// has no handlers of the program's yet.
//
//export mpiabi_Errhandler_free
func mpiabi_Errhandler_free(p uintptr) C.int {
	if p == 0 {
		return raise(self, "MPI_Errhandler_free", errorf(errArg, "errhandler is NULL"))
	}
	switch getHandle(p) {
	case ehFatal, ehReturn, ehAbort:
		putHandle(p, ehNull)
		return errSuccess
	}
	return raise(self, "MPI_Errhandler_free", errorf(errErrhandler, "%#x is not an error handler", getHandle(p)))
}

// MPI_Comm_dup_with_info duplicates; meshmpi reads no hints yet.
//
//export mpiabi_Comm_dup_with_info
func mpiabi_Comm_dup_with_info(comm, info, newcomm uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Comm_dup_with_info", err)
	}
	return mpiabi_Comm_dup(comm, newcomm)
}

// MPI_Comm_set_info accepts any hints and keeps none; MPI_Comm_get_info
// returns a new, empty info object.
//
//export mpiabi_Comm_set_info
func mpiabi_Comm_set_info(comm, info uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Comm_set_info", err)
	}
	if _, err := lookupComm(comm); err != nil {
		return raise(comm, "MPI_Comm_set_info", err)
	}
	return errSuccess
}

//export mpiabi_Comm_get_info
func mpiabi_Comm_get_info(comm, out uintptr) C.int {
	if _, err := lookupComm(comm); err != nil {
		return raise(comm, "MPI_Comm_get_info", err)
	}
	return mpiabi_Info_create(out)
}

// MPI_Comm_disconnect of an intracommunicator frees it once its pending
// operations are done; the C binding makes no intercommunicators yet.
//
//export mpiabi_Comm_disconnect
func mpiabi_Comm_disconnect(p uintptr) C.int { return mpiabi_Comm_free(p) }

// MPI_Alloc_mem is malloc: meshmpi has no memory it would rather use.
//
//export mpiabi_Alloc_mem
func mpiabi_Alloc_mem(size int, info, baseptr uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(self, "MPI_Alloc_mem", err)
	}
	if size < 0 || baseptr == 0 {
		return raise(self, "MPI_Alloc_mem", errorf(errArg, "size %d is negative or baseptr is NULL", size))
	}
	p := C.malloc(C.size_t(max(size, 1)))
	if p == nil {
		return raise(self, "MPI_Alloc_mem", errorf(39, "no memory for %d bytes", size)) // MPI_ERR_NO_MEM
	}
	allocs.mu.Lock()
	allocs.live[uintptr(p)] = struct{}{}
	allocs.mu.Unlock()
	*(*unsafe.Pointer)(ptr(baseptr)) = p
	return errSuccess
}

// allocs are the addresses MPI_Alloc_mem gave out and MPI_Free_mem has
// not taken back: freeing any other address (one freed already, one
// inside a block, the program's own) is MPI_ERR_BASE, not free's abort.
var allocs = struct {
	mu   sync.Mutex
	live map[uintptr]struct{}
}{live: map[uintptr]struct{}{}}

const errBase = 24 // MPI_ERR_BASE

//export mpiabi_Free_mem
func mpiabi_Free_mem(base uintptr) C.int {
	if base == 0 {
		return errSuccess // free(NULL)
	}
	allocs.mu.Lock()
	_, ok := allocs.live[base]
	delete(allocs.live, base)
	allocs.mu.Unlock()
	if !ok {
		return raise(self, "MPI_Free_mem", errorf(errBase, "%#x is not memory MPI_Alloc_mem gave, or is freed already", base))
	}
	C.free(ptr(base))
	return errSuccess
}
