package abi

/*
#include <stdint.h>
void mpiabi_call_user_fn(uintptr_t fn, void *in, void *inout, int64_t len, uintptr_t dt, int large);
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/meshmpi/meshmpi"
)

const (
	opNull  uintptr = 0x20
	firstOp uintptr = 0x2000000 // the operations the program makes
)

// userOp is an operation of MPI_Op_create: the program's function, and
// the Go operation made for each datatype it has been used with (a Go
// operation has one element type; the C function takes any).
type userOp struct {
	fn      uintptr
	large   bool // an MPI_User_function_c
	commute bool
	mu      sync.Mutex
	byType  map[uintptr]*meshmpi.Op
}

var userOps struct {
	mu sync.Mutex
	t  table[*userOp]
}

// newUserOp makes the Go operation of a C function on element type T:
// the kernel hands the C function the two vectors in place (Go memory
// without pointers, or the program's own buffers) and its datatype.
//
// On a derived type e (nil for a predefined one), the Go operation runs on
// its packed stream, unit elements of T per element of e: the function
// gets the count in elements of e, and, when e has gaps, the two vectors
// unpacked into its layout first (and inout packed back after).
func newUserOp[T meshmpi.Numeric](name string, fn, dth uintptr, commute, large bool, e *typeEntry) *meshmpi.Op {
	unit, laid := 1, false
	if e != nil {
		unit = e.size() / int(unsafe.Sizeof(*new(T)))
		_, dense := e.contiguous(2)
		laid = !dense || e.g.LowerBound() != 0
	}
	return meshmpi.NewOp(name, commute, func(in, inout []T) {
		if len(in) == 0 {
			return
		}
		n := len(in) / unit
		if !laid {
			C.mpiabi_call_user_fn(C.uintptr_t(fn), unsafe.Pointer(unsafe.SliceData(in)),
				unsafe.Pointer(unsafe.SliceData(inout)), C.int64_t(n), C.uintptr_t(dth), C.int(b2i(large)))
			return
		}
		lo, hi := e.span(n)
		lo, hi = min(lo, 0), max(hi, 1) // the origin inside the buffers
		a, b := make([]byte, hi-lo), make([]byte, hi-lo)
		pin, pio := meshmpi.Bytes(in), meshmpi.Bytes(inout)
		e.unpack(a, -lo, 0, pin)
		e.unpack(b, -lo, 0, pio)
		C.mpiabi_call_user_fn(C.uintptr_t(fn), unsafe.Pointer(&a[-lo]), unsafe.Pointer(&b[-lo]),
			C.int64_t(n), C.uintptr_t(dth), C.int(b2i(large)))
		e.pack(pio, b, -lo, 0)
	})
}

// lookupOp returns the operation of handle h for datatype d (handle dth).
func lookupOp(h, dth uintptr, d dtype) (*meshmpi.Op, error) {
	if o, ok := ops[h]; ok {
		return o, nil
	}
	if h == opNull {
		return nil, errorf(errOp, "MPI_OP_NULL is not an operation to use")
	}
	userOps.mu.Lock()
	u, ok := userOps.t.get(h)
	userOps.mu.Unlock()
	if !ok {
		return nil, errorf(errOp, "%#x is not an operation", h)
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if o := u.byType[dth]; o != nil {
		return o, nil
	}
	if d.mkop == nil {
		return nil, errorf(errOp, "%s: operations of MPI_Op_create on pair types are not in the C binding yet", d.name)
	}
	o := d.mkop(fmt.Sprintf("user op %#x", h), u.fn, dth, u.commute, u.large, nil)
	u.byType[dth] = o
	return o, nil
}

// lookupOpDerived returns the operation of handle h for a derived type e
// whose basic elements are all of one predefined type. A predefined
// operation works element by element on the packed stream; a function of
// MPI_Op_create gets the type's elements in its layout (newUserOp).
func lookupOpDerived(h, dth uintptr, e *typeEntry) (*meshmpi.Op, error) {
	if o, ok := ops[h]; ok {
		return o, nil
	}
	if h == opNull {
		return nil, errorf(errOp, "MPI_OP_NULL is not an operation to use")
	}
	userOps.mu.Lock()
	u, ok := userOps.t.get(h)
	userOps.mu.Unlock()
	if !ok {
		return nil, errorf(errOp, "%#x is not an operation", h)
	}
	if e.basic.mkop == nil || e.size() == 0 {
		return nil, errorf(errOp, "operations of MPI_Op_create on %s: the C binding applies them to derived types of one numeric basic type only", e)
	}
	return e.basic.mkop(fmt.Sprintf("user op %#x", h), u.fn, dth, u.commute, u.large, e), nil
}

func opCreate(call string, fn uintptr, commute int32, out uintptr, large bool) C.int {
	if fn == 0 || out == 0 {
		return raise(self, call, errorf(errArg, "user_fn or op is NULL"))
	}
	userOps.mu.Lock()
	if userOps.t.base == 0 {
		userOps.t.base = firstOp
	}
	h, ok := userOps.t.add(&userOp{fn: fn, large: large, commute: commute != 0, byType: map[uintptr]*meshmpi.Op{}})
	userOps.mu.Unlock()
	if !ok {
		return raise(self, call, errorf(errIntern, "too many operations"))
	}
	putHandle(out, h)
	return errSuccess
}

//export mpiabi_Op_create
func mpiabi_Op_create(fn uintptr, commute int32, out uintptr) C.int {
	return opCreate("MPI_Op_create", fn, commute, out, false)
}

//export mpiabi_Op_create_c
func mpiabi_Op_create_c(fn uintptr, commute int32, out uintptr) C.int {
	return opCreate("MPI_Op_create_c", fn, commute, out, true)
}

//export mpiabi_Op_free
func mpiabi_Op_free(p uintptr) C.int {
	if p == 0 {
		return raise(self, "MPI_Op_free", errorf(errArg, "op is NULL"))
	}
	h := getHandle(p)
	if _, ok := ops[h]; ok {
		return raise(self, "MPI_Op_free", errorf(errOp, "a predefined operation cannot be freed"))
	}
	userOps.mu.Lock()
	defer userOps.mu.Unlock()
	if _, ok := userOps.t.get(h); !ok {
		return raise(self, "MPI_Op_free", errorf(errOp, "%#x is not an operation", h))
	}
	userOps.t.remove(h) // operations in flight keep their Go operation
	putHandle(p, opNull)
	return errSuccess
}

//export mpiabi_Op_commutative
func mpiabi_Op_commutative(h, commute uintptr) C.int {
	if commute == 0 {
		return raise(self, "MPI_Op_commutative", errorf(errArg, "commute is NULL"))
	}
	if _, ok := ops[h]; ok {
		putInt(commute, 1)
		return errSuccess
	}
	userOps.mu.Lock()
	u, ok := userOps.t.get(h)
	userOps.mu.Unlock()
	if !ok {
		return raise(self, "MPI_Op_commutative", errorf(errOp, "%#x is not an operation", h))
	}
	putInt(commute, b2i(u.commute))
	return errSuccess
}
