//go:build linux

package peer

import (
	"math"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// threadWaits: a thread can sleep on a futex here (poll_thread.go).
const threadWaits = true

// The futex operations on a word of this process only (FUTEX_WAIT and
// FUTEX_WAKE with FUTEX_PRIVATE_FLAG): the kernel skips the shared
// mapping's lookup.
const (
	futexWaitPrivate = 0 | 128
	futexWakePrivate = 1 | 128
)

// threadSleep sleeps the thread while *word is val, up to d; a signal
// or a spurious wake-up ends it early, which the caller's loop absorbs.
func threadSleep(word *atomic.Uint32, val uint32, d time.Duration) {
	ts := syscall.NsecToTimespec(d.Nanoseconds())
	_, _, _ = syscall.Syscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(word)), futexWaitPrivate, uintptr(val), uintptr(unsafe.Pointer(&ts)), 0, 0)
}

// threadWake wakes every thread asleep on word.
func threadWake(word *atomic.Uint32) {
	_, _, _ = syscall.Syscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(word)), futexWakePrivate, math.MaxInt32, 0, 0, 0)
}
