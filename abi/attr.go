package abi

/*
#include <stdint.h>
int mpiabi_call_copy(uintptr_t fn, uintptr_t comm, int keyval, uintptr_t extra, uintptr_t in, uintptr_t *out, int *flag);
int mpiabi_call_delete(uintptr_t fn, uintptr_t comm, int keyval, uintptr_t val, uintptr_t extra);
*/
import "C"

import (
	"maps"
	"sort"
	"sync"
)

// The program's attribute keys (MPI_Comm_create_keyval): numbered from
// firstKeyval up, above the predefined keys.
const (
	firstKeyval = 1000
	nullCopyFn  = 0 // MPI_COMM_NULL_COPY_FN
	dupFn       = 1 // MPI_COMM_DUP_FN
)

type keyval struct {
	copyFn, deleteFn, extra uintptr
}

var keyvals struct {
	mu   sync.Mutex
	next int32
	m    map[int32]*keyval
}

func lookupKeyval(k int32) (*keyval, error) {
	keyvals.mu.Lock()
	defer keyvals.mu.Unlock()
	kv := keyvals.m[k]
	if kv == nil {
		return nil, errorf(errKeyval, "%d is not an attribute key", k)
	}
	return kv, nil
}

func createKeyval(call string, copyFn, deleteFn, out, extra uintptr) C.int {
	if out == 0 {
		return raise(self, call, errorf(errArg, "keyval is NULL"))
	}
	keyvals.mu.Lock()
	if keyvals.m == nil {
		keyvals.m, keyvals.next = map[int32]*keyval{}, firstKeyval
	}
	k := keyvals.next
	keyvals.next++
	keyvals.m[k] = &keyval{copyFn: copyFn, deleteFn: deleteFn, extra: extra}
	keyvals.mu.Unlock()
	putInt(out, int(k))
	return errSuccess
}

//export mpiabi_Comm_create_keyval
func mpiabi_Comm_create_keyval(copyFn, deleteFn, out, extra uintptr) C.int {
	return createKeyval("MPI_Comm_create_keyval", copyFn, deleteFn, out, extra)
}

//export mpiabi_Keyval_create
func mpiabi_Keyval_create(copyFn, deleteFn, out, extra uintptr) C.int {
	return createKeyval("MPI_Keyval_create", copyFn, deleteFn, out, extra)
}

// freeKeyval forgets a key; attributes already set keep its functions
// (MPI-4.1 §7.7.2), which they hold themselves.
func freeKeyval(call string, p uintptr) C.int {
	if p == 0 {
		return raise(self, call, errorf(errArg, "keyval is NULL"))
	}
	k := *(*int32)(ptr(p))
	if _, err := lookupKeyval(k); err != nil {
		return raise(self, call, err)
	}
	keyvals.mu.Lock()
	delete(keyvals.m, k)
	keyvals.mu.Unlock()
	putInt(p, 0) // MPI_KEYVAL_INVALID
	return errSuccess
}

//export mpiabi_Comm_free_keyval
func mpiabi_Comm_free_keyval(p uintptr) C.int { return freeKeyval("MPI_Comm_free_keyval", p) }

//export mpiabi_Keyval_free
func mpiabi_Keyval_free(p uintptr) C.int { return freeKeyval("MPI_Keyval_free", p) }

// attr is an attribute's value and the key's functions.
type attr struct {
	val uintptr
	kv  keyval
}

// deleteAttr runs the key's delete function on an attribute being
// removed, outside every lock (it may call MPI).
func deleteAttr(comm uintptr, k int32, a attr) error {
	if a.kv.deleteFn == 0 {
		return nil
	}
	if rc := C.mpiabi_call_delete(C.uintptr_t(a.kv.deleteFn), C.uintptr_t(comm), C.int(k), C.uintptr_t(a.val), C.uintptr_t(a.kv.extra)); rc != errSuccess {
		return errorf(int32(rc), "the delete function of attribute key %d returned %d", k, rc)
	}
	return nil
}

func setAttr(call string, comm uintptr, k int32, val uintptr) C.int {
	e, err := lookupComm(comm)
	if err != nil {
		return raise(comm, call, err)
	}
	kv, err := lookupKeyval(k)
	if err != nil {
		return raise(comm, call, err)
	}
	state.mu.Lock()
	old, had := e.attrs[k]
	state.mu.Unlock()
	if had {
		if err := deleteAttr(comm, k, old); err != nil {
			return raise(comm, call, err)
		}
	}
	state.mu.Lock()
	if e.attrs == nil {
		e.attrs = map[int32]attr{}
	}
	e.attrs[k] = attr{val: val, kv: *kv}
	state.mu.Unlock()
	return errSuccess
}

//export mpiabi_Comm_set_attr
func mpiabi_Comm_set_attr(comm uintptr, k int32, val uintptr) C.int {
	return setAttr("MPI_Comm_set_attr", comm, k, val)
}

//export mpiabi_Attr_put
func mpiabi_Attr_put(comm uintptr, k int32, val uintptr) C.int {
	return setAttr("MPI_Attr_put", comm, k, val)
}

// getUserAttr answers MPI_Comm_get_attr for the program's keys.
func getUserAttr(call string, comm uintptr, e *commEntry, k int32, val, flag uintptr) C.int {
	if _, err := lookupKeyval(k); err != nil {
		return raise(comm, call, err)
	}
	state.mu.Lock()
	a, ok := e.attrs[k]
	state.mu.Unlock()
	putInt(flag, b2i(ok))
	if ok {
		putHandle(val, a.val)
	}
	return errSuccess
}

//export mpiabi_Attr_get
func mpiabi_Attr_get(comm uintptr, k int32, val, flag uintptr) C.int {
	return getAttr("MPI_Attr_get", comm, k, val, flag)
}

func delAttr(call string, comm uintptr, k int32) C.int {
	e, err := lookupComm(comm)
	if err != nil {
		return raise(comm, call, err)
	}
	state.mu.Lock()
	a, ok := e.attrs[k]
	state.mu.Unlock()
	if !ok {
		return raise(comm, call, errorf(errKeyval, "no attribute of key %d on this communicator", k))
	}
	if err := deleteAttr(comm, k, a); err != nil {
		return raise(comm, call, err)
	}
	state.mu.Lock()
	delete(e.attrs, k)
	state.mu.Unlock()
	return errSuccess
}

//export mpiabi_Comm_delete_attr
func mpiabi_Comm_delete_attr(comm uintptr, k int32) C.int {
	return delAttr("MPI_Comm_delete_attr", comm, k)
}

//export mpiabi_Attr_delete
func mpiabi_Attr_delete(comm uintptr, k int32) C.int { return delAttr("MPI_Attr_delete", comm, k) }

// copyAttrs runs the copy functions of old's attributes for its duplicate
// (MPI_Comm_dup) and returns the duplicate's attributes.
func copyAttrs(comm uintptr, old *commEntry) (map[int32]attr, error) {
	state.mu.Lock()
	src := maps.Clone(old.attrs)
	state.mu.Unlock()
	return copyAttrList(comm, src)
}

// copyAttrList runs, in key order, the copy functions of the attributes
// src (a copy taken under the object's lock) for a duplicate of the
// object h (a communicator or a datatype) and returns the duplicate's.
func copyAttrList(h uintptr, src map[int32]attr) (map[int32]attr, error) {
	keys := sortedKeys(src)
	out := map[int32]attr{}
	for _, k := range keys {
		a := src[k]
		switch a.kv.copyFn {
		case nullCopyFn:
		case dupFn:
			out[k] = a
		default:
			var val C.uintptr_t
			var flag C.int
			rc := C.mpiabi_call_copy(C.uintptr_t(a.kv.copyFn), C.uintptr_t(h), C.int(k), C.uintptr_t(a.kv.extra), C.uintptr_t(a.val), &val, &flag)
			if rc != errSuccess {
				return nil, errorf(int32(rc), "the copy function of attribute key %d returned %d", k, rc)
			}
			if flag != 0 {
				out[k] = attr{val: uintptr(val), kv: a.kv}
			}
		}
	}
	return out, nil
}

// deleteAttrs runs the delete functions of a communicator being freed.
func deleteAttrs(comm uintptr, e *commEntry) error {
	state.mu.Lock()
	keys := sortedKeys(e.attrs)
	src := e.attrs
	state.mu.Unlock()
	for _, k := range keys {
		if err := deleteAttr(comm, k, src[k]); err != nil {
			return err
		}
	}
	return nil
}

func sortedKeys(m map[int32]attr) []int32 {
	keys := make([]int32, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	return keys
}
