package abi

/*
#include <stdint.h>
int mpiabi_call_grequest_query(uintptr_t fn, uintptr_t extra, void *status);
int mpiabi_call_grequest_free(uintptr_t fn, uintptr_t extra);
int mpiabi_call_grequest_cancel(uintptr_t fn, uintptr_t extra, int complete);
*/
import "C"

import (
	"unsafe"

	"github.com/meshmpi/meshmpi"
)

// Generalized requests (MPI_Grequest_start, MPI-4.1 §13.2) over the Go
// API's (meshmpi.GrequestStart): the program's query, free and cancel
// functions are called through grequest.c, with its extra_state, when
// the Go API calls the request's callbacks; a nonzero return is an error
// of that code's class. A WASI guest's functions are not called back
// (wasi.go's callback refuses them).

// callbackErr turns an error code a program's function returned into an
// error of its class.
func callbackErr(fn string, code C.int) error {
	if code == errSuccess {
		return nil
	}
	class := int32(errOther)
	if e, ok := lookupCode(int32(code)); ok {
		class = e.class
	} else if code > 0 && code < errLastCode {
		class = int32(code) // a class is a code of itself
	}
	return errorf(class, "the generalized request's %s function returned %d", fn, int(code))
}

//export mpiabi_Grequest_start
func mpiabi_Grequest_start(query, free, cancel, extra, req uintptr) C.int {
	const call = "MPI_Grequest_start"
	if req == 0 {
		return raise(self, call, errorf(errArg, "request is NULL"))
	}
	if query == 0 || free == 0 || cancel == 0 {
		return raise(self, call, errorf(errArg, "query_fn, free_fn and cancel_fn are all needed"))
	}
	w := worldComm()
	if w == nil {
		return raise(self, call, errorf(errOther, "MPI is not initialized"))
	}
	r, err := meshmpi.GrequestStart(w,
		func(st *meshmpi.Status) error {
			var s status
			setStatus(uintptr(unsafe.Pointer(&s)), *st, true, errSuccess)
			err := callbackErr("query", C.mpiabi_call_grequest_query(C.uintptr_t(query), C.uintptr_t(extra), unsafe.Pointer(&s)))
			st.Source, st.Tag = rankIn(s.source), tagIn(s.tag)
			st.Bytes = int(statusBytes(uintptr(unsafe.Pointer(&s))))
			st.Cancelled = s.internal[2] != 0
			return err
		},
		func() error {
			return callbackErr("free", C.mpiabi_call_grequest_free(C.uintptr_t(free), C.uintptr_t(extra)))
		},
		func(complete bool) error {
			return callbackErr("cancel", C.mpiabi_call_grequest_cancel(C.uintptr_t(cancel), C.uintptr_t(extra), C.int(b2i(complete))))
		})
	if err != nil {
		return raise(self, call, err)
	}
	if err := addReq(r, self, 1, req); err != nil {
		return raise(self, call, err)
	}
	if e, err := lookupReq(getHandle(req)); err == nil && e != nil {
		e.greq = true
	}
	return errSuccess
}

//export mpiabi_Grequest_complete
func mpiabi_Grequest_complete(h uintptr) C.int {
	const call = "MPI_Grequest_complete"
	e, err := lookupReq(h)
	if err == nil && (e == nil || !e.greq) {
		err = errorf(errRequest, "%#x is not a generalized request", h)
	}
	if err != nil {
		return raise(self, call, err)
	}
	err = meshmpi.GrequestComplete(e.r)
	state.mu.Lock()
	e.greqDone = true
	if e.greqFreed { // MPI_Request_free left it for this call
		state.reqs.remove(h)
	}
	state.mu.Unlock()
	return raise(e.comm, call, err)
}
