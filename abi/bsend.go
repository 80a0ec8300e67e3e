package abi

/*
#include <stdint.h>
*/
import "C"

import (
	"sync"

	"github.com/meshmpi/meshmpi"
)

// Buffered sends (MPI_Bsend) copy the message and send the copy, so the
// call returns as soon as the program's buffer is free again. The copy is
// Go memory; the buffer the program attached (MPI_Buffer_attach) bounds
// how much may be in flight, and MPI_Buffer_detach waits for every
// buffered message to leave. Each message is charged its bytes and
// bsendOverhead: the header's MPI_BSEND_OVERHEAD (512, the standard ABI's)
// is a bound that programs provision (MPI-4.1 §3.6.1), and an
// implementation may use less; MPICH uses 96, and programs written
// against MPICH (test/mpi/pt2pt/bsend5: ten 40-byte messages in 2000
// bytes) count on no more.
const bsendOverhead = 96

// pendingBsend is one buffered send in flight. Its fields are guarded by
// bsends.mu, and so is every use of r, which is not safe for concurrent
// use: reclaim tests it while a C handle (MPI_Ibsend's, a started
// MPI_Bsend_init's) may cancel and wait on it.
type pendingBsend struct {
	r    *meshmpi.Request
	size int
	// held says a C handle stands for this send (reqEntry.bsend): whoever
	// sees it complete frees r only if no handle holds it, and the handle's
	// release frees it if it completed meanwhile
	held bool
	// done says its completion was observed, with st and err, and its
	// space given back; freed that r was freed; spaceBack that its space
	// was given back (at done, or before: its data had left while a handle
	// could still cancel it)
	done, freed, spaceBack bool
	st                     meshmpi.Status
	err                    error
	// cancelled says MPI_Cancel cancelled r: the handle's completion is
	// then r's, since only the receiver's answer says whether it worked;
	// flushing says MPI_Buffer_iflush's goroutine waits on r, which the
	// handle then leaves alone (a cancel is not attempted: the send
	// completes normally, which MPI-4.1 §3.8.4 allows)
	cancelled, flushing bool
}

var bsends struct {
	mu       sync.Mutex
	addr     uintptr // the attached buffer, 0 when none
	size     int64
	used     int64
	inFlight []*pendingBsend
	// flushing counts MPI_Buffer_iflush's goroutines (bsendinit.go), which
	// own the sends they took from inFlight until they have left
	flushing sync.WaitGroup
}

// finished records p's completion: its space goes back, and r is freed
// unless a handle still holds it. The caller holds bsends.mu.
func (p *pendingBsend) finished(st meshmpi.Status, err error) {
	p.done, p.st, p.err = true, st, err
	p.giveBack()
	if !p.held {
		_ = p.r.Free()
		p.freed = true
	}
}

// giveBack returns p's space to the attached buffer, once.
func (p *pendingBsend) giveBack() {
	if !p.spaceBack {
		p.spaceBack = true
		bsends.used -= int64(p.size)
	}
}

// reclaim drops the buffered sends that have completed; with wait it
// waits for all of them. The caller holds bsends.mu.
func reclaim(wait bool) error {
	var first error
	kept := bsends.inFlight[:0]
	for _, p := range bsends.inFlight {
		if p.done { // its handle observed it (bsendComplete)
			continue
		}
		if !wait && p.held && !p.cancelled {
			// completing a send (an eager one finishes locally at once)
			// would end the chance to cancel it, so while a handle may
			// still cancel it, it stays active: its space comes back once
			// its data has left (the receiver needs none of it to withdraw
			// the message), the send at the handle's completion or free
			// (bsendRelease)
			if p.r.Finished() {
				p.giveBack()
			}
			kept = append(kept, p)
			continue
		}
		st, done, err := observe(p.r, wait)
		if !done {
			kept = append(kept, p)
			continue
		}
		if err != nil && first == nil {
			first = err
		}
		p.finished(st, err)
	}
	clear(bsends.inFlight[len(kept):])
	bsends.inFlight = kept
	return first
}

// observe completes r, waiting for it (wait) or testing it once: done
// false means not yet.
func observe(r *meshmpi.Request, wait bool) (meshmpi.Status, bool, error) {
	if wait {
		st, err := r.Wait(nil)
		return st, true, err
	}
	return r.Test()
}

// bsendCancel is MPI_Cancel of a handle that stands for the buffered send
// p: the send is withdrawn if the receiver has not matched it. A send
// that completed already, or that MPI_Buffer_iflush waits on, is left to
// complete normally: its status then says not cancelled.
func bsendCancel(p *pendingBsend) error {
	bsends.mu.Lock()
	defer bsends.mu.Unlock()
	if p.done || p.flushing || p.cancelled {
		return nil
	}
	if err := p.r.Cancel(); err != nil {
		return err
	}
	p.cancelled = true
	return nil
}

// bsendComplete gives the completion of a handle that stands for the
// buffered send p, whose own (placeholder) request completed with st and
// err: a send not cancelled completed locally, when it was copied, so
// the handle's status is st; a cancelled one completes with the
// receiver's answer, waited for (wait) or tested. ok false: not yet.
func bsendComplete(p *pendingBsend, st meshmpi.Status, err error, wait bool) (meshmpi.Status, bool, error) {
	bsends.mu.Lock()
	defer bsends.mu.Unlock()
	if !p.cancelled {
		return st, true, err
	}
	if !p.done {
		// bounded: the cancel's answer comes, or the link is lost
		pst, ok, perr := observe(p.r, wait)
		if !ok {
			return st, false, perr
		}
		p.finished(pst, perr)
	}
	return p.st, true, p.err
}

// bsendRelease lets go of a handle's hold on p: a send that completed
// is freed now, one still in flight when it completes.
func bsendRelease(p *pendingBsend) {
	if p == nil {
		return
	}
	bsends.mu.Lock()
	defer bsends.mu.Unlock()
	p.held = false
	if p.done && !p.freed {
		_ = p.r.Free()
		p.freed = true
	}
}

func attach(call string, buf uintptr, size int64) C.int {
	bsends.mu.Lock()
	defer bsends.mu.Unlock()
	switch {
	case bsends.addr != 0:
		return raise(self, call, errorf(errBuffer, "a buffer is attached already"))
	case buf == 0 || buf == 2: // NULL, MPI_BUFFER_AUTOMATIC
		return raise(self, call, errorf(errBuffer, "meshmpi needs a buffer of the program's (MPI_BUFFER_AUTOMATIC is not in the C binding yet)"))
	case size < 0:
		return raise(self, call, errorf(errArg, "size %d is negative", size))
	}
	bsends.addr, bsends.size = buf, size
	return errSuccess
}

//export mpiabi_Buffer_attach
func mpiabi_Buffer_attach(buf uintptr, size int32) C.int {
	return attach("MPI_Buffer_attach", buf, int64(size))
}

//export mpiabi_Buffer_attach_c
func mpiabi_Buffer_attach_c(buf uintptr, size int64) C.int {
	return attach("MPI_Buffer_attach_c", buf, size)
}

func detach(call string, addr uintptr, size uintptr, large bool) C.int {
	if addr == 0 || size == 0 {
		return raise(self, call, errorf(errArg, "buffer_addr or size is NULL"))
	}
	bsends.flushing.Wait() // MPI_Buffer_iflush's sends leave first
	bsends.mu.Lock()
	defer bsends.mu.Unlock()
	if bsends.addr == 0 {
		return raise(self, call, errorf(errBuffer, "no buffer is attached"))
	}
	err := reclaim(true)
	putHandle(addr, bsends.addr)
	if large {
		*(*int64)(ptr(size)) = bsends.size
	} else {
		putInt(size, int(bsends.size))
	}
	bsends.addr, bsends.size, bsends.used = 0, 0, 0
	return raise(self, call, err)
}

//export mpiabi_Buffer_detach
func mpiabi_Buffer_detach(addr, size uintptr) C.int {
	return detach("MPI_Buffer_detach", addr, size, false)
}

//export mpiabi_Buffer_detach_c
func mpiabi_Buffer_detach_c(addr, size uintptr) C.int {
	return detach("MPI_Buffer_detach_c", addr, size, true)
}

//export mpiabi_Buffer_flush
func mpiabi_Buffer_flush() C.int {
	bsends.flushing.Wait()
	bsends.mu.Lock()
	defer bsends.mu.Unlock()
	return raise(self, "MPI_Buffer_flush", reclaim(true))
}

func bsend(call string, buf uintptr, n int64, dth uintptr, dest, tag int32, comm uintptr) C.int {
	_, err := bufferedSend(buf, n, dth, dest, tag, comm, false)
	return raise(comm, call, err)
}

// bufferedSend copies the message and starts sending the copy, charging
// the attached buffer (MPI_Bsend, and each start of MPI_Bsend_init's).
// With hold, a C handle will stand for the send (pendingBsend.held): it is
// held before another thread's reclaim could free it.
func bufferedSend(buf uintptr, n int64, dth uintptr, dest, tag int32, comm uintptr, hold bool) (*pendingBsend, error) {
	var e *commEntry
	var k kind
	var t *typeEntry
	var err error
	if dt, ok := derivedType(dth); ok {
		t, k = dt, tk[uint8]{}
		e, err = derivedArgs(comm, buf, n, t)
	} else {
		var d dtype
		e, d, err = p2pArgs(comm, buf, n, dth)
		k = d.k
	}
	if err != nil {
		return nil, err
	}
	bytes := n * int64(t.sizeOr(dth))
	bsends.mu.Lock()
	defer bsends.mu.Unlock()
	if err := reclaim(false); err != nil {
		return nil, err
	}
	need := bytes + bsendOverhead
	if bsends.addr == 0 || bsends.used+need > bsends.size {
		return nil, errorf(errBuffer, "%d bytes (with MPI_BSEND_OVERHEAD) do not fit in the attached buffer: %d of %d bytes in use", need, bsends.used, bsends.size)
	}
	var r *meshmpi.Request
	if t != nil { // send a packed copy as bytes
		var stg staging
		p, pn := stg.add(t, buf, int(n), true, false)
		stg.pack()
		r, err = k.isendCopy(e.c, p, pn, rankIn(dest), tagIn(tag))
		stg.release()
	} else {
		r, err = k.isendCopy(e.c, buf, int(n), rankIn(dest), tagIn(tag))
	}
	if err != nil {
		return nil, err
	}
	bsends.used += need
	p := &pendingBsend{r: r, size: int(need), held: hold}
	bsends.inFlight = append(bsends.inFlight, p)
	return p, nil
}

//export mpiabi_Bsend
func mpiabi_Bsend(buf uintptr, n int32, dt uintptr, dest, tag int32, comm uintptr) C.int {
	return bsend("MPI_Bsend", buf, int64(n), dt, dest, tag, comm)
}

//export mpiabi_Bsend_c
func mpiabi_Bsend_c(buf uintptr, n int64, dt uintptr, dest, tag int32, comm uintptr) C.int {
	return bsend("MPI_Bsend_c", buf, n, dt, dest, tag, comm)
}

// ibsend is MPI_Ibsend: a buffered send is local, so the message is
// copied and sent as by MPI_Bsend, and the request returned is complete
// already (an empty send to MPI_PROC_NULL on the same communicator, whose
// error handler its errors reach). The handle stands for the buffered
// send (reqEntry.bsend) as far as MPI_Cancel goes: a cancelled Ibsend
// completes with the receiver's answer, and its status says whether it
// was withdrawn.
func ibsend(call string, buf uintptr, n int64, dt uintptr, dest, tag int32, comm, req uintptr) C.int {
	if req == 0 {
		return raise(comm, call, errorf(errArg, "request is NULL"))
	}
	p, err := bufferedSend(buf, n, dt, dest, tag, comm, true)
	if err != nil {
		return raise(comm, call, err)
	}
	if rc := isend(call, 0, 0, 0x247, procNull, 0, comm, req, false, nonblocking); rc != errSuccess {
		bsendRelease(p)
		return rc
	}
	e, err := lookupReq(getHandle(req))
	if err != nil {
		bsendRelease(p)
		return raise(comm, call, err)
	}
	e.bsend = p
	return errSuccess
}

//export mpiabi_Ibsend
func mpiabi_Ibsend(buf uintptr, n int32, dt uintptr, dest, tag int32, comm, req uintptr) C.int {
	return ibsend("MPI_Ibsend", buf, int64(n), dt, dest, tag, comm, req)
}

//export mpiabi_Ibsend_c
func mpiabi_Ibsend_c(buf uintptr, n int64, dt uintptr, dest, tag int32, comm, req uintptr) C.int {
	return ibsend("MPI_Ibsend_c", buf, n, dt, dest, tag, comm, req)
}
