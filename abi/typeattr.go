package abi

/*
#include <stdint.h>
*/
import "C"

import "maps"

// Attributes on datatypes (MPI-4.1 §7.7.4): the keys are the
// communicators' (attr.go), and so are the copy and delete calls, since
// MPI_Datatype and MPI_Comm are both pointers to the functions they call.
// A type's attributes belong to its handle; Type_dup copies them and
// Type_free deletes them.

//export mpiabi_Type_create_keyval
func mpiabi_Type_create_keyval(copyFn, deleteFn, out, extra uintptr) C.int {
	return createKeyval("MPI_Type_create_keyval", copyFn, deleteFn, out, extra)
}

//export mpiabi_Type_free_keyval
func mpiabi_Type_free_keyval(p uintptr) C.int { return freeKeyval("MPI_Type_free_keyval", p) }

//export mpiabi_Type_set_attr
func mpiabi_Type_set_attr(h uintptr, k int32, val uintptr) C.int {
	const call = "MPI_Type_set_attr"
	e, err := typeOf(h)
	if err != nil {
		return raise(self, call, err)
	}
	kv, err := lookupKeyval(k)
	if err != nil {
		return raise(self, call, err)
	}
	types.mu.Lock()
	old, had := e.attrs[k]
	types.mu.Unlock()
	if had {
		if err := deleteAttr(h, k, old); err != nil {
			return raise(self, call, err)
		}
	}
	types.mu.Lock()
	if e.attrs == nil {
		e.attrs = map[int32]attr{}
	}
	e.attrs[k] = attr{val: val, kv: *kv}
	types.mu.Unlock()
	return errSuccess
}

//export mpiabi_Type_get_attr
func mpiabi_Type_get_attr(h uintptr, k int32, val, flag uintptr) C.int {
	const call = "MPI_Type_get_attr"
	e, err := typeOf(h)
	if err == nil && (val == 0 || flag == 0) {
		err = errorf(errArg, "attribute_val or flag is NULL")
	}
	if err == nil {
		_, err = lookupKeyval(k)
	}
	if err != nil {
		return raise(self, call, err)
	}
	types.mu.Lock()
	a, ok := e.attrs[k]
	types.mu.Unlock()
	putInt(flag, b2i(ok))
	if ok {
		putHandle(val, a.val)
	}
	return errSuccess
}

//export mpiabi_Type_delete_attr
func mpiabi_Type_delete_attr(h uintptr, k int32) C.int {
	const call = "MPI_Type_delete_attr"
	e, err := typeOf(h)
	if err != nil {
		return raise(self, call, err)
	}
	types.mu.Lock()
	a, ok := e.attrs[k]
	types.mu.Unlock()
	if !ok {
		return raise(self, call, errorf(errKeyval, "no attribute of key %d on this datatype", k))
	}
	if err := deleteAttr(h, k, a); err != nil {
		return raise(self, call, err)
	}
	types.mu.Lock()
	delete(e.attrs, k)
	types.mu.Unlock()
	return errSuccess
}

// copyTypeAttrs runs the copy functions of a type's attributes for its
// duplicate.
func copyTypeAttrs(h uintptr, e *typeEntry) (map[int32]attr, error) {
	types.mu.Lock()
	src := maps.Clone(e.attrs)
	types.mu.Unlock()
	if len(src) == 0 {
		return nil, nil
	}
	return copyAttrList(h, src)
}

// deleteTypeAttrs runs the delete functions of a type being freed.
func deleteTypeAttrs(h uintptr, e *typeEntry) error {
	types.mu.Lock()
	keys := sortedKeys(e.attrs)
	src := e.attrs
	types.mu.Unlock()
	for _, k := range keys {
		if err := deleteAttr(h, k, src[k]); err != nil {
			return err
		}
	}
	return nil
}
