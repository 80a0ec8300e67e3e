//go:build !js

package meshmpi

import "runtime"

// yieldNow is Yield outside the browser: the Go scheduler preempts long
// computations by itself, so giving up the processor once is enough.
func yieldNow() { runtime.Gosched() }
