package abi

/*
#include <stdint.h>
*/
import "C"

import (
	"errors"

	"github.com/meshmpi/meshmpi"
)

// MPI_Bsend_init and MPI_Buffer_iflush (MPI-4.1 §3.6.1, §3.9).
//
// A persistent buffered send is a persistent send to MPI_PROC_NULL on the
// same communicator, which completes at once when started, with a start
// hook (reqEntry.start) that makes the buffered send of the program's
// buffer as MPI_Bsend does: the message is copied into the attached
// buffer's charge and sent, so each MPI_Start is local and the request is
// complete as soon as it is started. The handle stands for its last
// start's buffered send as far as MPI_Cancel goes (reqEntry.bsend).
//
// MPI_Buffer_iflush's request is a generalized one (meshmpi.GrequestStart)
// that a goroutine completes once the buffered sends pending at the call
// have left; it takes them out of bsends.inFlight, so the program's other
// buffered sends and flushes do not touch them meanwhile, and MPI_Buffer_
// detach and flush wait for it (bsends.flushing).

func bsendInit(call string, buf uintptr, n int64, dt uintptr, dest, tag int32, comm, req uintptr) C.int {
	if req == 0 {
		return raise(comm, call, errorf(errArg, "request is NULL"))
	}
	// every argument is checked here, as MPI_Send_init checks its own:
	// MPI_Start would find them only after the program's next steps
	ce, err := lookupComm(comm)
	if err == nil {
		err = sendPeer(ce, dest, tag)
	}
	if err == nil {
		if t, ok := derivedType(dt); ok {
			_, err = derivedArgs(comm, buf, n, t)
		} else {
			_, _, err = p2pArgsChecked(ce, buf, n, dt)
		}
	}
	if err != nil {
		return raise(comm, call, err)
	}
	if rc := isend(call, 0, 0, 0x247, procNull, 0, comm, req, false, persistent); rc != errSuccess {
		return rc
	}
	e, err := lookupReq(getHandle(req))
	if err != nil {
		return raise(comm, call, err)
	}
	// each start's buffered send is the one the handle stands for
	// (reqEntry.bsend), in place of the last start's
	e.start = func() error {
		p, err := bufferedSend(buf, n, dt, dest, tag, comm, true)
		if err != nil {
			return err
		}
		bsendRelease(e.bsend)
		e.bsend = p
		return nil
	}
	return errSuccess
}

// sendPeer checks a send's destination and tag where no Go call does at
// once: a rank of the communicator (of the remote group on an
// intercommunicator) or MPI_PROC_NULL, and a tag from 0 to MPI_TAG_UB
// (MPI_ANY_TAG is a receive's).
func sendPeer(e *commEntry, dest, tag int32) error {
	size := e.c.Size()
	if e.c.TestInter() {
		size = e.c.RemoteSize()
	}
	if dest != procNull && (dest < 0 || int(dest) >= size) {
		return errorf(errRank, "dest %d is not a rank of the communicator's %d", dest, size)
	}
	if tag < 0 {
		return errorf(errTag, "tag %d is not a send's tag (0 to MPI_TAG_UB)", tag)
	}
	return nil
}

//export mpiabi_Bsend_init
func mpiabi_Bsend_init(buf uintptr, n int32, dt uintptr, dest, tag int32, comm, req uintptr) C.int {
	return bsendInit("MPI_Bsend_init", buf, int64(n), dt, dest, tag, comm, req)
}

//export mpiabi_Bsend_init_c
func mpiabi_Bsend_init_c(buf uintptr, n int64, dt uintptr, dest, tag int32, comm, req uintptr) C.int {
	return bsendInit("MPI_Bsend_init_c", buf, n, dt, dest, tag, comm, req)
}

//export mpiabi_Buffer_iflush
func mpiabi_Buffer_iflush(req uintptr) C.int {
	const call = "MPI_Buffer_iflush"
	if req == 0 {
		return raise(self, call, errorf(errArg, "request is NULL"))
	}
	w := worldComm()
	if w == nil {
		return raise(self, call, errorf(errOther, "MPI is not initialized"))
	}
	var ferr error // the first send's error, the request's
	nop := func() error { return nil }
	r, err := meshmpi.GrequestStart(w,
		func(st *meshmpi.Status) error { st.Err = ferr; return ferr },
		nop, func(bool) error { return nil })
	if err != nil {
		return raise(self, call, err)
	}
	if err := addReq(r, self, 1, req); err != nil {
		return raise(self, call, err)
	}
	bsends.mu.Lock()
	// a handle observed the sends done already (bsendComplete), and waits
	// on the cancelled ones itself: they stay, and complete with the
	// receiver's answer; the others are the goroutine's, and their
	// handles leave r alone meanwhile (flushing)
	var taken []*pendingBsend
	kept := bsends.inFlight[:0]
	for _, p := range bsends.inFlight {
		switch {
		case p.done:
		case p.cancelled:
			kept = append(kept, p)
		default:
			p.flushing = true
			taken = append(taken, p)
		}
	}
	clear(bsends.inFlight[len(kept):])
	bsends.inFlight = kept
	bsends.flushing.Add(1)
	bsends.mu.Unlock()
	go func() {
		var errs []error
		for _, p := range taken {
			st, err := p.r.Wait(nil) // alone on r: flushing
			if err != nil {
				errs = append(errs, err)
			}
			bsends.mu.Lock()
			p.finished(st, err)
			bsends.mu.Unlock()
		}
		ferr = errors.Join(errs...)
		bsends.flushing.Done()
		_ = meshmpi.GrequestComplete(r) // the first and only completion
	}()
	return errSuccess
}
