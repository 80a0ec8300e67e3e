package abi

/*
#include <stdint.h>
*/
import "C"

import (
	"sync"

	"github.com/meshmpi/meshmpi"
)

// Messages of the matched probes (MPI_Mprobe, MPI_Improbe), received once
// by MPI_Mrecv or MPI_Imrecv.
const (
	msgNull      uintptr = 0x128
	msgNoProc    uintptr = 0x129
	firstMessage uintptr = 0x5000000
)

type msgEntry struct {
	m    *meshmpi.Message
	comm uintptr
}

var messages struct {
	mu sync.Mutex
	t  table[msgEntry]
}

func mprobe(call string, src, tag int32, comm, flag, msg, st uintptr) C.int {
	e, err := lookupComm(comm)
	if err == nil && msg == 0 {
		err = errorf(errArg, "message is NULL")
	}
	if err == nil && tag < 0 && tag != anyTag {
		// before MPI_PROC_NULL's shortcut, which would take it
		err = errorf(errTag, "tag %d is negative", tag)
	}
	if err != nil {
		return raise(comm, call, err)
	}
	if src == procNull { // MPI_MESSAGE_NO_PROC, found at once
		putInt(flag, 1)
		putHandle(msg, msgNoProc)
		setStatus(st, meshmpi.Status{Source: meshmpi.ProcNull, Tag: meshmpi.AnyTag}, false, 0)
		return errSuccess
	}
	var m *meshmpi.Message
	var s meshmpi.Status
	ok := true
	if flag == 0 {
		m, s, err = e.c.Mprobe(rankIn(src), tagIn(tag))
	} else {
		m, s, ok, err = e.c.Improbe(rankIn(src), tagIn(tag))
		putInt(flag, b2i(ok && err == nil))
	}
	if err != nil || !ok {
		return raise(comm, call, err)
	}
	messages.mu.Lock()
	if messages.t.base == 0 {
		messages.t.base = firstMessage
	}
	h, added := messages.t.add(msgEntry{m: m, comm: comm})
	messages.mu.Unlock()
	if !added {
		return raise(comm, call, errorf(errIntern, "too many messages"))
	}
	putHandle(msg, h)
	setStatus(st, s, false, 0)
	return errSuccess
}

//export mpiabi_Mprobe
func mpiabi_Mprobe(src, tag int32, comm, msg, st uintptr) C.int {
	return mprobe("MPI_Mprobe", src, tag, comm, 0, msg, st)
}

//export mpiabi_Improbe
func mpiabi_Improbe(src, tag int32, comm, flag, msg, st uintptr) C.int {
	if flag == 0 {
		return raise(comm, "MPI_Improbe", errorf(errArg, "flag is NULL"))
	}
	return mprobe("MPI_Improbe", src, tag, comm, flag, msg, st)
}

// peekMessage is the message at p, left in the table.
func peekMessage(p uintptr) (msgEntry, bool, error) {
	if p == 0 {
		return msgEntry{}, false, errorf(errArg, "message is NULL")
	}
	h := getHandle(p)
	if h == msgNoProc {
		return msgEntry{comm: self}, true, nil
	}
	messages.mu.Lock()
	m, ok := messages.t.get(h)
	messages.mu.Unlock()
	if !ok {
		return m, false, errorf(errRequest, "%#x is not a message of MPI_Mprobe or MPI_Improbe", h)
	}
	return m, false, nil
}

// msgArgs checks a matched receive's buffer, count and datatype before
// its message is taken: a receive with a bad argument leaves the message
// (and the program's handle to it) for a corrected call, where taking it
// first lost it. MPI_MESSAGE_NO_PROC's receive is checked as well.
func msgArgs(p, buf uintptr, n int64, dth uintptr) (uintptr, error) {
	m, _, err := peekMessage(p)
	if err != nil {
		return self, err
	}
	if t, ok := derivedType(dth); ok {
		_, err = derivedArgs(m.comm, buf, n, t)
	} else {
		_, _, err = p2pArgs(m.comm, buf, n, dth)
	}
	return m.comm, err
}

// takeMessage removes the message at p from the table for its receive.
func takeMessage(p uintptr) (msgEntry, bool, error) {
	if p == 0 {
		return msgEntry{}, false, errorf(errArg, "message is NULL")
	}
	h := getHandle(p)
	if h == msgNoProc {
		putHandle(p, msgNull)
		return msgEntry{}, true, nil
	}
	messages.mu.Lock()
	defer messages.mu.Unlock()
	m, ok := messages.t.get(h)
	if !ok {
		return m, false, errorf(errRequest, "%#x is not a message of MPI_Mprobe or MPI_Improbe", h)
	}
	messages.t.remove(h)
	putHandle(p, msgNull)
	return m, false, nil
}

func mrecv(call string, buf uintptr, n int64, dth, msg, st uintptr) C.int {
	if comm, err := msgArgs(msg, buf, n, dth); err != nil {
		return raise(comm, call, err)
	}
	m, noProc, err := takeMessage(msg)
	if err != nil {
		return raise(self, call, err)
	}
	if noProc {
		setStatus(st, meshmpi.Status{Source: meshmpi.ProcNull, Tag: meshmpi.AnyTag}, false, 0)
		return errSuccess
	}
	if t, ok := derivedType(dth); ok {
		if _, err := derivedArgs(m.comm, buf, n, t); err != nil {
			return raise(m.comm, call, err)
		}
		// into a packed copy, then only the bytes received out of it: a
		// shorter message leaves the rest of the buffer as it was
		var stg staging
		p, pn := stg.add(t, buf, int(n), false, false)
		s, err := meshmpi.Mrecv(m.m, view[byte](p, pn))
		if got := min(s.Bytes, pn); got > 0 {
			mem, origin := span(t, buf, int(n))
			t.unpack(mem, origin, 0, cbytes(p, got))
		}
		stg.release()
		setStatus(st, s, false, 0)
		return raise(m.comm, call, err)
	}
	_, d, err := p2pArgs(m.comm, buf, n, dth)
	if err != nil {
		return raise(m.comm, call, err)
	}
	s, err := d.k.mrecv(m.m, buf, int(n))
	setStatus(st, s, false, 0)
	return raise(m.comm, call, err)
}

//export mpiabi_Mrecv
func mpiabi_Mrecv(buf uintptr, n int32, dt, msg, st uintptr) C.int {
	return mrecv("MPI_Mrecv", buf, int64(n), dt, msg, st)
}

//export mpiabi_Mrecv_c
func mpiabi_Mrecv_c(buf uintptr, n int64, dt, msg, st uintptr) C.int {
	return mrecv("MPI_Mrecv_c", buf, n, dt, msg, st)
}

func imrecv(call string, buf uintptr, n int64, dth, msg, req uintptr) C.int {
	if req == 0 {
		return raise(self, call, errorf(errArg, "request is NULL"))
	}
	if comm, err := msgArgs(msg, buf, n, dth); err != nil {
		return raise(comm, call, err)
	}
	m, noProc, err := takeMessage(msg)
	if err != nil {
		return raise(self, call, err)
	}
	if noProc { // a receive from MPI_PROC_NULL: complete at once
		e, _ := lookupComm(world)
		if e == nil {
			return raise(self, call, errorf(errOther, "MPI is not initialized"))
		}
		return irecv(call, 0, 0, 0x247, procNull, anyTag, world, req, nonblocking)
	}
	if t, ok := derivedType(dth); ok {
		if _, err := derivedArgs(m.comm, buf, n, t); err != nil {
			return raise(m.comm, call, err)
		}
		// the copy starts as the buffer is, so that a shorter message
		// leaves the rest of it as it was when the whole copy is
		// unpacked (MPI-4.1 §3.2.4)
		stg := &staging{}
		p, pn := stg.add(t, buf, int(n), true, true)
		stg.pack()
		r, err := meshmpi.Imrecv(m.m, view[byte](p, pn))
		if err != nil {
			stg.release()
			return raise(m.comm, call, err)
		}
		return raise(m.comm, call, addReqStg(r, m.comm, t.size(), stg, req))
	}
	_, d, err := p2pArgs(m.comm, buf, n, dth)
	if err != nil {
		return raise(m.comm, call, err)
	}
	r, err := d.k.imrecv(m.m, buf, int(n))
	if err == nil {
		err = addReq(r, m.comm, d.size, req)
	}
	return raise(m.comm, call, err)
}

//export mpiabi_Imrecv
func mpiabi_Imrecv(buf uintptr, n int32, dt, msg, req uintptr) C.int {
	return imrecv("MPI_Imrecv", buf, int64(n), dt, msg, req)
}

//export mpiabi_Imrecv_c
func mpiabi_Imrecv_c(buf uintptr, n int64, dt, msg, req uintptr) C.int {
	return imrecv("MPI_Imrecv_c", buf, n, dt, msg, req)
}
