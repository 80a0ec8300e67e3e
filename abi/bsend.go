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

type pendingBsend struct {
	r    *meshmpi.Request
	size int
}

var bsends struct {
	mu       sync.Mutex
	addr     uintptr // the attached buffer, 0 when none
	size     int64
	used     int64
	inFlight []pendingBsend
	// flushing counts MPI_Buffer_iflush's goroutines (bsendinit.go), which
	// own the sends they took from inFlight until they have left
	flushing sync.WaitGroup
}

// reclaim drops the buffered sends that have completed; with wait it
// waits for all of them. The caller holds bsends.mu.
func reclaim(wait bool) error {
	var first error
	kept := bsends.inFlight[:0]
	for _, p := range bsends.inFlight {
		var err error
		done := true
		if wait {
			_, err = p.r.Wait(nil)
		} else {
			_, done, err = p.r.Test()
		}
		if !done {
			kept = append(kept, p)
			continue
		}
		if err != nil && first == nil {
			first = err
		}
		_ = p.r.Free()
		bsends.used -= int64(p.size)
	}
	clear(bsends.inFlight[len(kept):])
	bsends.inFlight = kept
	return first
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
	return raise(comm, call, bufferedSend(buf, n, dth, dest, tag, comm))
}

// bufferedSend copies the message and starts sending the copy, charging
// the attached buffer (MPI_Bsend, and each start of MPI_Bsend_init's).
func bufferedSend(buf uintptr, n int64, dth uintptr, dest, tag int32, comm uintptr) error {
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
		return err
	}
	bytes := n * int64(t.sizeOr(dth))
	bsends.mu.Lock()
	defer bsends.mu.Unlock()
	if err := reclaim(false); err != nil {
		return err
	}
	need := bytes + bsendOverhead
	if bsends.addr == 0 || bsends.used+need > bsends.size {
		return errorf(errBuffer, "%d bytes (with MPI_BSEND_OVERHEAD) do not fit in the attached buffer: %d of %d bytes in use", need, bsends.used, bsends.size)
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
		return err
	}
	bsends.used += need
	bsends.inFlight = append(bsends.inFlight, pendingBsend{r: r, size: int(need)})
	return nil
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
// error handler its errors reach).
func ibsend(call string, buf uintptr, n int64, dt uintptr, dest, tag int32, comm, req uintptr) C.int {
	if req == 0 {
		return raise(comm, call, errorf(errArg, "request is NULL"))
	}
	if rc := bsend(call, buf, n, dt, dest, tag, comm); rc != errSuccess {
		return rc
	}
	return isend(call, 0, 0, 0x247, procNull, 0, comm, req, false, nonblocking)
}

//export mpiabi_Ibsend
func mpiabi_Ibsend(buf uintptr, n int32, dt uintptr, dest, tag int32, comm, req uintptr) C.int {
	return ibsend("MPI_Ibsend", buf, int64(n), dt, dest, tag, comm, req)
}

//export mpiabi_Ibsend_c
func mpiabi_Ibsend_c(buf uintptr, n int64, dt uintptr, dest, tag int32, comm, req uintptr) C.int {
	return ibsend("MPI_Ibsend_c", buf, n, dt, dest, tag, comm, req)
}
