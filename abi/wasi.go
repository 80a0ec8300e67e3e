//go:build cgo

package abi

import "C"

import (
	"encoding/binary"
	"sync"
	"unsafe"
)

// WASIModule is the import module of every MPI call a C program built for
// wasm32-wasi imports (include/mpi_wasi.h): the calls keep their names,
// MPI_Send and PMPI_Send alike.
const WASIModule = "mpi_abi"

// Value types of a WASICall's parameters and result, as wasm has them.
const (
	WASII32 = 'i' // int, pointers, handles, MPI_Aint
	WASII64 = 'I' // MPI_Count, MPI_Offset
	WASIF64 = 'F' // double
)

// errNoMem is MPI_ERR_NO_MEM: the guest's allocator failed, or it has none.
const errNoMem = 39

// WASICall is one MPI call as a wasm32 guest imports it: the host defines
// a function Name of module WASIModule with these value types and serves
// it with Call. The same mpiabi_ function that a native program's entry
// point calls serves it: there is no second binding.
type WASICall struct {
	Name   string // MPI_Send
	Params []byte // WASII32, WASII64, WASIF64
	Result byte
	fn     func(g *WASIGuest, s []uint64)
}

// Call serves one call of guest g: s holds the arguments as wasm values
// and gets the result in s[0].
func (c *WASICall) Call(g *WASIGuest, s []uint64) {
	g.enter()
	c.fn(g, s)
	g.leave()
}

// WASICalls is every call of include/mpi.h as a guest imports it,
// implemented or not: a call meshmpi does not implement returns
// MPI_ERR_UNSUPPORTED_OPERATION naming itself, never a missing import.
func WASICalls() []WASICall { return wasiCalls[:] }

// WASIGuest is a wasm32 guest's side of the calls: its memory, into which
// the calls read and write in place, and its allocator.
//
// The process's MPI state is one rank's (a native program's libmpi_abi is
// too), so one process serves one guest. The guest's memory must not move
// while an operation that uses its buffers is pending: a nonblocking
// operation keeps the buffer's address (wasm/host reserves the memory's
// maximum so that growth never moves it). A guest is single-threaded: its
// calls come one at a time, from one OS thread as a native program's main
// thread's do (wasm/host's RunC locks the guest's goroutine to it):
// MPI_Is_thread_main compares the caller's thread with MPI_Init's.
type WASIGuest struct {
	// Memory is the guest's linear memory now.
	Memory func() []byte
	// Malloc and Free call the guest's own allocator (its exports malloc
	// and free): MPI_Alloc_mem, and the values of the predefined
	// attributes, are the guest's memory. nil: the guest exports none,
	// and those calls fail.
	Malloc func(size uint32) (uint32, error)
	Free   func(off uint32) error
	// CallExport calls the guest's exported function name: the helpers
	// of mpi_wasi.h through which the binding calls the guest's
	// reduction, copy and delete functions (wasi_callback.go). nil: the
	// guest's functions are never called.
	CallExport func(name string, args ...uint64) (uint64, error)

	mem    []byte
	base   uintptr
	bad    error
	slots  [64]uint64 // single handles and MPI_Aint values, widened
	nslot  int
	arrs   [][]uint64 // arrays of them, reused from call to call
	narr   int
	backs  []writeBack // what goes back to the guest after the call
	starts []int       // where each call's backs start (a callback's calls nest)
	cells  uint32      // the guest's copy of the predefined attributes' values; 0: none yet

	allocs    map[uint32]struct{} // MPI_Alloc_mem's blocks not freed yet
	gate      sync.Mutex          // held while the guest runs its own code (wasi_callback.go)
	running   bool
	cb, cbCap uint32 // the guest's scratch for callbacks' arguments
}

// writeBack is a widened value or array that the call may have changed,
// narrowed back into the guest's memory after it.
type writeBack struct {
	kind  byte // 'h' handle, 'a' MPI_Aint, 'd' address, 'b' buffer address
	guest uint32
	vals  []uint64
}

// begin starts a call: the memory as it is now; the scratch is all free
// unless the call nests in another (a guest's function called back
// during a call, which calls MPI), whose scratch stays.
func (g *WASIGuest) begin() {
	g.mem = g.Memory()
	g.base = 0
	if len(g.mem) > 0 {
		g.base = uintptr(unsafe.Pointer(unsafe.SliceData(g.mem)))
	}
	if len(g.starts) == 0 {
		g.nslot, g.narr, g.backs = 0, 0, g.backs[:0]
	}
	g.bad = nil
	g.starts = append(g.starts, len(g.backs))
}

// end narrows the call's widened values back into the guest.
func (g *WASIGuest) end() {
	start := g.starts[len(g.starts)-1]
	g.starts = g.starts[:len(g.starts)-1]
	for _, w := range g.backs[start:] {
		for i, v := range w.vals {
			off := w.guest + uint32(4*i)
			if (w.kind == 'd' || w.kind == 'b') && uintptr(v) >= g.base && g.base != 0 {
				v = uint64(uintptr(v) - g.base) // NULL, MPI_BUFFER_AUTOMATIC stay
			}
			binary.LittleEndian.PutUint32(g.mem[off:], uint32(v))
		}
	}
	g.backs = g.backs[:start]
}

func (g *WASIGuest) err() error { return g.bad }

func (g *WASIGuest) raise(comm uintptr, call string, err error) C.int { return raise(comm, call, err) }

func (g *WASIGuest) unsupported(comm uintptr, call string) C.int {
	return raise(comm, call, errorf(errUnsupported, "meshmpi does not implement %s yet", call))
}

// in reports whether n bytes at guest offset v are in its memory, and
// notes the error if not.
func (g *WASIGuest) in(v uint64, n uint64) bool {
	if v+n > uint64(len(g.mem)) {
		if g.bad == nil {
			g.bad = errorf(errArg, "address %#x (%d bytes) is outside the guest's memory (%d bytes)", v, n, len(g.mem))
		}
		return false
	}
	return true
}

// ptr is the host address of a guest pointer: the small sentinels
// (NULL, MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY) stay as they are.
func (g *WASIGuest) ptr(v uint64) uintptr {
	v = uint64(uint32(v))
	if v < 16 {
		return uintptr(v)
	}
	if !g.in(v, 1) {
		return 0
	}
	return g.base + uintptr(v)
}

// buf is the host address of a guest buffer of datatype dt: NULL is
// MPI_BOTTOM, the guest's address 0, when dt is a derived type whose data
// all lie above address 0 (absolute displacements: MPI_Get_address gives
// guest addresses), as the native binding tells MPI_BOTTOM from a NULL
// buffer (typed.go's nullBuffer); otherwise NULL stays, for the call to
// check. MPI_IN_PLACE and MPI_BUFFER_AUTOMATIC stay.
func (g *WASIGuest) buf(v, dt uint64) uintptr {
	v = uint64(uint32(v))
	switch {
	case v == 1 || v == 2:
		return uintptr(v)
	case v == 0 && g.bottom(dt):
		return g.base
	case v == 0:
		return 0
	}
	if !g.in(v, 1) {
		return 0
	}
	return g.base + uintptr(v)
}

// bottom reports whether datatype dt's data lie above address 0.
func (g *WASIGuest) bottom(dt uint64) bool {
	e, ok := derivedType(uintptr(uint32(dt)))
	if !ok || e.flatten() != nil { // an unflattened type has no layout yet
		return false
	}
	lo, hi := e.span(1)
	return hi > lo && lo > 0
}

// slot widens one 32-bit value at guest offset v into a scratch slot
// whose host address the call gets; kind says how it goes back.
func (g *WASIGuest) slot(v uint64, kind byte) uintptr {
	v = uint64(uint32(v))
	if v == 0 {
		return 0
	}
	if !g.in(v, 4) {
		return 0
	}
	if g.nslot == len(g.slots) {
		if g.bad == nil {
			g.bad = errorf(errIntern, "calls nested too deep in a WASI guest's callbacks")
		}
		return 0
	}
	x := binary.LittleEndian.Uint32(g.mem[v:])
	s := g.slots[g.nslot : g.nslot+1]
	g.nslot++
	switch kind {
	case 'a':
		s[0] = uint64(int64(int32(x)))
	case 'h':
		s[0] = uint64(x)
	default: // out only
		s[0] = 0
	}
	g.backs = append(g.backs, writeBack{kind: kind, guest: uint32(v), vals: s})
	return uintptr(unsafe.Pointer(&s[0]))
}

// handle is a pointer to one handle (in, out or both).
func (g *WASIGuest) handle(v uint64) uintptr { return g.slot(v, 'h') }

// aint is a pointer to one MPI_Aint.
func (g *WASIGuest) aint(v uint64) uintptr { return g.slot(v, 'a') }

// address is MPI_Get_address's result: the guest's address, not the host's.
func (g *WASIGuest) address(v uint64) uintptr { return g.slot(v, 'd') }

// bufferOut is a detached buffer's address, given back as the guest's.
func (g *WASIGuest) bufferOut(v uint64) uintptr { return g.slot(v, 'b') }

// array widens n 32-bit values at guest offset v (fewer if the memory
// ends first: the rest are zero), sign-extended or not; unless readOnly
// they go back after the call.
func (g *WASIGuest) array(v uint64, n int, readOnly, signed, types bool) uintptr {
	v = uint64(uint32(v))
	if v == 0 {
		return 0
	}
	if n <= 0 {
		return g.ptr(v)
	}
	if g.narr == len(g.arrs) {
		g.arrs = append(g.arrs, nil)
	}
	a := g.arrs[g.narr]
	if cap(a) < n {
		a = make([]uint64, n)
		g.arrs[g.narr] = a
	}
	a = a[:n]
	g.narr++
	avail := 0
	if v < uint64(len(g.mem)) {
		avail = min(n, (len(g.mem)-int(v))/4)
	}
	for i := range a {
		if i >= avail {
			a[i] = 0
			continue
		}
		x := binary.LittleEndian.Uint32(g.mem[int(v)+4*i:])
		switch {
		case signed:
			a[i] = uint64(int64(int32(x)))
		case types:
			a[i] = uint64(wasiType(uint64(x)))
		default:
			a[i] = uint64(x)
		}
	}
	if !readOnly && avail > 0 {
		g.backs = append(g.backs, writeBack{kind: 'h', guest: uint32(v), vals: a[:avail]})
	}
	return uintptr(unsafe.Pointer(&a[0]))
}

func (g *WASIGuest) handles(v uint64, n int, readOnly bool) uintptr {
	return g.array(v, n, readOnly, false, false)
}

func (g *WASIGuest) types(v uint64, n int, readOnly bool) uintptr {
	return g.array(v, n, readOnly, false, true)
}

func (g *WASIGuest) aints(v uint64, n int, readOnly bool) uintptr {
	return g.array(v, n, readOnly, true, false)
}

// callback is a function pointer of the guest (an index into its
// function table) of a kind the binding does not call back yet (error
// handlers, generalized requests, data representations): only the
// predefined functions pass, NULL and, for a copy function, 1
// (MPI_*_DUP_FN; wasi_callback.go's copyFn says why 1 is never the
// guest's own).
func (g *WASIGuest) callback(v uint64, copyFn bool) uintptr {
	v = uint64(uint32(v))
	if (v > 1 || v == 1 && !copyFn) && g.bad == nil {
		g.bad = errorf(errUnsupported, "a WASI guest's own functions (here function %d of its table) are not called back yet: only the predefined null and dup functions", v)
	}
	return uintptr(v)
}

// commLen bounds the length of a collective's per-process arrays on
// comm: its size, its remote group's, its neighbors'.
func (g *WASIGuest) commLen(h uintptr) int {
	e, err := lookupComm(h)
	if err != nil {
		return 0 // the call reports the communicator
	}
	n := max(e.c.Size(), e.c.RemoteSize(), 64)
	if in, out, _, err := e.c.DistGraphNeighborsCount(); err == nil {
		n = max(n, in, out)
	}
	if k, err := e.c.GraphNeighborsCount(e.c.Rank()); err == nil {
		n = max(n, k)
	}
	return n
}

// wasiType maps the datatypes whose C size differs on wasm32 (long and
// MPI_Aint are 32-bit there) to the types of the guest's size.
func wasiType(v uint64) uintptr {
	switch uint32(v) {
	case 0x20a: // MPI_LONG
		return 0x209 // MPI_INT
	case 0x20e: // MPI_UNSIGNED_LONG
		return 0x20d // MPI_UNSIGNED
	case 0x201: // MPI_AINT
		return 0x250 // MPI_INT32_T
	case 0x22a: // MPI_LONG_INT
		return 0x22b // MPI_2INT
	}
	return uintptr(uint32(v))
}

// The calls served by hand (the generator's wasiManual).

func wasiManual_Alloc_mem(g *WASIGuest, s []uint64) {
	g.begin()
	const call = "MPI_Alloc_mem"
	size, out := int32(uint32(s[0])), uint64(uint32(s[2]))
	var err error
	switch {
	case size < 0:
		err = errorf(errArg, "size %d is negative", size)
	case out == 0 || !g.in(out, 4):
		err = errorf(errArg, "baseptr is NULL or outside the guest's memory")
	case g.Malloc == nil:
		err = errorf(errNoMem, "the WASI guest exports no malloc (build it with meshcc --target wasm32-wasi)")
	}
	if err == nil {
		var p uint32
		if p, err = g.guestMalloc(uint32(max(size, 1))); err == nil && p == 0 {
			err = errorf(errNoMem, "the guest's malloc(%d) failed", size)
		}
		if err == nil {
			binary.LittleEndian.PutUint32(g.Memory()[out:], p)
			if g.allocs == nil {
				g.allocs = map[uint32]struct{}{}
			}
			g.allocs[p] = struct{}{}
		}
	}
	g.end()
	s[0] = uint64(uint32(raise(self, call, err)))
}

// wasiManual_Free_mem frees only what MPI_Alloc_mem gave (as the native
// mpiabi_Free_mem): the guest's free of any other address would corrupt
// its heap.
func wasiManual_Free_mem(g *WASIGuest, s []uint64) {
	var err error
	base := uint32(s[0])
	_, ours := g.allocs[base]
	switch {
	case base == 0:
	case !ours:
		err = errorf(errBase, "%#x is not memory MPI_Alloc_mem gave, or is freed already", base)
	case g.Free == nil:
		err = errorf(errArg, "the WASI guest exports no free")
	default:
		delete(g.allocs, base)
		g.lockGate()
		err = g.Free(base)
		g.unlockGate()
	}
	s[0] = uint64(uint32(raise(self, "MPI_Free_mem", err)))
}

func wasiManual_Comm_get_attr(g *WASIGuest, s []uint64) {
	wasiGetAttr(g, s, "MPI_Comm_get_attr", mpiabi_Comm_get_attr, true)
}

func wasiManual_Attr_get(g *WASIGuest, s []uint64) {
	wasiGetAttr(g, s, "MPI_Attr_get", mpiabi_Attr_get, true)
}

func wasiManual_Type_get_attr(g *WASIGuest, s []uint64) {
	wasiGetAttr(g, s, "MPI_Type_get_attr", mpiabi_Type_get_attr, false)
}

// wasiGetAttr gets an attribute into the guest: a pointer-sized value,
// or for a predefined key (MPI_TAG_UB …) a pointer to its value, which
// the guest reads in its own memory: a copy there, made once.
func wasiGetAttr(g *WASIGuest, s []uint64, call string, get func(h uintptr, k int32, val, flag uintptr) C.int, comm bool) {
	g.begin()
	defer g.end()
	h := uintptr(uint32(s[0]))
	if !comm {
		h = wasiType(s[0])
	}
	key := int32(uint32(s[1]))
	val, flag := uint64(uint32(s[2])), uint64(uint32(s[3]))
	errComm := h
	if !comm {
		errComm = self
	}
	if val == 0 || flag == 0 {
		s[0] = uint64(uint32(get(h, key, g.ptr(val), g.ptr(flag))))
		return
	}
	if !g.in(val, 4) || !g.in(flag, 4) {
		s[0] = uint64(uint32(raise(errComm, call, g.bad)))
		return
	}
	var v uint64
	rc := get(h, key, uintptr(unsafe.Pointer(&v)), g.base+uintptr(flag))
	if rc != errSuccess || binary.LittleEndian.Uint32(g.mem[flag:]) == 0 {
		s[0] = uint64(uint32(rc))
		return
	}
	if vals := attrVals; comm && vals != nil {
		lo := uintptr(unsafe.Pointer(&vals[0]))
		if p := uintptr(v); p >= lo && p < lo+uintptr(len(vals))*4 {
			if g.cells == 0 {
				var err error
				if g.Malloc == nil {
					err = errorf(errUnsupported, "a predefined attribute needs the WASI guest's malloc, which it does not export (build it with meshcc --target wasm32-wasi)")
				} else if g.cells, err = g.guestMalloc(uint32(4 * len(vals))); err == nil && g.cells == 0 {
					err = errorf(errNoMem, "the guest's malloc failed")
				}
				if err != nil {
					binary.LittleEndian.PutUint32(g.Memory()[flag:], 0)
					s[0] = uint64(uint32(raise(errComm, call, err)))
					return
				}
			}
			mem := g.Memory() // the guest's malloc may have grown it
			i := (p - lo) / 4
			binary.LittleEndian.PutUint32(mem[g.cells+uint32(4*i):], uint32(vals[i]))
			binary.LittleEndian.PutUint32(mem[val:], g.cells+uint32(4*i))
			s[0] = uint64(uint32(rc))
			return
		}
	}
	binary.LittleEndian.PutUint32(g.mem[val:], uint32(v))
	s[0] = uint64(uint32(rc))
}

// lockGate and unlockGate hold the guest's gate around a call into the
// guest made from one of its MPI calls (its malloc): no callback may run
// the guest's code at the same time (wasi_callback.go).
func (g *WASIGuest) lockGate() {
	if g.running {
		g.gate.Lock()
	}
}

func (g *WASIGuest) unlockGate() {
	if g.running {
		g.gate.Unlock()
	}
}

// guestMalloc calls the guest's malloc from one of its MPI calls.
func (g *WASIGuest) guestMalloc(n uint32) (uint32, error) {
	g.lockGate()
	defer g.unlockGate()
	return g.Malloc(n)
}
