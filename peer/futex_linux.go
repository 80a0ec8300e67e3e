//go:build linux

package peer

import (
	"syscall"
	"time"
	"unsafe"
)

// A futex word's kind: futexShared for a word in a mapping that two
// processes share (the shared-memory link's bells), futexPrivate
// (FUTEX_PRIVATE_FLAG) for a word of this process only, whose kernel
// lookup skips the mapping (the locked callers' bell, poll_thread.go).
const (
	futexShared  = 0
	futexPrivate = 128
)

// futexWait parks the thread while *addr is val, up to d; a signal or a
// spurious wake-up ends it early, which the callers' loops absorb.
func futexWait(addr *uint32, val uint32, d time.Duration, kind uintptr) {
	ts := syscall.NsecToTimespec(d.Nanoseconds())
	_, _, _ = syscall.Syscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), 0 /* FUTEX_WAIT */ |kind, uintptr(val), uintptr(unsafe.Pointer(&ts)), 0, 0)
}

// futexWake wakes up to n threads parked on addr.
func futexWake(addr *uint32, n int, kind uintptr) {
	_, _, _ = syscall.Syscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), 1 /* FUTEX_WAKE */ |kind, uintptr(n), 0, 0, 0)
}
