package abi

/*
#include <stdint.h>
*/
import "C"

import (
	"errors"
	"slices"
	"unsafe"

	"github.com/meshmpi/meshmpi"
)

// reqEntry is a request's Go side.
type reqEntry struct {
	r    *meshmpi.Request
	comm uintptr  // whose error handler its errors go to
	size int      // bytes of an element of its datatype (its status's count)
	stg  *staging // the packed copies of derived-type buffers (typed.go), or nil
	// complete, if set, finishes the call when its request completes:
	// MPI_Comm_idup stores its new communicator's handle then
	complete func()
	// greq marks a generalized request (grequest.go), greqDone one that
	// MPI_Grequest_complete completed and greqFreed one that
	// MPI_Request_free freed before that: its handle stays in the table
	// until MPI_Grequest_complete, which the program still calls with it
	greq, greqDone, greqFreed bool
	// start, if set, runs at each MPI_Start before the request starts:
	// MPI_Bsend_init's buffered send (bsendinit.go)
	start func() error
	// bsend is the buffered send that the handle of an MPI_Ibsend or a
	// started MPI_Bsend_init stands for (bsend.go), until its completion
	// is reported: r is then a placeholder, and MPI_Cancel goes to bsend
	bsend *pendingBsend
}

// bsendDone turns the completion of e's request, with s and err, into the
// handle's: the buffered send's if it was cancelled (bsendComplete), which
// wait waits for; ok false: not yet. Once reported, the handle lets go
// of the send.
func (e *reqEntry) bsendDone(s meshmpi.Status, err error, wait bool) (meshmpi.Status, bool, error) {
	if e.bsend == nil {
		return s, true, err
	}
	s, ok, err := bsendComplete(e.bsend, s, err, wait)
	if ok {
		bsendRelease(e.bsend)
		e.bsend = nil
	}
	return s, ok, err
}

// status is MPI_Status's layout (include/mpi.h): the length in bytes in
// internal[0] and [1], the cancelled flag in internal[2].
type status struct {
	source, tag, err int32
	internal         [5]int32
}

// setStatus writes st to the MPI_Status at u (nothing if u is
// MPI_STATUS_IGNORE). MPI_ERROR is set only when setErr is: single
// completions leave it as it was (MPI-4.1 §3.2.5).
func setStatus(u uintptr, st meshmpi.Status, setErr bool, code int32) {
	if u == 0 {
		return
	}
	s := (*status)(ptr(u))
	s.source, s.tag = rankOut(st.Source), tagOut(st.Tag)
	if setErr {
		s.err = code
	}
	s.internal[0], s.internal[1] = int32(uint32(st.Bytes)), int32(uint64(st.Bytes)>>32)
	s.internal[2] = int32(b2i(st.Cancelled))
}

// setEmpty writes the empty status: MPI_ANY_SOURCE, MPI_ANY_TAG, no count.
func setEmpty(u uintptr, setErr bool) {
	setStatus(u, meshmpi.Status{Source: meshmpi.AnySource, Tag: meshmpi.AnyTag}, setErr, errSuccess)
}

func statusBytes(u uintptr) int64 {
	s := (*status)(ptr(u))
	return int64(uint32(s.internal[0])) | int64(uint32(s.internal[1]))<<32
}

// addReq gives a request a handle and stores it at out.
func addReq(r *meshmpi.Request, comm uintptr, size int, out uintptr) error {
	return addReqStg(r, comm, size, nil, out)
}

// addReqStg is addReq for an operation with a staging, which the request
// unpacks when it completes and packs again at each Start.
func addReqStg(r *meshmpi.Request, comm uintptr, size int, stg *staging, out uintptr) error {
	state.mu.Lock()
	h, ok := state.reqs.add(&reqEntry{r: r, comm: comm, size: size, stg: stg})
	state.mu.Unlock()
	if !ok {
		_ = r.Free()
		stg.release()
		return errorf(errIntern, "too many requests")
	}
	putHandle(out, h)
	return nil
}

// lookupReq returns the entry of the request handle at p; nil for
// MPI_REQUEST_NULL.
func lookupReq(h uintptr) (*reqEntry, error) {
	if h == reqNull {
		return nil, nil
	}
	state.mu.Lock()
	defer state.mu.Unlock()
	if !state.initialized {
		return nil, errorf(errOther, "MPI is not initialized")
	}
	e, ok := state.reqs.get(h)
	if !ok {
		return nil, errorf(errRequest, "%#x is not a request", h)
	}
	return e, nil
}

// done releases a completed request: a nonblocking one is freed and its
// handle becomes MPI_REQUEST_NULL; a persistent one stays, inactive.
func done(e *reqEntry, p uintptr) {
	e.stg.unpack()
	if e.complete != nil {
		e.complete()
		e.complete = nil
	}
	if e.r.Persistent() {
		return
	}
	_ = e.r.Free()
	e.stg.release()
	state.mu.Lock()
	state.reqs.remove(getHandle(p))
	state.mu.Unlock()
	putHandle(p, reqNull)
}

//export mpiabi_Wait
func mpiabi_Wait(p, st uintptr) C.int {
	if p == 0 {
		return raise(self, "MPI_Wait", errorf(errRequest, "request is NULL"))
	}
	e, err := lookupReq(getHandle(p))
	if err != nil {
		return raise(self, "MPI_Wait", err)
	}
	if e == nil {
		setEmpty(st, false)
		return errSuccess
	}
	s, err := e.r.Wait(nil)
	s, _, err = e.bsendDone(s, err, true)
	setStatus(st, s, false, 0)
	done(e, p)
	return raise(e.comm, "MPI_Wait", err)
}

//export mpiabi_Test
func mpiabi_Test(p, flag, st uintptr) C.int {
	if p == 0 || flag == 0 {
		return raise(self, "MPI_Test", errorf(errArg, "request or flag is NULL"))
	}
	e, err := lookupReq(getHandle(p))
	if err != nil {
		return raise(self, "MPI_Test", err)
	}
	if e == nil {
		putInt(flag, 1)
		setEmpty(st, false)
		return errSuccess
	}
	s, ok, err := e.r.Test()
	if ok {
		s, ok, err = e.bsendDone(s, err, false)
	}
	putInt(flag, b2i(ok))
	if !ok {
		return raise(e.comm, "MPI_Test", err)
	}
	setStatus(st, s, false, 0)
	done(e, p)
	return raise(e.comm, "MPI_Test", err)
}

//export mpiabi_Request_get_status
func mpiabi_Request_get_status(h, flag, st uintptr) C.int {
	if flag == 0 {
		return raise(self, "MPI_Request_get_status", errorf(errArg, "flag is NULL"))
	}
	e, err := lookupReq(h)
	if err != nil {
		return raise(self, "MPI_Request_get_status", err)
	}
	if e == nil {
		putInt(flag, 1)
		setEmpty(st, false)
		return errSuccess
	}
	s, ok, err := e.r.Test()
	if ok && e.bsend != nil { // the handle keeps it: Wait reports it again
		s, ok, err = bsendComplete(e.bsend, s, err, false)
	}
	putInt(flag, b2i(ok))
	if ok {
		e.stg.unpack()
		setStatus(st, s, false, 0)
	}
	return raise(e.comm, "MPI_Request_get_status", err)
}

// requests reads n request handles at arr.
func requests(call string, n int32, arr uintptr) ([]*reqEntry, []*meshmpi.Request, uintptr, error) {
	if n < 0 {
		return nil, nil, self, errorf(errCount, "count %d is negative", n)
	}
	if n > 0 && arr == 0 {
		return nil, nil, self, errorf(errArg, "array_of_requests is NULL")
	}
	hs := unsafe.Slice((*uintptr)(ptr(arr)), n)
	es := make([]*reqEntry, n)
	rs := make([]*meshmpi.Request, n)
	comm := self
	for i, h := range hs {
		e, err := lookupReq(h)
		if err != nil {
			return nil, nil, comm, err
		}
		if e != nil {
			es[i], rs[i] = e, e.r
			if comm == self {
				comm = e.comm
			}
		}
	}
	return es, rs, comm, nil
}

func statusAt(arr uintptr, i int) uintptr {
	if arr == 0 {
		return 0
	}
	return arr + uintptr(i)*unsafe.Sizeof(status{})
}

func reqAt(arr uintptr, i int) uintptr { return arr + uintptr(i)*unsafe.Sizeof(uintptr(0)) }

// multi finishes a multiple-completion call: statuses (with MPI_ERROR
// when some failed), completed requests released.
func multi(call string, es []*reqEntry, arr, sts uintptr, ss []meshmpi.Status, completed []bool, comm uintptr, err error) C.int {
	inStatus := err != nil && errors.Is(err, meshmpi.ErrInStatus)
	for i, e := range es {
		if !completed[i] {
			if inStatus && sts != 0 {
				(*status)(ptr(statusAt(sts, i))).err = 18 // MPI_ERR_PENDING
			}
			continue
		}
		if e == nil {
			setEmpty(statusAt(sts, i), inStatus)
			continue
		}
		var berr error
		if ss[i], _, berr = e.bsendDone(ss[i], ss[i].Err, true); berr != nil {
			ss[i].Err = berr
		}
		code := int32(errSuccess)
		if ss[i].Err != nil {
			code = newCode(classOf(ss[i].Err), call+": "+ss[i].Err.Error())
		}
		setStatus(statusAt(sts, i), ss[i], inStatus, code)
		done(e, reqAt(arr, i))
	}
	return raise(comm, call, err)
}

//export mpiabi_Waitall
func mpiabi_Waitall(n int32, arr, sts uintptr) C.int {
	es, rs, comm, err := requests("MPI_Waitall", n, arr)
	if err != nil {
		return raise(comm, "MPI_Waitall", err)
	}
	ss := make([]meshmpi.Status, n)
	err = meshmpi.Waitall(nil, rs, ss)
	completed := make([]bool, n)
	for i := range completed {
		completed[i] = true
	}
	return multi("MPI_Waitall", es, arr, sts, ss, completed, comm, err)
}

//export mpiabi_Testall
func mpiabi_Testall(n int32, arr, flag, sts uintptr) C.int {
	if flag == 0 {
		return raise(self, "MPI_Testall", errorf(errArg, "flag is NULL"))
	}
	es, rs, comm, err := requests("MPI_Testall", n, arr)
	if err != nil {
		return raise(comm, "MPI_Testall", err)
	}
	ss := make([]meshmpi.Status, n)
	ok, err := meshmpi.Testall(rs, ss)
	putInt(flag, b2i(ok))
	completed := make([]bool, n)
	for i := range completed {
		completed[i] = ok
	}
	return multi("MPI_Testall", es, arr, sts, ss, completed, comm, err)
}

// one finishes Waitany and Testany: index i of es completed with s.
func one(call string, es []*reqEntry, arr uintptr, i int, index, st uintptr, s meshmpi.Status, comm uintptr, err error) C.int {
	if i < 0 || i >= len(es) || es[i] == nil {
		putInt(index, undefined)
		setEmpty(st, false)
		return raise(comm, call, err)
	}
	putInt(index, i)
	s, _, err = es[i].bsendDone(s, err, true)
	setStatus(st, s, false, 0)
	done(es[i], reqAt(arr, i))
	return raise(es[i].comm, call, err)
}

//export mpiabi_Waitany
func mpiabi_Waitany(n int32, arr, index, st uintptr) C.int {
	if index == 0 {
		return raise(self, "MPI_Waitany", errorf(errArg, "index is NULL"))
	}
	es, rs, comm, err := requests("MPI_Waitany", n, arr)
	if err != nil {
		return raise(comm, "MPI_Waitany", err)
	}
	i, s, err := meshmpi.Waitany(nil, rs)
	return one("MPI_Waitany", es, arr, i, index, st, s, comm, err)
}

//export mpiabi_Testany
func mpiabi_Testany(n int32, arr, index, flag, st uintptr) C.int {
	if index == 0 || flag == 0 {
		return raise(self, "MPI_Testany", errorf(errArg, "index or flag is NULL"))
	}
	es, rs, comm, err := requests("MPI_Testany", n, arr)
	if err != nil {
		return raise(comm, "MPI_Testany", err)
	}
	i, ok, s, err := meshmpi.Testany(rs)
	putInt(flag, b2i(ok))
	if !ok {
		putInt(index, undefined)
		return raise(comm, "MPI_Testany", err)
	}
	return one("MPI_Testany", es, arr, i, index, st, s, comm, err)
}

// some finishes Waitsome and Testsome.
func some(call string, es []*reqEntry, arr uintptr, idx []int, ss []meshmpi.Status, outcount, indices, sts uintptr, comm uintptr, err error) C.int {
	active := false
	for _, e := range es {
		if e != nil && e.r.State() == meshmpi.Active {
			active = true
		}
	}
	if !active && len(idx) == 0 {
		putInt(outcount, undefined)
		return raise(comm, call, err)
	}
	inStatus := err != nil && errors.Is(err, meshmpi.ErrInStatus)
	putInt(outcount, len(idx))
	out := unsafe.Slice((*int32)(ptr(indices)), len(idx))
	for k, i := range idx {
		out[k] = int32(i)
		var berr error
		if ss[k], _, berr = es[i].bsendDone(ss[k], ss[k].Err, true); berr != nil {
			ss[k].Err = berr
		}
		code := int32(errSuccess)
		if ss[k].Err != nil {
			code = newCode(classOf(ss[k].Err), call+": "+ss[k].Err.Error())
		}
		setStatus(statusAt(sts, k), ss[k], inStatus, code)
		done(es[i], reqAt(arr, i))
	}
	return raise(comm, call, err)
}

//export mpiabi_Waitsome
func mpiabi_Waitsome(n int32, arr, outcount, indices, sts uintptr) C.int {
	if outcount == 0 || (n > 0 && indices == 0) {
		return raise(self, "MPI_Waitsome", errorf(errArg, "outcount or array_of_indices is NULL"))
	}
	es, rs, comm, err := requests("MPI_Waitsome", n, arr)
	if err != nil {
		return raise(comm, "MPI_Waitsome", err)
	}
	idx, ss, err := meshmpi.Waitsome(nil, rs)
	return some("MPI_Waitsome", es, arr, idx, ss, outcount, indices, sts, comm, err)
}

//export mpiabi_Testsome
func mpiabi_Testsome(n int32, arr, outcount, indices, sts uintptr) C.int {
	if outcount == 0 || (n > 0 && indices == 0) {
		return raise(self, "MPI_Testsome", errorf(errArg, "outcount or array_of_indices is NULL"))
	}
	es, rs, comm, err := requests("MPI_Testsome", n, arr)
	if err != nil {
		return raise(comm, "MPI_Testsome", err)
	}
	idx, ss, err := meshmpi.Testsome(rs)
	return some("MPI_Testsome", es, arr, idx, ss, outcount, indices, sts, comm, err)
}

// liveReq returns the request *p names, and its handle, for a call that
// needs a real one: a NULL p, MPI_REQUEST_NULL (which cannot be verb) and
// an unknown handle are errors.
func liveReq(p uintptr, verb string) (*reqEntry, uintptr, error) {
	if p == 0 {
		return nil, 0, errorf(errRequest, "request is NULL")
	}
	h := getHandle(p)
	if h == reqNull {
		return nil, h, errorf(errRequest, "MPI_REQUEST_NULL cannot be %s", verb)
	}
	e, err := lookupReq(h)
	return e, h, err
}

//export mpiabi_Request_free
func mpiabi_Request_free(p uintptr) C.int {
	e, h, err := liveReq(p, "freed")
	if err != nil {
		return raise(self, "MPI_Request_free", err)
	}
	// a buffered send still leaves, and is freed once it has (bsend.go)
	bsendRelease(e.bsend)
	e.bsend = nil
	if e.stg.active() {
		// a staged operation still runs: it completes unobserved, and its
		// received data still reach the program's buffer (MPI-4.1 §3.7.3)
		go func() {
			_, _ = e.r.Wait(nil)
			e.stg.unpack()
			_ = e.r.Free()
			e.stg.release()
		}()
	} else {
		if err := e.r.Free(); err != nil {
			return raise(e.comm, "MPI_Request_free", err)
		}
		e.stg.release()
	}
	state.mu.Lock()
	if e.greq && !e.greqDone {
		e.greqFreed = true // Grequest_complete removes it
	} else {
		state.reqs.remove(h)
	}
	state.mu.Unlock()
	putHandle(p, reqNull)
	return errSuccess
}

//export mpiabi_Cancel
func mpiabi_Cancel(p uintptr) C.int {
	e, _, err := liveReq(p, "cancelled")
	if err != nil {
		return raise(self, "MPI_Cancel", err)
	}
	if e.bsend != nil { // the buffered send, not its placeholder
		return raise(e.comm, "MPI_Cancel", bsendCancel(e.bsend))
	}
	return raise(e.comm, "MPI_Cancel", e.r.Cancel())
}

//export mpiabi_Start
func mpiabi_Start(p uintptr) C.int {
	e, _, err := liveReq(p, "started")
	if err != nil {
		return raise(self, "MPI_Start", err)
	}
	if e.stg != nil {
		e.stg.pack()
	}
	if e.start != nil && e.r.State() != meshmpi.Active {
		if err := e.start(); err != nil {
			return raise(e.comm, "MPI_Start", err)
		}
	}
	return raise(e.comm, "MPI_Start", e.r.Start())
}

//export mpiabi_Startall
func mpiabi_Startall(n int32, arr uintptr) C.int {
	es, rs, comm, err := requests("MPI_Startall", n, arr)
	if err == nil {
		for _, e := range es {
			if e == nil {
				err = errorf(errRequest, "MPI_REQUEST_NULL cannot be started")
			}
		}
	}
	if err != nil {
		return raise(comm, "MPI_Startall", err)
	}
	// the checks of meshmpi.Startall, before any start hook sends: a
	// Startall that fails starts nothing
	for i, e := range es {
		if !e.r.Persistent() || e.r.State() == meshmpi.Active || slices.Contains(es[:i], e) {
			return raise(comm, "MPI_Startall", errorf(errRequest, "request %d is active, not persistent or listed twice", i))
		}
	}
	for _, e := range es {
		if e.stg != nil {
			e.stg.pack()
		}
		if e.start != nil {
			if err := e.start(); err != nil {
				return raise(e.comm, "MPI_Startall", err)
			}
		}
	}
	return raise(comm, "MPI_Startall", meshmpi.Startall(rs))
}

// count is MPI_Get_count's (elements false) and MPI_Get_elements' answer
// for a status and a datatype: elements of the type, or basic elements,
// MPI_UNDEFINED if the bytes are not a whole number of them.
func count(call string, st, dth uintptr, elements bool) (int64, C.int) {
	if st == 0 {
		return 0, raise(self, call, errorf(errArg, "status is NULL (MPI_STATUS_IGNORE has no count)"))
	}
	e, err := typeOf(dth)
	if err == nil && elements {
		err = e.flatten()
	}
	if err != nil {
		return 0, raise(self, call, err)
	}
	b := statusBytes(st)
	if elements {
		return e.elements(b), errSuccess
	}
	size := int64(e.size())
	switch {
	case size == 0:
		return 0, errSuccess
	case b%size != 0:
		return undefined, errSuccess
	}
	return b / size, errSuccess
}

func getCount(call string, st, dth, out uintptr, elements, large bool) C.int {
	if out == 0 {
		return raise(self, call, errorf(errArg, "count is NULL"))
	}
	n, rc := count(call, st, dth, elements)
	if rc != errSuccess {
		return rc
	}
	if large {
		*(*int64)(ptr(out)) = n
		return rc
	}
	if n > 1<<31-1 {
		n = undefined
	}
	putInt(out, int(n))
	return rc
}

//export mpiabi_Get_count
func mpiabi_Get_count(st, dth, out uintptr) C.int {
	return getCount("MPI_Get_count", st, dth, out, false, false)
}

//export mpiabi_Get_count_c
func mpiabi_Get_count_c(st, dth, out uintptr) C.int {
	return getCount("MPI_Get_count_c", st, dth, out, false, true)
}

//export mpiabi_Get_elements
func mpiabi_Get_elements(st, dth, out uintptr) C.int {
	return getCount("MPI_Get_elements", st, dth, out, true, false)
}

//export mpiabi_Get_elements_c
func mpiabi_Get_elements_c(st, dth, out uintptr) C.int {
	return getCount("MPI_Get_elements_c", st, dth, out, true, true)
}

//export mpiabi_Get_elements_x
func mpiabi_Get_elements_x(st, dth, out uintptr) C.int {
	return getCount("MPI_Get_elements_x", st, dth, out, true, true)
}

//export mpiabi_Test_cancelled
func mpiabi_Test_cancelled(st, flag uintptr) C.int {
	if st == 0 || flag == 0 {
		return raise(self, "MPI_Test_cancelled", errorf(errArg, "status or flag is NULL"))
	}
	putInt(flag, int((*status)(ptr(st)).internal[2]))
	return errSuccess
}

// The MPI_Request_get_status_… calls test like MPI_Test… but free
// nothing and leave the handles as they are (MPI-4.1 §3.7.6).

//export mpiabi_Request_get_status_all
func mpiabi_Request_get_status_all(n int32, arr, flag, sts uintptr) C.int {
	if flag == 0 {
		return raise(self, "MPI_Request_get_status_all", errorf(errArg, "flag is NULL"))
	}
	es, _, comm, err := requests("MPI_Request_get_status_all", n, arr)
	if err != nil {
		return raise(comm, "MPI_Request_get_status_all", err)
	}
	ss := make([]meshmpi.Status, n)
	for i, e := range es {
		if e == nil {
			continue
		}
		s, ok, err := e.r.Test()
		if err != nil {
			return raise(e.comm, "MPI_Request_get_status_all", err)
		}
		if !ok {
			putInt(flag, 0)
			return errSuccess
		}
		e.stg.unpack()
		ss[i] = s
	}
	putInt(flag, 1)
	for i, e := range es {
		if e == nil {
			setEmpty(statusAt(sts, i), false)
		} else {
			setStatus(statusAt(sts, i), ss[i], false, 0)
		}
	}
	return errSuccess
}

//export mpiabi_Request_get_status_any
func mpiabi_Request_get_status_any(n int32, arr, index, flag, st uintptr) C.int {
	if index == 0 || flag == 0 {
		return raise(self, "MPI_Request_get_status_any", errorf(errArg, "index or flag is NULL"))
	}
	es, _, comm, err := requests("MPI_Request_get_status_any", n, arr)
	if err != nil {
		return raise(comm, "MPI_Request_get_status_any", err)
	}
	active := false
	for i, e := range es {
		if e == nil || e.r.State() != meshmpi.Active && e.r.Persistent() {
			continue
		}
		active = true
		s, ok, err := e.r.Test()
		if err != nil {
			return raise(e.comm, "MPI_Request_get_status_any", err)
		}
		if ok {
			e.stg.unpack()
			putInt(index, i)
			putInt(flag, 1)
			setStatus(st, s, false, 0)
			return errSuccess
		}
	}
	putInt(index, undefined)
	putInt(flag, b2i(!active))
	if !active {
		setEmpty(st, false)
	}
	return errSuccess
}

//export mpiabi_Request_get_status_some
func mpiabi_Request_get_status_some(n int32, arr, outcount, indices, sts uintptr) C.int {
	if outcount == 0 || (n > 0 && indices == 0) {
		return raise(self, "MPI_Request_get_status_some", errorf(errArg, "outcount or array_of_indices is NULL"))
	}
	es, _, comm, err := requests("MPI_Request_get_status_some", n, arr)
	if err != nil {
		return raise(comm, "MPI_Request_get_status_some", err)
	}
	active, k := false, 0
	out := unsafe.Slice((*int32)(ptr(indices)), n)
	for i, e := range es {
		if e == nil || e.r.State() != meshmpi.Active && e.r.Persistent() {
			continue
		}
		active = true
		s, ok, err := e.r.Test()
		if err != nil {
			return raise(e.comm, "MPI_Request_get_status_some", err)
		}
		if ok {
			e.stg.unpack()
			out[k] = int32(i)
			setStatus(statusAt(sts, k), s, false, 0)
			k++
		}
	}
	if !active {
		putInt(outcount, undefined)
	} else {
		putInt(outcount, k)
	}
	return errSuccess
}
