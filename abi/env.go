package abi

/*
#include <stdlib.h>
#include <stdint.h>
#include <stdio.h>
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"time"
	"unsafe"

	"github.com/meshmpi/meshmpi"
)

// Thread levels (include/mpi.h).
const (
	threadSingle     = 0
	threadFunneled   = 1
	threadSerialized = 2
	threadMultiple   = 7
)

// The library's identity (MPI_Get_library_version).
const libraryVersion = "meshmpi (github.com/meshmpi/meshmpi), MPI standard ABI 1.0, MPI 4.2 calls"

var (
	epoch    = time.Now() // MPI_Wtime's zero
	mainTID  int          // the thread that called MPI_Init (MPI_Is_thread_main)
	attrVals *[4]int32    // C memory the predefined attributes point into
)

// Predefined attribute keys.
const (
	keyTagUB        = 501
	keyHost         = 503
	keyIO           = 502
	keyWtimeGlobal  = 504
	keyUniverseSize = 505
	keyAppnum       = 506
	keyLastUsedCode = 507
)

//export mpiabi_Abi_get_version
func mpiabi_Abi_get_version(major, minor uintptr) C.int {
	if major == 0 || minor == 0 {
		return raise(self, "MPI_Abi_get_version", errorf(errArg, "abi_major or abi_minor is NULL"))
	}
	putInt(major, 1)
	putInt(minor, 0)
	return errSuccess
}

//export mpiabi_Get_version
func mpiabi_Get_version(version, subversion uintptr) C.int {
	if version == 0 || subversion == 0 {
		return raise(self, "MPI_Get_version", errorf(errArg, "version or subversion is NULL"))
	}
	putInt(version, 4)
	putInt(subversion, 2)
	return errSuccess
}

//export mpiabi_Get_library_version
func mpiabi_Get_library_version(version, resultlen uintptr) C.int {
	if version == 0 || resultlen == 0 {
		return raise(self, "MPI_Get_library_version", errorf(errArg, "version or resultlen is NULL"))
	}
	putInt(resultlen, putString(version, libraryVersion+", "+runtime.Version(), maxLibraryVersion))
	return errSuccess
}

//export mpiabi_Init
func mpiabi_Init(argc, argv uintptr) C.int {
	return initialize("MPI_Init", threadSingle, 0)
}

//export mpiabi_Init_thread
func mpiabi_Init_thread(argc, argv uintptr, required int32, provided uintptr) C.int {
	if provided == 0 {
		return raise(self, "MPI_Init_thread", errorf(errArg, "provided is NULL"))
	}
	return initialize("MPI_Init_thread", required, provided)
}

// initialize starts the rank as meshmpi.Init does: the job from the
// launcher's environment, or a world of one. Every thread level is
// provided as asked: the tables are locked and the Go API's calls may
// come from any thread.
func initialize(call string, required int32, provided uintptr) C.int {
	state.mu.Lock()
	if state.initialized || state.finalized {
		state.mu.Unlock()
		return raise(self, call, errorf(errOther, "MPI is already initialized or finalized"))
	}
	state.mu.Unlock()
	w, err := meshmpi.Init()
	if err != nil {
		return raise(self, call, err)
	}
	if required < threadSingle {
		required = threadSingle
	}
	if required > threadMultiple {
		required = threadMultiple
	}
	vals := (*[4]int32)(C.malloc(C.size_t(unsafe.Sizeof([4]int32{}))))
	vals[0] = meshmpi.TagUB
	vals[1] = 0 // clocks are not synchronized
	vals[2] = int32(w.Size())
	vals[3] = errLastCode
	state.mu.Lock()
	attrVals = vals
	state.world = &commEntry{c: w, eh: ehFatal, name: "MPI_COMM_WORLD"}
	state.self = &commEntry{c: w.Self(), eh: ehFatal, name: "MPI_COMM_SELF"}
	fastWorld.Store(state.world) // fastpath.go
	fastSelf.Store(state.self)
	state.comms = table[*commEntry]{base: firstComm}
	state.reqs = table[*reqEntry]{base: firstReq}
	state.thread = required
	state.initialized = true
	mainTID = gettid()
	state.mu.Unlock()
	putInt(provided, int(required))
	return errSuccess
}

//export mpiabi_Finalize
func mpiabi_Finalize() C.int {
	state.mu.Lock()
	if !state.initialized || state.finalized {
		state.mu.Unlock()
		return raise(self, "MPI_Finalize", errorf(errOther, "MPI is not initialized, or is finalized already"))
	}
	self0 := state.self
	state.mu.Unlock()
	// MPI_COMM_SELF's attributes are deleted first, so libraries can
	// clean up (MPI-4.1 §11.2.4)
	if err := deleteAttrs(self, self0); err != nil {
		return raise(self, "MPI_Finalize", err)
	}
	bsends.mu.Lock() // buffered sends leave first, as MPI_Buffer_detach waits
	err := reclaim(true)
	bsends.mu.Unlock()
	if err != nil {
		return raise(self, "MPI_Finalize", err)
	}
	fastWorld.Store(nil) // fastpath.go
	fastSelf.Store(nil)
	err = meshmpi.Finalize()
	state.mu.Lock()
	state.finalized = true
	state.mu.Unlock()
	if err != nil {
		fmt.Fprintf(os.Stderr, "meshmpi: MPI_Finalize: %v\n", err)
		return C.int(newCode(classOf(err), "MPI_Finalize: "+err.Error()))
	}
	return errSuccess
}

//export mpiabi_Initialized
func mpiabi_Initialized(flag uintptr) C.int {
	if flag == 0 {
		return raise(self, "MPI_Initialized", errorf(errArg, "flag is NULL"))
	}
	state.mu.Lock()
	defer state.mu.Unlock()
	putInt(flag, b2i(state.initialized))
	return errSuccess
}

//export mpiabi_Finalized
func mpiabi_Finalized(flag uintptr) C.int {
	if flag == 0 {
		return raise(self, "MPI_Finalized", errorf(errArg, "flag is NULL"))
	}
	state.mu.Lock()
	defer state.mu.Unlock()
	putInt(flag, b2i(state.finalized))
	return errSuccess
}

//export mpiabi_Query_thread
func mpiabi_Query_thread(provided uintptr) C.int {
	if provided == 0 {
		return raise(self, "MPI_Query_thread", errorf(errArg, "provided is NULL"))
	}
	state.mu.Lock()
	defer state.mu.Unlock()
	putInt(provided, int(state.thread))
	return errSuccess
}

//export mpiabi_Is_thread_main
func mpiabi_Is_thread_main(flag uintptr) C.int {
	if flag == 0 {
		return raise(self, "MPI_Is_thread_main", errorf(errArg, "flag is NULL"))
	}
	putInt(flag, b2i(gettid() == mainTID))
	return errSuccess
}

//export mpiabi_Abort
func mpiabi_Abort(comm uintptr, code int32) C.int {
	C.fflush(nil)
	if w := worldComm(); w != nil {
		w.Abort(int(code)) // does not return
	}
	fmt.Fprintf(os.Stderr, "meshmpi: MPI_Abort(%d) before MPI_Init\n", code)
	os.Exit(int(code))
	return errSuccess
}

//export mpiabi_Wtime
func mpiabi_Wtime() float64 { return time.Since(epoch).Seconds() }

//export mpiabi_Wtick
func mpiabi_Wtick() float64 { return 1e-9 }

//export mpiabi_Get_processor_name
func mpiabi_Get_processor_name(name, resultlen uintptr) C.int {
	if name == 0 || resultlen == 0 {
		return raise(self, "MPI_Get_processor_name", errorf(errArg, "name or resultlen is NULL"))
	}
	h, err := os.Hostname()
	if err != nil {
		h = "localhost"
	}
	putInt(resultlen, putString(name, h, maxProcessorName))
	return errSuccess
}

// MPI_Pcontrol does nothing: meshmpi has no profiling levels to switch
// (MPI-4.1 §15.2.4 allows that).
//
//export mpiabi_Pcontrol
func mpiabi_Pcontrol(level int32) C.int { return errSuccess }

//export mpiabi_Aint_add
func mpiabi_Aint_add(base, disp int) int { return base + disp }

//export mpiabi_Aint_diff
func mpiabi_Aint_diff(a, b int) int { return a - b }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
