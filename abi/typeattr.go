package abi

/*
#include <stdint.h>
int mpiabi_call_copy(uintptr_t fn, uintptr_t comm, int keyval, uintptr_t extra, uintptr_t in, uintptr_t *out, int *flag);
*/
import "C"

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
	keys := sortedKeys(e.attrs)
	src := make(map[int32]attr, len(e.attrs))
	for k, a := range e.attrs {
		src[k] = a
	}
	types.mu.Unlock()
	if len(keys) == 0 {
		return nil, nil
	}
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
