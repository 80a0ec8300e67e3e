//go:build !js

package main

import (
	"fmt"
	"os"
	"runtime"
	"time"
)

// printStats prints the process's goroutines, live heap and open files
// every period, for soak tests to watch them stay flat.
func printStats(period time.Duration) {
	for range time.Tick(period) {
		var ms runtime.MemStats
		runtime.GC() // the live heap, not the garbage of the last period
		runtime.ReadMemStats(&ms)
		fds := -1 // where the system cannot say
		if ents, err := os.ReadDir("/proc/self/fd"); err == nil {
			fds = len(ents)
		}
		fmt.Printf("stats goroutines=%d heap=%d fds=%d\n", runtime.NumGoroutine(), ms.HeapAlloc, fds)
	}
}
