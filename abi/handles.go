//go:build cgo

package abi

import (
	"sync"
	"unsafe"

	"github.com/meshmpi/meshmpi"
)

// Predefined handles (include/mpi.h): the standard ABI's constants.
const (
	commNull  uintptr = 0x100
	world     uintptr = 0x101
	self      uintptr = 0x102
	ehNull    uintptr = 0x140
	ehFatal   uintptr = 0x141
	ehReturn  uintptr = 0x142
	ehAbort   uintptr = 0x143
	reqNull   uintptr = 0x180
	infoNull  uintptr = 0x130
	infoEnv   uintptr = 0x131
	inPlace   uintptr = 1
	firstComm uintptr = 0x1000    // the communicators the program makes
	firstReq  uintptr = 0x1000000 // the requests
	tableCap          = 0xfff000  // entries a table holds
)

// Rank and tag sentinels of the ABI.
const (
	anySource = -1
	anyTag    = -2
	procNull  = -3
	root      = -4
	undefined = -32766
)

// ptr is the C memory at u. u came from C as a uintptr_t, so it is not a
// Go pointer; going through memory keeps vet's uintptr check quiet about a
// conversion that is valid here.
func ptr(u uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&u)) }

// cbytes is the n bytes of C memory at u.
func cbytes(u uintptr, n int) []byte { return unsafe.Slice((*byte)(ptr(u)), n) }

// cints copies the n C ints at u into a Go slice.
func cints(u uintptr, n int) []int {
	if u == 0 || n <= 0 {
		return nil
	}
	s := unsafe.Slice((*int32)(ptr(u)), n)
	out := make([]int, n)
	for i, v := range s {
		out[i] = int(v)
	}
	return out
}

// cints64 copies the n 64-bit C integers (MPI_Count, MPI_Aint) at u.
func cints64(u uintptr, n int) []int {
	if u == 0 || n <= 0 {
		return nil
	}
	s := unsafe.Slice((*int64)(ptr(u)), n)
	out := make([]int, n)
	for i, v := range s {
		out[i] = int(v)
	}
	return out
}

func putInt(u uintptr, v int) {
	if u != 0 {
		*(*int32)(ptr(u)) = int32(v)
	}
}

func putHandle(u uintptr, h uintptr) { *(*uintptr)(ptr(u)) = h }

func getHandle(u uintptr) uintptr { return *(*uintptr)(ptr(u)) }

// commEntry is a communicator's Go side.
type commEntry struct {
	c     *meshmpi.Comm
	eh    uintptr        // error handler
	attrs map[int32]attr // the program's attributes
	name  string
}

// state is the process's MPI state. Its mutex guards the tables; the
// operations themselves run outside it.
var state struct {
	mu                     sync.Mutex
	initialized, finalized bool
	thread                 int32
	world, self            *commEntry
	comms                  table[*commEntry]
	reqs                   table[*reqEntry]
}

// table maps handles from base up to Go values; freed slots are reused.
type table[T any] struct {
	base  uintptr
	slots []T
	used  []bool
	free  []int
}

func (t *table[T]) add(v T) (uintptr, bool) {
	var i int
	if n := len(t.free); n > 0 {
		i, t.free = t.free[n-1], t.free[:n-1]
		t.slots[i], t.used[i] = v, true
	} else {
		if len(t.slots) >= tableCap {
			return 0, false
		}
		i = len(t.slots)
		t.slots, t.used = append(t.slots, v), append(t.used, true)
	}
	return t.base + uintptr(i), true
}

func (t *table[T]) get(h uintptr) (T, bool) {
	var zero T
	if h < t.base || h-t.base >= uintptr(len(t.slots)) || !t.used[h-t.base] {
		return zero, false
	}
	return t.slots[h-t.base], true
}

func (t *table[T]) remove(h uintptr) {
	var zero T
	i := int(h - t.base)
	t.slots[i], t.used[i] = zero, false
	t.free = append(t.free, i)
}

// lookupComm returns the entry of a communicator handle.
func lookupComm(h uintptr) (*commEntry, error) {
	state.mu.Lock()
	e, err := lookupCommLocked(h)
	state.mu.Unlock() // not deferred: every call of the binding comes here, and lookupCommLocked does not panic
	return e, err
}

func lookupCommLocked(h uintptr) (*commEntry, error) {
	if !state.initialized || state.finalized {
		return nil, errorf(errOther, "MPI is not initialized (call MPI_Init first), or is finalized")
	}
	switch h {
	case world:
		return state.world, nil
	case self:
		return state.self, nil
	case commNull:
		return nil, errorf(errComm, "MPI_COMM_NULL is not a communicator to use")
	}
	e, ok := state.comms.get(h)
	if !ok {
		return nil, errorf(errComm, "%#x is not a communicator", h)
	}
	return e, nil
}

// errhandlerOf is the error handler of comm; errors not tied to a valid
// communicator use MPI_COMM_SELF's, and before MPI_Init every error is
// fatal.
func errhandlerOf(comm uintptr) uintptr {
	state.mu.Lock()
	defer state.mu.Unlock()
	if !state.initialized {
		return ehFatal
	}
	if e, err := lookupCommLocked(comm); err == nil {
		return e.eh
	}
	if state.self != nil {
		return state.self.eh
	}
	return ehFatal
}

func worldComm() *meshmpi.Comm {
	state.mu.Lock()
	defer state.mu.Unlock()
	if state.world == nil || state.finalized {
		return nil
	}
	return state.world.c
}

// rankIn maps an ABI rank argument to the Go API's: the sentinels to
// theirs, any other negative value to one the Go API rejects as a rank.
func rankIn(r int32) int {
	switch r {
	case anySource:
		return meshmpi.AnySource
	case procNull:
		return meshmpi.ProcNull
	case root:
		return meshmpi.Root
	}
	if r < 0 {
		return -1 << 30
	}
	return int(r)
}

// tagIn maps an ABI tag argument to the Go API's.
func tagIn(t int32) int {
	if t == anyTag {
		return meshmpi.AnyTag
	}
	if t < 0 {
		return -1 << 30
	}
	return int(t)
}

// rankOut maps a rank of the Go API to the ABI's.
func rankOut(r int) int32 {
	switch r {
	case meshmpi.AnySource:
		return anySource
	case meshmpi.ProcNull:
		return procNull
	}
	return int32(r)
}

func tagOut(t int) int32 {
	if t == meshmpi.AnyTag {
		return anyTag
	}
	return int32(t)
}
