package abi

/*
#include <stdint.h>
*/
import "C"

import (
	"sync"
)

// Info objects (MPI_Info) are kept on the Go side: ordered keys and their
// values. meshmpi reads no hints from them yet; they are there so that
// programs that pass hints run. MPI_INFO_ENV is empty.
const (
	firstInfo  uintptr = 0x4000000
	maxInfoKey         = 256
	maxInfoVal         = 1024
)

type info struct {
	keys []string
	vals map[string]string
}

var infos struct {
	mu  sync.Mutex
	t   table[*info]
	env info
}

func lookupInfo(h uintptr) (*info, error) {
	if h == infoEnv {
		return &infos.env, nil
	}
	if h == infoNull {
		return nil, errorf(errArg, "MPI_INFO_NULL is not an info object to use")
	}
	i, ok := infos.t.get(h)
	if !ok {
		return nil, errorf(errArg, "%#x is not an info object", h)
	}
	return i, nil
}

func addInfo(i *info, out uintptr) error {
	if infos.t.base == 0 {
		infos.t.base = firstInfo
	}
	h, ok := infos.t.add(i)
	if !ok {
		return errorf(errIntern, "too many info objects")
	}
	putHandle(out, h)
	return nil
}

//export mpiabi_Info_create
func mpiabi_Info_create(out uintptr) C.int {
	if out == 0 {
		return raise(self, "MPI_Info_create", errorf(errArg, "info is NULL"))
	}
	infos.mu.Lock()
	defer infos.mu.Unlock()
	return raise(self, "MPI_Info_create", addInfo(&info{vals: map[string]string{}}, out))
}

//export mpiabi_Info_dup
func mpiabi_Info_dup(h, out uintptr) C.int {
	infos.mu.Lock()
	defer infos.mu.Unlock()
	i, err := lookupInfo(h)
	if err == nil && out == 0 {
		err = errorf(errArg, "newinfo is NULL")
	}
	if err == nil {
		n := &info{keys: append([]string(nil), i.keys...), vals: map[string]string{}}
		for k, v := range i.vals {
			n.vals[k] = v
		}
		err = addInfo(n, out)
	}
	return raise(self, "MPI_Info_dup", err)
}

//export mpiabi_Info_free
func mpiabi_Info_free(p uintptr) C.int {
	if p == 0 {
		return raise(self, "MPI_Info_free", errorf(errArg, "info is NULL"))
	}
	infos.mu.Lock()
	defer infos.mu.Unlock()
	h := getHandle(p)
	if _, ok := infos.t.get(h); !ok {
		return raise(self, "MPI_Info_free", errorf(errArg, "%#x is not an info object the program made", h))
	}
	infos.t.remove(h)
	putHandle(p, infoNull)
	return errSuccess
}

func cstring(u uintptr) string { return C.GoString((*C.char)(ptr(u))) }

//export mpiabi_Info_set
func mpiabi_Info_set(h, key, val uintptr) C.int {
	if key == 0 || val == 0 {
		return raise(self, "MPI_Info_set", errorf(errArg, "key or value is NULL"))
	}
	k, v := cstring(key), cstring(val)
	switch {
	case len(k) == 0 || len(k) > maxInfoKey-1:
		return raise(self, "MPI_Info_set", errorf(31, "key %q is empty or longer than MPI_MAX_INFO_KEY", k)) // MPI_ERR_INFO_KEY
	case len(v) == 0 || len(v) > maxInfoVal-1:
		return raise(self, "MPI_Info_set", errorf(33, "value of %q is empty or longer than MPI_MAX_INFO_VAL", k)) // MPI_ERR_INFO_VALUE
	}
	infos.mu.Lock()
	defer infos.mu.Unlock()
	i, err := lookupInfo(h)
	if err == nil && h == infoEnv {
		err = errorf(errArg, "MPI_INFO_ENV cannot be changed")
	}
	if err == nil {
		if _, had := i.vals[k]; !had {
			i.keys = append(i.keys, k)
		}
		i.vals[k] = v
	}
	return raise(self, "MPI_Info_set", err)
}

//export mpiabi_Info_delete
func mpiabi_Info_delete(h, key uintptr) C.int {
	if key == 0 {
		return raise(self, "MPI_Info_delete", errorf(errArg, "key is NULL"))
	}
	k := cstring(key)
	infos.mu.Lock()
	defer infos.mu.Unlock()
	i, err := lookupInfo(h)
	if err == nil {
		if _, had := i.vals[k]; !had {
			err = errorf(32, "no key %q", k) // MPI_ERR_INFO_NOKEY
		}
	}
	if err == nil {
		delete(i.vals, k)
		for j, kk := range i.keys {
			if kk == k {
				i.keys = append(i.keys[:j], i.keys[j+1:]...)
				break
			}
		}
	}
	return raise(self, "MPI_Info_delete", err)
}

//export mpiabi_Info_get_nkeys
func mpiabi_Info_get_nkeys(h, n uintptr) C.int {
	infos.mu.Lock()
	defer infos.mu.Unlock()
	i, err := lookupInfo(h)
	if err == nil && n == 0 {
		err = errorf(errArg, "nkeys is NULL")
	}
	if err == nil {
		putInt(n, len(i.keys))
	}
	return raise(self, "MPI_Info_get_nkeys", err)
}

//export mpiabi_Info_get_nthkey
func mpiabi_Info_get_nthkey(h uintptr, n int32, key uintptr) C.int {
	infos.mu.Lock()
	defer infos.mu.Unlock()
	i, err := lookupInfo(h)
	if err == nil && (n < 0 || int(n) >= len(i.keys) || key == 0) {
		err = errorf(errArg, "key number %d of %d, or key is NULL", n, len(i.keys))
	}
	if err == nil {
		putString(key, i.keys[n], maxInfoKey)
	}
	return raise(self, "MPI_Info_get_nthkey", err)
}

// getInfo looks a key up for the MPI_Info_get… calls.
func getInfo(call string, h, key uintptr) (string, bool, error) {
	if key == 0 {
		return "", false, errorf(errArg, "key is NULL")
	}
	infos.mu.Lock()
	defer infos.mu.Unlock()
	i, err := lookupInfo(h)
	if err != nil {
		return "", false, err
	}
	v, ok := i.vals[cstring(key)]
	return v, ok, nil
}

//export mpiabi_Info_get_string
func mpiabi_Info_get_string(h, key, buflen, value, flag uintptr) C.int {
	v, ok, err := getInfo("MPI_Info_get_string", h, key)
	if err == nil && (buflen == 0 || flag == 0) {
		err = errorf(errArg, "buflen or flag is NULL")
	}
	if err != nil {
		return raise(self, "MPI_Info_get_string", err)
	}
	putInt(flag, b2i(ok))
	if !ok {
		return errSuccess
	}
	n := int(*(*int32)(ptr(buflen)))
	if n > 0 && value != 0 {
		putString(value, v, n)
	}
	putInt(buflen, len(v)+1)
	return errSuccess
}

//export mpiabi_Info_get
func mpiabi_Info_get(h, key uintptr, valuelen int32, value, flag uintptr) C.int {
	v, ok, err := getInfo("MPI_Info_get", h, key)
	if err == nil && (flag == 0 || valuelen < 0 || value == 0) {
		err = errorf(errArg, "flag or value is NULL, or valuelen %d is negative", valuelen)
	}
	if err != nil {
		return raise(self, "MPI_Info_get", err)
	}
	putInt(flag, b2i(ok))
	if ok {
		putString(value, v, int(valuelen)+1)
	}
	return errSuccess
}

//export mpiabi_Info_get_valuelen
func mpiabi_Info_get_valuelen(h, key, valuelen, flag uintptr) C.int {
	v, ok, err := getInfo("MPI_Info_get_valuelen", h, key)
	if err == nil && (flag == 0 || valuelen == 0) {
		err = errorf(errArg, "valuelen or flag is NULL")
	}
	if err != nil {
		return raise(self, "MPI_Info_get_valuelen", err)
	}
	putInt(flag, b2i(ok))
	if ok {
		putInt(valuelen, len(v))
	}
	return errSuccess
}

// errInfo is MPI_ERR_INFO: an info argument that is not an info object.
const errInfo = 34

// infoArg checks an info argument a call only reads hints from (a
// persistent collective's, MPI_Comm_dup_with_info's …): MPI_INFO_NULL,
// MPI_INFO_ENV or an info object of the program's; anything else, a freed
// one too, is MPI_ERR_INFO (MPI-4.1 §9.4), not ignored.
func infoArg(h uintptr) error {
	if h == infoNull || h == infoEnv {
		return nil
	}
	infos.mu.Lock()
	_, ok := infos.t.get(h)
	infos.mu.Unlock()
	if !ok {
		return errorf(errInfo, "%#x is not an info object", h)
	}
	return nil
}
