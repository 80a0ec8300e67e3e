//go:build cgo

package abi

/*
#include <stdint.h>

// Trampolines: native functions the binding calls as it calls a native
// program's (a reduction function, an attribute's copy and delete
// functions), each bound to a slot that names a WASI guest's function;
// the Go side (wasi_callback.go) calls that function in the guest.
extern void wasiUserOp(int slot, void *in, void *inout, void *len, uintptr_t dt);
extern int wasiCopyAttr(int slot, uintptr_t obj, int keyval, uintptr_t extra, uintptr_t in, void *out, void *flag);
extern int wasiDeleteAttr(int slot, uintptr_t obj, int keyval, uintptr_t val, uintptr_t extra);

#define WASI_TRAMP(i) \
	static void wasi_op_##i(void *in, void *inout, void *len, uintptr_t *dt) { wasiUserOp(i, in, inout, len, *dt); } \
	static int wasi_copy_##i(uintptr_t obj, int k, uintptr_t extra, uintptr_t in, void *out, void *flag) { return wasiCopyAttr(i, obj, k, extra, in, out, flag); } \
	static int wasi_delete_##i(uintptr_t obj, int k, uintptr_t val, uintptr_t extra) { return wasiDeleteAttr(i, obj, k, val, extra); }
#define WASI_TRAMP8(i) WASI_TRAMP(i##0) WASI_TRAMP(i##1) WASI_TRAMP(i##2) WASI_TRAMP(i##3) WASI_TRAMP(i##4) WASI_TRAMP(i##5) WASI_TRAMP(i##6) WASI_TRAMP(i##7)
WASI_TRAMP8(1) WASI_TRAMP8(2) WASI_TRAMP8(3) WASI_TRAMP8(4)

#define WASI_ADDR(kind, i) (uintptr_t)wasi_##kind##_##i
#define WASI_ADDR8(kind, i) WASI_ADDR(kind, i##0), WASI_ADDR(kind, i##1), WASI_ADDR(kind, i##2), WASI_ADDR(kind, i##3), \
	WASI_ADDR(kind, i##4), WASI_ADDR(kind, i##5), WASI_ADDR(kind, i##6), WASI_ADDR(kind, i##7)
static const uintptr_t wasi_op_fns[32] = {WASI_ADDR8(op, 1), WASI_ADDR8(op, 2), WASI_ADDR8(op, 3), WASI_ADDR8(op, 4)};
static const uintptr_t wasi_copy_fns[32] = {WASI_ADDR8(copy, 1), WASI_ADDR8(copy, 2), WASI_ADDR8(copy, 3), WASI_ADDR8(copy, 4)};
static const uintptr_t wasi_delete_fns[32] = {WASI_ADDR8(delete, 1), WASI_ADDR8(delete, 2), WASI_ADDR8(delete, 3), WASI_ADDR8(delete, 4)};
static uintptr_t wasi_tramp(int kind, int i) {
	return kind == 0 ? wasi_op_fns[i] : kind == 1 ? wasi_copy_fns[i] : wasi_delete_fns[i];
}
static int wasi_tramp_slot(int kind, uintptr_t fn) {
	const uintptr_t *t = kind == 0 ? wasi_op_fns : kind == 1 ? wasi_copy_fns : wasi_delete_fns;
	for (int i = 0; i < 32; i++)
		if (t[i] == fn)
			return i;
	return -1;
}
*/
import "C"

// wasiSlots is how many functions of each kind (reduction, copy, delete)
// a guest may hand the binding.
const wasiSlots = 32

// Kinds of trampolines.
const (
	trampOp = iota
	trampCopy
	trampDelete
)

// trampoline is the native function of slot i of a kind.
func trampoline(kind, i int) uintptr { return uintptr(C.wasi_tramp(C.int(kind), C.int(i))) }

// trampolineSlot is the slot of a trampoline, or -1 if fn is none.
func trampolineSlot(kind int, fn uintptr) int {
	return int(C.wasi_tramp_slot(C.int(kind), C.uintptr_t(fn)))
}
