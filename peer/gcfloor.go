//go:build !js && !wasip1

package peer

import (
	"math"
	"runtime/debug"
	"sync"
)

// Why a native WebRTC link raises the collector's floor.
//
// pion allocates for every SCTP packet it sends and receives (some 5,800
// allocations per 1 MiB message on the native data path), so a link's
// throughput follows how often the collector runs, and GOGC paces that
// by the live heap: a rank whose own heap is a few MiB (most are)
// collects every few MiB of packets. Go has no floor for the heap goal
// (golang/go#23044 asked for one), so the first link a process opens
// keeps a ballast: a pointer-free allocation that is never written,
// which takes address space but, fresh from the OS, no memory, and adds
// its size to the live heap the goal is computed from. Measured between
// two native processes over the native data path (BenchmarkWebRTCTwoProcs,
// 5 interleaved rounds against the build before, load ~2, medians): 64 KiB
// messages 89 → 114 MB/s, 1 MiB 123 → 173 MB/s; 16 MiB gains about what
// 32, 64 and 128 do. The price is up to the floor's size in garbage
// between collections under traffic.
//
// A memory limit (GOMEMLIMIT, debug.SetMemoryLimit) counts the ballast
// as heap, so the floor stays under a quarter of it: the collector must
// not run all the time to keep a ballast under a limit.

// gcBallast is the process's ballast: it only grows.
var gcBallast struct {
	mu  sync.Mutex
	buf []byte
}

// raiseGCFloor makes the process's ballast at least n bytes (held to a
// quarter of the memory limit). n ≤ 0 does nothing.
func raiseGCFloor(n int) {
	if lim := debug.SetMemoryLimit(-1); lim < math.MaxInt64 {
		n = min(n, int(lim/4))
	}
	if n <= 0 {
		return
	}
	gcBallast.mu.Lock()
	defer gcBallast.mu.Unlock()
	if n > len(gcBallast.buf) {
		gcBallast.buf = nil // the old one is garbage, not part of the new
		gcBallast.buf = make([]byte, n)
	}
}

// gcFloor reports the ballast's size.
func gcFloor() int {
	gcBallast.mu.Lock()
	defer gcBallast.mu.Unlock()
	return len(gcBallast.buf)
}
