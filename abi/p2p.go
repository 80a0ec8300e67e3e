package abi

/*
#include <stdint.h>
*/
import "C"

import "github.com/meshmpi/meshmpi"

// p2pArgs checks a point-to-point call's communicator, buffer, count and
// datatype. The common case (a predefined type meshmpi moves, a count in
// range, a buffer) is a table index and a few compares; anything else
// takes p2pArgsChecked, which says what is wrong.
func p2pArgs(comm, buf uintptr, n int64, dth uintptr) (*commEntry, dtype, error) {
	e, err := commFast(comm)
	if err != nil {
		return nil, dtype{}, err
	}
	if d, ok := fastType(dth); ok && n >= 0 && n <= maxCount && buf != inPlace && (buf != 0 || n == 0) {
		return e, *d, nil
	}
	return p2pArgsChecked(e, buf, n, dth)
}

// maxCount is the largest count a call takes.
const maxCount = 1 << 40

func p2pArgsChecked(e *commEntry, buf uintptr, n int64, dth uintptr) (*commEntry, dtype, error) {
	if dth == 0x200 && n == 0 {
		// MPICH takes MPI_DATATYPE_NULL for an empty message
		// (test/mpi/pt2pt/recvnull: Irecv(NULL, 0, MPI_DATATYPE_NULL,
		// MPI_PROC_NULL …)); nothing is moved, so any type serves.
		dth = 0x247
	}
	d, err := lookupType(dth)
	if err != nil {
		return nil, d, err
	}
	switch {
	case n < 0:
		return nil, d, errorf(errCount, "count %d is negative", n)
	case n > maxCount:
		return nil, d, errorf(errCount, "count %d is too large", n)
	case buf == inPlace:
		return nil, d, errorf(errBuffer, "MPI_IN_PLACE is not a point-to-point buffer")
	case buf == 0 && n > 0:
		return nil, d, errorf(errBuffer, "buffer is NULL with count %d", n)
	}
	return e, d, nil
}

func send(call string, buf uintptr, n int64, dth uintptr, dest, tag int32, comm uintptr, sync bool) C.int {
	if isDerived(dth) {
		if t, ok := derivedType(dth); ok {
			return raise(comm, call, sendDerived(t, buf, n, dest, tag, comm, sync))
		}
	}
	e, d, err := p2pArgs(comm, buf, n, dth)
	if err != nil {
		return raise(comm, call, err)
	}
	return ret(comm, call, d.k.send(e.c, buf, int(n), rankIn(dest), tagIn(tag), sync))
}

//export mpiabi_Send
func mpiabi_Send(buf uintptr, n int32, dt uintptr, dest, tag int32, comm uintptr) C.int {
	return send("MPI_Send", buf, int64(n), dt, dest, tag, comm, false)
}

//export mpiabi_Send_c
func mpiabi_Send_c(buf uintptr, n int64, dt uintptr, dest, tag int32, comm uintptr) C.int {
	return send("MPI_Send_c", buf, n, dt, dest, tag, comm, false)
}

//export mpiabi_Ssend
func mpiabi_Ssend(buf uintptr, n int32, dt uintptr, dest, tag int32, comm uintptr) C.int {
	return send("MPI_Ssend", buf, int64(n), dt, dest, tag, comm, true)
}

//export mpiabi_Ssend_c
func mpiabi_Ssend_c(buf uintptr, n int64, dt uintptr, dest, tag int32, comm uintptr) C.int {
	return send("MPI_Ssend_c", buf, n, dt, dest, tag, comm, true)
}

func recv(call string, buf uintptr, n int64, dth uintptr, src, tag int32, comm, st uintptr) C.int {
	if isDerived(dth) {
		if t, ok := derivedType(dth); ok {
			s, err := recvDerived(t, buf, n, src, tag, comm)
			if err == nil || classOf(err) == errTruncate {
				setStatus(st, s, false, 0)
			}
			return raise(comm, call, err)
		}
	}
	e, d, err := p2pArgs(comm, buf, n, dth)
	if err != nil {
		return raise(comm, call, err)
	}
	s, err := d.k.recv(e.c, buf, int(n), rankIn(src), tagIn(tag))
	if st != 0 {
		putStatus((*status)(ptr(st)), &s)
	}
	return ret(comm, call, err)
}

//export mpiabi_Recv
func mpiabi_Recv(buf uintptr, n int32, dt uintptr, src, tag int32, comm, st uintptr) C.int {
	return recv("MPI_Recv", buf, int64(n), dt, src, tag, comm, st)
}

//export mpiabi_Recv_c
func mpiabi_Recv_c(buf uintptr, n int64, dt uintptr, src, tag int32, comm, st uintptr) C.int {
	return recv("MPI_Recv_c", buf, n, dt, src, tag, comm, st)
}

func isend(call string, buf uintptr, n int64, dth uintptr, dest, tag int32, comm, req uintptr, sync bool, m mode) C.int {
	if req == 0 {
		return raise(comm, call, errorf(errArg, "request is NULL"))
	}
	if isDerived(dth) {
		if t, ok := derivedType(dth); ok {
			r, stg, err := isendDerived(t, buf, n, dest, tag, comm, sync, m)
			if err == nil {
				err = addReqStg(r, comm, t.size(), stg, req)
			}
			return raise(comm, call, err)
		}
	}
	e, d, err := p2pArgs(comm, buf, n, dth)
	if err != nil {
		return raise(comm, call, err)
	}
	r, err := d.k.isend(e.c, buf, int(n), rankIn(dest), tagIn(tag), sync, m)
	if err == nil {
		err = addReq(r, comm, d.size, req)
	}
	return ret(comm, call, err)
}

//export mpiabi_Isend
func mpiabi_Isend(buf uintptr, n int32, dt uintptr, dest, tag int32, comm, req uintptr) C.int {
	return isend("MPI_Isend", buf, int64(n), dt, dest, tag, comm, req, false, nonblocking)
}

//export mpiabi_Isend_c
func mpiabi_Isend_c(buf uintptr, n int64, dt uintptr, dest, tag int32, comm, req uintptr) C.int {
	return isend("MPI_Isend_c", buf, n, dt, dest, tag, comm, req, false, nonblocking)
}

//export mpiabi_Issend
func mpiabi_Issend(buf uintptr, n int32, dt uintptr, dest, tag int32, comm, req uintptr) C.int {
	return isend("MPI_Issend", buf, int64(n), dt, dest, tag, comm, req, true, nonblocking)
}

//export mpiabi_Issend_c
func mpiabi_Issend_c(buf uintptr, n int64, dt uintptr, dest, tag int32, comm, req uintptr) C.int {
	return isend("MPI_Issend_c", buf, n, dt, dest, tag, comm, req, true, nonblocking)
}

//export mpiabi_Send_init
func mpiabi_Send_init(buf uintptr, n int32, dt uintptr, dest, tag int32, comm, req uintptr) C.int {
	return isend("MPI_Send_init", buf, int64(n), dt, dest, tag, comm, req, false, persistent)
}

//export mpiabi_Send_init_c
func mpiabi_Send_init_c(buf uintptr, n int64, dt uintptr, dest, tag int32, comm, req uintptr) C.int {
	return isend("MPI_Send_init_c", buf, n, dt, dest, tag, comm, req, false, persistent)
}

//export mpiabi_Ssend_init
func mpiabi_Ssend_init(buf uintptr, n int32, dt uintptr, dest, tag int32, comm, req uintptr) C.int {
	return isend("MPI_Ssend_init", buf, int64(n), dt, dest, tag, comm, req, true, persistent)
}

//export mpiabi_Ssend_init_c
func mpiabi_Ssend_init_c(buf uintptr, n int64, dt uintptr, dest, tag int32, comm, req uintptr) C.int {
	return isend("MPI_Ssend_init_c", buf, n, dt, dest, tag, comm, req, true, persistent)
}

func irecv(call string, buf uintptr, n int64, dth uintptr, src, tag int32, comm, req uintptr, m mode) C.int {
	if req == 0 {
		return raise(comm, call, errorf(errArg, "request is NULL"))
	}
	if isDerived(dth) {
		if t, ok := derivedType(dth); ok {
			r, stg, err := irecvDerived(t, buf, n, src, tag, comm, m)
			if err == nil {
				err = addReqStg(r, comm, t.size(), stg, req)
			}
			return raise(comm, call, err)
		}
	}
	e, d, err := p2pArgs(comm, buf, n, dth)
	if err != nil {
		return raise(comm, call, err)
	}
	r, err := d.k.irecv(e.c, buf, int(n), rankIn(src), tagIn(tag), m)
	if err == nil {
		err = addReq(r, comm, d.size, req)
	}
	return ret(comm, call, err)
}

//export mpiabi_Irecv
func mpiabi_Irecv(buf uintptr, n int32, dt uintptr, src, tag int32, comm, req uintptr) C.int {
	return irecv("MPI_Irecv", buf, int64(n), dt, src, tag, comm, req, nonblocking)
}

//export mpiabi_Irecv_c
func mpiabi_Irecv_c(buf uintptr, n int64, dt uintptr, src, tag int32, comm, req uintptr) C.int {
	return irecv("MPI_Irecv_c", buf, n, dt, src, tag, comm, req, nonblocking)
}

//export mpiabi_Recv_init
func mpiabi_Recv_init(buf uintptr, n int32, dt uintptr, src, tag int32, comm, req uintptr) C.int {
	return irecv("MPI_Recv_init", buf, int64(n), dt, src, tag, comm, req, persistent)
}

//export mpiabi_Recv_init_c
func mpiabi_Recv_init_c(buf uintptr, n int64, dt uintptr, src, tag int32, comm, req uintptr) C.int {
	return irecv("MPI_Recv_init_c", buf, n, dt, src, tag, comm, req, persistent)
}

// sendrecv posts the receive, sends, then waits for the receive, so the
// two sides may use different element types, predefined or derived.
func sendrecv(call string, sbuf uintptr, sn int64, sdt uintptr, dest, stag int32,
	rbuf uintptr, rn int64, rdt uintptr, src, rtag int32, comm, st uintptr) C.int {
	var r *meshmpi.Request
	var stg *staging // a strided receive type's packed copy
	var err error
	if t, ok := derivedType(rdt); ok {
		r, stg, err = irecvDerived(t, rbuf, rn, src, rtag, comm, nonblocking)
	} else {
		var e *commEntry
		var rd dtype
		if e, rd, err = p2pArgs(comm, rbuf, rn, rdt); err == nil {
			r, err = rd.k.irecv(e.c, rbuf, int(rn), rankIn(src), tagIn(rtag), nonblocking)
		}
	}
	if err != nil {
		return raise(comm, call, err)
	}
	var serr error
	if t, ok := derivedType(sdt); ok {
		serr = sendDerived(t, sbuf, sn, dest, stag, comm, false)
	} else {
		e, sd, err := p2pArgs(comm, sbuf, sn, sdt)
		if serr = err; err == nil {
			serr = sd.k.send(e.c, sbuf, int(sn), rankIn(dest), tagIn(stag), false)
		}
	}
	if serr != nil {
		_ = r.Cancel()
	}
	s, rerr := r.Wait(nil)
	_ = r.Free()
	if serr == nil && rerr == nil {
		stg.unpack()
	}
	stg.release()
	if serr != nil {
		return raise(comm, call, serr)
	}
	setStatus(st, s, false, 0)
	return raise(comm, call, rerr)
}

//export mpiabi_Sendrecv
func mpiabi_Sendrecv(sbuf uintptr, sn int32, sdt uintptr, dest, stag int32,
	rbuf uintptr, rn int32, rdt uintptr, src, rtag int32, comm, st uintptr) C.int {
	return sendrecv("MPI_Sendrecv", sbuf, int64(sn), sdt, dest, stag, rbuf, int64(rn), rdt, src, rtag, comm, st)
}

//export mpiabi_Sendrecv_c
func mpiabi_Sendrecv_c(sbuf uintptr, sn int64, sdt uintptr, dest, stag int32,
	rbuf uintptr, rn int64, rdt uintptr, src, rtag int32, comm, st uintptr) C.int {
	return sendrecv("MPI_Sendrecv_c", sbuf, sn, sdt, dest, stag, rbuf, rn, rdt, src, rtag, comm, st)
}

func sendrecvReplace(call string, buf uintptr, n int64, dth uintptr, dest, stag, src, rtag int32, comm, st uintptr) C.int {
	if t, ok := derivedType(dth); ok {
		c, err := derivedArgs(comm, buf, n, t)
		if err != nil {
			return raise(comm, call, err)
		}
		var stg staging
		p, pn := stg.add(t, buf, int(n), true, true)
		stg.pack()
		s, err := meshmpi.SendrecvReplace(c.c, view[byte](p, pn), rankIn(dest), tagIn(stag), rankIn(src), tagIn(rtag))
		if err == nil {
			stg.unpack()
			setStatus(st, s, false, 0)
		}
		stg.release()
		return raise(comm, call, err)
	}
	e, d, err := p2pArgs(comm, buf, n, dth)
	if err != nil {
		return raise(comm, call, err)
	}
	s, err := d.k.sendrecvReplace(e.c, buf, int(n), rankIn(dest), tagIn(stag), rankIn(src), tagIn(rtag))
	if err == nil {
		setStatus(st, s, false, 0)
	}
	return raise(comm, call, err)
}

//export mpiabi_Sendrecv_replace
func mpiabi_Sendrecv_replace(buf uintptr, n int32, dt uintptr, dest, stag, src, rtag int32, comm, st uintptr) C.int {
	return sendrecvReplace("MPI_Sendrecv_replace", buf, int64(n), dt, dest, stag, src, rtag, comm, st)
}

//export mpiabi_Sendrecv_replace_c
func mpiabi_Sendrecv_replace_c(buf uintptr, n int64, dt uintptr, dest, stag, src, rtag int32, comm, st uintptr) C.int {
	return sendrecvReplace("MPI_Sendrecv_replace_c", buf, n, dt, dest, stag, src, rtag, comm, st)
}

func probe(call string, src, tag int32, comm, flag, st uintptr) C.int {
	e, err := lookupComm(comm)
	if err != nil {
		return raise(comm, call, err)
	}
	if flag == 0 {
		s, err := e.c.Probe(rankIn(src), tagIn(tag))
		if err == nil {
			setStatus(st, s, false, 0)
		}
		return raise(comm, call, err)
	}
	s, ok, err := e.c.Iprobe(rankIn(src), tagIn(tag))
	putInt(flag, b2i(ok))
	if ok && err == nil {
		setStatus(st, s, false, 0)
	}
	return raise(comm, call, err)
}

//export mpiabi_Probe
func mpiabi_Probe(src, tag int32, comm, st uintptr) C.int {
	return probe("MPI_Probe", src, tag, comm, 0, st)
}

//export mpiabi_Iprobe
func mpiabi_Iprobe(src, tag int32, comm, flag, st uintptr) C.int {
	if flag == 0 {
		return raise(comm, "MPI_Iprobe", errorf(errArg, "flag is NULL"))
	}
	return probe("MPI_Iprobe", src, tag, comm, flag, st)
}

// The ready sends are standard sends: a ready send may always be one
// (MPI-4.1 §3.4: "a ready send ... can be replaced by a standard send").

//export mpiabi_Rsend
func mpiabi_Rsend(buf uintptr, n int32, dt uintptr, dest, tag int32, comm uintptr) C.int {
	return send("MPI_Rsend", buf, int64(n), dt, dest, tag, comm, false)
}

//export mpiabi_Rsend_c
func mpiabi_Rsend_c(buf uintptr, n int64, dt uintptr, dest, tag int32, comm uintptr) C.int {
	return send("MPI_Rsend_c", buf, n, dt, dest, tag, comm, false)
}

//export mpiabi_Irsend
func mpiabi_Irsend(buf uintptr, n int32, dt uintptr, dest, tag int32, comm, req uintptr) C.int {
	return isend("MPI_Irsend", buf, int64(n), dt, dest, tag, comm, req, false, nonblocking)
}

//export mpiabi_Irsend_c
func mpiabi_Irsend_c(buf uintptr, n int64, dt uintptr, dest, tag int32, comm, req uintptr) C.int {
	return isend("MPI_Irsend_c", buf, n, dt, dest, tag, comm, req, false, nonblocking)
}

//export mpiabi_Rsend_init
func mpiabi_Rsend_init(buf uintptr, n int32, dt uintptr, dest, tag int32, comm, req uintptr) C.int {
	return isend("MPI_Rsend_init", buf, int64(n), dt, dest, tag, comm, req, false, persistent)
}

//export mpiabi_Rsend_init_c
func mpiabi_Rsend_init_c(buf uintptr, n int64, dt uintptr, dest, tag int32, comm, req uintptr) C.int {
	return isend("MPI_Rsend_init_c", buf, n, dt, dest, tag, comm, req, false, persistent)
}
