//go:build linux

package peer

import (
	"math"
	"sync/atomic"
	"time"
	"unsafe"
)

// threadWaits: a thread can sleep on a futex here (poll_thread.go).
const threadWaits = true

// threadSleep sleeps the thread while *word is val, up to d (futexWait).
func threadSleep(word *atomic.Uint32, val uint32, d time.Duration) {
	futexWait((*uint32)(unsafe.Pointer(word)), val, d, futexPrivate)
}

// threadWake wakes every thread asleep on word.
func threadWake(word *atomic.Uint32) {
	futexWake((*uint32)(unsafe.Pointer(word)), math.MaxInt32, futexPrivate)
}
