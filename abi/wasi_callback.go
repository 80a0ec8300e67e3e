//go:build cgo

package abi

/*
#include <stdint.h>
*/
import "C"

import (
	"encoding/binary"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Calling a WASI guest's own functions back: a reduction function of
// MPI_Op_create, an attribute key's copy and delete functions. The
// binding calls native functions; for a guest it gets a trampoline
// (wasi_tramp.go) bound to the guest's function, which calls the guest's
// exported helper (mpi_abi_call_user_fn …, defined in mpi_wasi.h) with
// the guest's function and its arguments in the guest's memory.
//
// The guest is single-threaded, and a callback may come from any of the
// rank's goroutines (a nonblocking reduction progresses in the
// background): the guest's gate is held while the guest runs its own
// code and released while it is inside an MPI call, so a callback waits
// until the guest is in a call (a Wait, a Test, the collective itself)
// and the guest does not return from that call until the callback has.

// wasiFn is a guest function bound to a trampoline slot.
type wasiFn struct {
	fn    uint32 // its index in the guest's function table
	large bool   // an MPI_User_function_c
	used  bool
}

var wasiFns struct {
	mu    sync.Mutex
	kinds [3][wasiSlots]wasiFn
}

// wasiCur is the guest the process serves (one: the binding's state is
// the process's), for the callbacks, which have no other way to it.
var wasiCur atomic.Pointer[WASIGuest]

// bindFn gives guest function fn a trampoline of kind: the one it has, or
// a new slot.
func (g *WASIGuest) bindFn(kind int, v uint64, large bool) uintptr {
	fn := uint32(v)
	wasiFns.mu.Lock()
	defer wasiFns.mu.Unlock()
	free := -1
	for i, f := range wasiFns.kinds[kind] {
		if f.used && f.fn == fn && f.large == large {
			return trampoline(kind, i)
		}
		if !f.used && free < 0 {
			free = i
		}
	}
	if free < 0 {
		if g.bad == nil {
			g.bad = errorf(errIntern, "a WASI guest may hand the binding %d functions of a kind; this is one more", wasiSlots)
		}
		return 0
	}
	wasiFns.kinds[kind][free] = wasiFn{fn: fn, large: large, used: true}
	return trampoline(kind, free)
}

// opFn is an MPI_User_function (or _c) of the guest.
func (g *WASIGuest) opFn(v uint64, large bool) uintptr {
	if uint32(v) == 0 {
		return 0 // the call says it is NULL
	}
	return g.bindFn(trampOp, v, large)
}

// copyFn is an attribute copy function: NULL and 1 (MPI_*_DUP_FN) stay.
// A program built by meshcc has a function of meshcc's at index 1 of its
// table, so 1 is never one of its own; in a module built otherwise the
// first function whose address is taken may be 1, and is taken for
// MPI_*_DUP_FN.
func (g *WASIGuest) copyFn(v uint64) uintptr {
	if uint32(v) <= 1 {
		return uintptr(uint32(v))
	}
	return g.bindFn(trampCopy, v, false)
}

// deleteFn is an attribute delete function: NULL stays.
func (g *WASIGuest) deleteFn(v uint64) uintptr {
	if uint32(v) == 0 {
		return 0
	}
	return g.bindFn(trampDelete, v, false)
}

// slotFn is the guest function of a trampoline's slot id (10 … 47: the
// C macros number them by octets).
func slotFn(kind int, id C.int) wasiFn {
	i := (int(id)/10-1)*8 + int(id)%10
	wasiFns.mu.Lock()
	defer wasiFns.mu.Unlock()
	return wasiFns.kinds[kind][i]
}

// Running says the guest starts running its own code: from now on it
// holds its gate except inside its MPI calls. The host calls it before
// the guest's _start.
func (g *WASIGuest) Running() {
	g.gate.Lock()
	g.running = true
	wasiCur.Store(g)
}

// enter and leave bracket one MPI call of the guest: the gate opens for
// callbacks while the call runs.
func (g *WASIGuest) enter() {
	if g.running {
		g.gate.Unlock()
	}
}

func (g *WASIGuest) leave() {
	if g.running {
		g.gate.Lock()
	}
}

// scratch is n bytes of the guest's memory for a callback's arguments,
// from its malloc, kept for the next callbacks; 0 if it has none.
func (g *WASIGuest) scratch(n uint32) uint32 {
	if n <= g.cbCap {
		return g.cb
	}
	if g.Malloc == nil {
		return 0
	}
	if g.cb != 0 && g.Free != nil {
		g.Free(g.cb)
	}
	n = max(n, 256, 2*g.cbCap)
	p, err := g.Malloc(n)
	if err != nil || p == 0 {
		g.cb, g.cbCap = 0, 0
		return 0
	}
	g.cb, g.cbCap = p, n
	return p
}

// guestOff is the guest's offset of host address p of n bytes when they
// are in its memory.
func guestOff(mem []byte, p uintptr, n int) (uint32, bool) {
	if len(mem) == 0 {
		return 0, false
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(mem)))
	if p < base || p+uintptr(n) > base+uintptr(len(mem)) {
		return 0, false
	}
	return uint32(p - base), true
}

// callGuest calls the guest's export name. A failure (a module not built
// by meshcc lacks the export, the function trapped) ends the job as a
// fatal error does: the operation has no way to fail, and a native
// program whose function cannot run would crash.
func (g *WASIGuest) callGuest(name string, args ...uint64) (uint64, bool) {
	if g.CallExport == nil {
		fatal("calling back into the WASI guest ("+name+"): its host gave no way to", errOther)
		return 0, false
	}
	r, err := g.CallExport(name, args...)
	if err != nil {
		fatal("calling back into the WASI guest ("+name+"): "+err.Error(), errOther)
		return 0, false
	}
	return r, true
}

// typeSpan is the bytes a reduction function reaches from its vectors'
// addresses for n elements of datatype dt: [lo, hi).
func typeSpan(dt uintptr, n int64) (lo, hi int) {
	if e, ok := derivedType(dt); ok {
		if e.flatten() != nil {
			return 0, 0
		}
		lo, hi = e.span(int(n))
		return min(lo, 0), max(hi, 1)
	}
	d, err := lookupType(dt)
	if err != nil {
		return 0, 0
	}
	return 0, int(n) * d.size
}

//export wasiUserOp
func wasiUserOp(slot C.int, in, inout, lenp unsafe.Pointer, dt C.uintptr_t) {
	g := wasiCur.Load()
	f := slotFn(trampOp, slot)
	if g == nil || !f.used {
		return
	}
	var n int64
	if f.large {
		n = *(*int64)(lenp)
	} else {
		n = int64(*(*int32)(lenp))
	}
	lo, hi := typeSpan(uintptr(dt), n)
	span := hi - lo
	g.gate.Lock()
	defer g.gate.Unlock()
	// the vectors go to the guest's scratch: the binding's are Go memory
	// (or the guest's own buffers, copied all the same: rare, and simple)
	p := g.scratch(uint32(16 + 2*span))
	if p == 0 {
		fatal("MPI_Op_create's function in a WASI guest: no memory for its arguments (the guest exports no malloc, or it failed)", errOther)
		return
	}
	mem := g.Memory()
	binary.LittleEndian.PutUint64(mem[p:], uint64(n))
	binary.LittleEndian.PutUint32(mem[p+8:], uint32(dt))
	inOff, ioOff := p+16, p+16+uint32(span)
	copy(mem[inOff:inOff+uint32(span)], unsafe.Slice((*byte)(unsafe.Add(in, lo)), span))
	copy(mem[ioOff:ioOff+uint32(span)], unsafe.Slice((*byte)(unsafe.Add(inout, lo)), span))
	name := "mpi_abi_call_user_fn"
	if f.large {
		name = "mpi_abi_call_user_fn_c"
	}
	if _, ok := g.callGuest(name, uint64(f.fn), uint64(inOff)-uint64(lo), uint64(ioOff)-uint64(lo), uint64(p), uint64(p+8)); !ok {
		return
	}
	mem = g.Memory()
	copy(unsafe.Slice((*byte)(unsafe.Add(inout, lo)), span), mem[ioOff:ioOff+uint32(span)])
}

//export wasiCopyAttr
func wasiCopyAttr(slot C.int, obj C.uintptr_t, k C.int, extra, in C.uintptr_t, out, flag unsafe.Pointer) C.int {
	g := wasiCur.Load()
	f := slotFn(trampCopy, slot)
	if g == nil || !f.used {
		return errOther
	}
	g.gate.Lock()
	defer g.gate.Unlock()
	p := g.scratch(16)
	if p == 0 {
		return errOther // no scratch in the guest: it exports no malloc
	}
	mem := g.Memory()
	binary.LittleEndian.PutUint64(mem[p:], 0)
	r, ok := g.callGuest("mpi_abi_call_copy", uint64(f.fn), uint64(uint32(obj)), uint64(uint32(k)), uint64(uint32(extra)),
		uint64(uint32(in)), uint64(p), uint64(p+4))
	if !ok {
		return errOther
	}
	mem = g.Memory()
	*(*uintptr)(out) = uintptr(binary.LittleEndian.Uint32(mem[p:]))
	*(*int32)(flag) = int32(binary.LittleEndian.Uint32(mem[p+4:]))
	return C.int(int32(r))
}

//export wasiDeleteAttr
func wasiDeleteAttr(slot C.int, obj C.uintptr_t, k C.int, val, extra C.uintptr_t) C.int {
	g := wasiCur.Load()
	f := slotFn(trampDelete, slot)
	if g == nil || !f.used {
		return errOther
	}
	g.gate.Lock()
	defer g.gate.Unlock()
	r, ok := g.callGuest("mpi_abi_call_delete", uint64(f.fn), uint64(uint32(obj)), uint64(uint32(k)), uint64(uint32(val)), uint64(uint32(extra)))
	if !ok {
		return errOther
	}
	return C.int(int32(r))
}
