//go:build !linux

package peer

import (
	"sync/atomic"
	"time"
)

// threadWaits: no futex here, and no polled link either (shared memory
// links are Linux's): SpinPoll's locked callers park as others do.
const threadWaits = false

func threadSleep(*atomic.Uint32, uint32, time.Duration) {}

func threadWake(*atomic.Uint32) {}
