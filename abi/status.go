package abi

/*
#include <stdint.h>
*/
import "C"

import "github.com/meshmpi/meshmpi"

// The status accessors of MPI-4.1 §3.2.5 and §13.3, on MPI_Status's
// layout (requests.go).

// putStatus writes a completed receive's status into the program's
// MPI_Status, as setStatus(u, *st, false, 0) does, for the calls' fast
// path: MPI_ERROR is left as it was (MPI-4.1 §3.2.5: single completions).
func putStatus(s *status, st *meshmpi.Status) {
	s.source, s.tag = rankOut(st.Source), tagOut(st.Tag)
	s.internal[0], s.internal[1] = int32(uint32(st.Bytes)), int32(uint64(st.Bytes)>>32)
	s.internal[2] = 0
	if st.Cancelled {
		s.internal[2] = 1
	}
}

func statusArg(call string, st uintptr) (*status, C.int) {
	if st == 0 {
		return nil, raise(self, call, errorf(errArg, "status is NULL"))
	}
	return (*status)(ptr(st)), errSuccess
}

func setElements(call string, st, dth uintptr, n int64) C.int {
	s, rc := statusArg(call, st)
	if s == nil {
		return rc
	}
	e, err := typeOf(dth)
	if err == nil {
		err = e.flatten()
	}
	if err != nil {
		return raise(self, call, err)
	}
	if n < 0 {
		return raise(self, call, errorf(errCount, "count %d is negative", n))
	}
	b := e.bytesOf(n)
	s.internal[0], s.internal[1] = int32(uint32(b)), int32(uint64(b)>>32)
	return errSuccess
}

//export mpiabi_Status_set_elements
func mpiabi_Status_set_elements(st, dt uintptr, n int32) C.int {
	return setElements("MPI_Status_set_elements", st, dt, int64(n))
}

//export mpiabi_Status_set_elements_c
func mpiabi_Status_set_elements_c(st, dt uintptr, n int64) C.int {
	return setElements("MPI_Status_set_elements_c", st, dt, n)
}

//export mpiabi_Status_set_elements_x
func mpiabi_Status_set_elements_x(st, dt uintptr, n int64) C.int {
	return setElements("MPI_Status_set_elements_x", st, dt, n)
}

//export mpiabi_Status_set_cancelled
func mpiabi_Status_set_cancelled(st uintptr, flag int32) C.int {
	s, rc := statusArg("MPI_Status_set_cancelled", st)
	if s != nil {
		s.internal[2] = int32(b2i(flag != 0))
	}
	return rc
}

func getField(call string, st, out uintptr, f func(*status) int32) C.int {
	s, rc := statusArg(call, st)
	if s != nil {
		if out == 0 {
			return raise(self, call, errorf(errArg, "the result pointer is NULL"))
		}
		putInt(out, int(f(s)))
	}
	return rc
}

func setField(call string, st uintptr, f func(*status)) C.int {
	s, rc := statusArg(call, st)
	if s != nil {
		f(s)
	}
	return rc
}

//export mpiabi_Status_get_source
func mpiabi_Status_get_source(st, out uintptr) C.int {
	return getField("MPI_Status_get_source", st, out, func(s *status) int32 { return s.source })
}

//export mpiabi_Status_get_tag
func mpiabi_Status_get_tag(st, out uintptr) C.int {
	return getField("MPI_Status_get_tag", st, out, func(s *status) int32 { return s.tag })
}

//export mpiabi_Status_get_error
func mpiabi_Status_get_error(st, out uintptr) C.int {
	return getField("MPI_Status_get_error", st, out, func(s *status) int32 { return s.err })
}

//export mpiabi_Status_set_source
func mpiabi_Status_set_source(st uintptr, v int32) C.int {
	return setField("MPI_Status_set_source", st, func(s *status) { s.source = v })
}

//export mpiabi_Status_set_tag
func mpiabi_Status_set_tag(st uintptr, v int32) C.int {
	return setField("MPI_Status_set_tag", st, func(s *status) { s.tag = v })
}

//export mpiabi_Status_set_error
func mpiabi_Status_set_error(st uintptr, v int32) C.int {
	return setField("MPI_Status_set_error", st, func(s *status) { s.err = v })
}

// MPI_Comm_call_errhandler raises errorcode on comm: under
// MPI_ERRORS_RETURN it returns MPI_SUCCESS (the handler returned), under
// the fatal handlers it ends the job.
//
//export mpiabi_Comm_call_errhandler
func mpiabi_Comm_call_errhandler(comm uintptr, code int32) C.int {
	if _, err := lookupComm(comm); err != nil {
		return raise(comm, "MPI_Comm_call_errhandler", err)
	}
	e, ok := lookupCode(code)
	if !ok {
		return raise(comm, "MPI_Comm_call_errhandler", errorf(errArg, "%d is not an error code", code))
	}
	if errhandlerOf(comm) != ehReturn {
		fatal("MPI_Comm_call_errhandler: "+e.msg, e.class)
	}
	return errSuccess
}
