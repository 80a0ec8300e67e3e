// Package leaktest checks that a test leaves no goroutine running: the
// packages whose tests start servers, links and jobs (peer, signaling, the
// root package) share it.
package leaktest

import (
	"runtime"
	"testing"
	"time"
)

// Grace is how long Check waits for goroutines to end after the test's
// other cleanups: pion and the websocket library stop theirs
// asynchronously.
const Grace = 10 * time.Second

// Check fails tb if, Grace after its other cleanups ran, more goroutines
// run than when Check was called, and prints them. Call it first in a test,
// so its cleanup runs last.
func Check(tb testing.TB) {
	tb.Helper()
	before := runtime.NumGoroutine()
	tb.Cleanup(func() {
		deadline := time.Now().Add(Grace)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				tb.Errorf("goroutine leak: %d before, %d after\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}
