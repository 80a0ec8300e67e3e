//go:build linux

package main

import (
	"os"
	"strconv"
	"strings"
)

// selfRSS is this process's resident set in bytes, 0 if /proc does not
// say.
func selfRSS() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseUint(f[1], 10, 64)
	return pages * uint64(os.Getpagesize())
}
