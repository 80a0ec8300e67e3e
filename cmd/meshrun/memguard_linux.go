package main

import "os"

// availableMemory is MemAvailable from /proc/meminfo: the kernel's
// estimate of the memory new processes can take without swapping.
func availableMemory() (uint64, bool) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	return parseMemAvailable(b)
}
