//go:build (unix || windows) && !linux

package main

// availableMemory is unknown outside linux: the memory guard is skipped.
func availableMemory() (uint64, bool) { return 0, false }
