package abi

/*
#include <stdint.h>
*/
import "C"

import "github.com/meshmpi/meshmpi"

// p2pSide is one buffer of MPI_Isendrecv as bytes: a predefined type's
// buffer in place, a derived type's packed copy in stg; size is the bytes
// of one element of the type (the status's count).
func p2pSide(stg **staging, comm, buf uintptr, n int64, dth uintptr, in, out bool) (*commEntry, []byte, int, error) {
	if t, ok := derivedType(dth); ok {
		e, err := derivedArgs(comm, buf, n, t)
		if err != nil {
			return nil, nil, 0, err
		}
		if *stg == nil {
			*stg = &staging{}
		}
		p, pn := (*stg).add(t, buf, int(n), in, out)
		return e, view[byte](p, pn), t.size(), nil
	}
	e, d, err := p2pArgs(comm, buf, n, dth)
	if err != nil {
		return nil, nil, 0, err
	}
	return e, view[byte](buf, int(n)*d.size), d.size, nil
}

// isendrecv is MPI_Isendrecv over the Go API's, on the bytes of both
// buffers: point-to-point messages carry no type, so a receive's status
// counts in its own type's elements (reqEntry.size) whatever was sent.
func isendrecv(call string, sbuf uintptr, sn int64, sdt uintptr, dest, stag int32,
	rbuf uintptr, rn int64, rdt uintptr, src, rtag int32, comm, req uintptr) C.int {
	if req == 0 {
		return raise(comm, call, errorf(errArg, "request is NULL"))
	}
	var stg *staging
	e, sb, _, err := p2pSide(&stg, comm, sbuf, sn, sdt, true, false)
	var rb []byte
	var size int
	if err == nil {
		// the receive side's copy is packed too: a shorter message must
		// leave the rest of the buffer as it was (MPI-4.1 §3.2.4)
		_, rb, size, err = p2pSide(&stg, comm, rbuf, rn, rdt, true, true)
	}
	if err == nil && stg != nil {
		err = stg.check()
	}
	if err != nil {
		stg.release()
		return raise(comm, call, err)
	}
	if stg != nil {
		stg.pack()
	}
	r, err := meshmpi.Isendrecv(e.c, sb, rankIn(dest), tagIn(stag), rb, rankIn(src), tagIn(rtag))
	if err != nil {
		stg.release()
		return raise(comm, call, err)
	}
	return raise(comm, call, addReqStg(r, comm, size, stg, req))
}

//export mpiabi_Isendrecv
func mpiabi_Isendrecv(sbuf uintptr, sn int32, sdt uintptr, dest, stag int32,
	rbuf uintptr, rn int32, rdt uintptr, src, rtag int32, comm, req uintptr) C.int {
	return isendrecv("MPI_Isendrecv", sbuf, int64(sn), sdt, dest, stag, rbuf, int64(rn), rdt, src, rtag, comm, req)
}

//export mpiabi_Isendrecv_c
func mpiabi_Isendrecv_c(sbuf uintptr, sn int64, sdt uintptr, dest, stag int32,
	rbuf uintptr, rn int64, rdt uintptr, src, rtag int32, comm, req uintptr) C.int {
	return isendrecv("MPI_Isendrecv_c", sbuf, sn, sdt, dest, stag, rbuf, rn, rdt, src, rtag, comm, req)
}

// isendrecvReplace is MPI_Isendrecv_replace: the Go API's receives into a
// copy and replaces the buffer's bytes when the request completes; a
// derived type's packed copy is what it replaces, unpacked then too.
func isendrecvReplace(call string, buf uintptr, n int64, dth uintptr, dest, stag, src, rtag int32, comm, req uintptr) C.int {
	if req == 0 {
		return raise(comm, call, errorf(errArg, "request is NULL"))
	}
	var stg *staging
	e, b, size, err := p2pSide(&stg, comm, buf, n, dth, true, true)
	if err == nil && stg != nil {
		err = stg.check()
	}
	if err != nil {
		stg.release()
		return raise(comm, call, err)
	}
	if stg != nil {
		stg.pack()
	}
	r, err := meshmpi.IsendrecvReplace(e.c, b, rankIn(dest), tagIn(stag), rankIn(src), tagIn(rtag))
	if err != nil {
		stg.release()
		return raise(comm, call, err)
	}
	return raise(comm, call, addReqStg(r, comm, size, stg, req))
}

//export mpiabi_Isendrecv_replace
func mpiabi_Isendrecv_replace(buf uintptr, n int32, dt uintptr, dest, stag, src, rtag int32, comm, req uintptr) C.int {
	return isendrecvReplace("MPI_Isendrecv_replace", buf, int64(n), dt, dest, stag, src, rtag, comm, req)
}

//export mpiabi_Isendrecv_replace_c
func mpiabi_Isendrecv_replace_c(buf uintptr, n int64, dt uintptr, dest, stag, src, rtag int32, comm, req uintptr) C.int {
	return isendrecvReplace("MPI_Isendrecv_replace_c", buf, n, dt, dest, stag, src, rtag, comm, req)
}
