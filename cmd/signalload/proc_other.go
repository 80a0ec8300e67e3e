//go:build unix && !linux

package main

// selfRSS is 0 (unknown) off Linux.
func selfRSS() uint64 { return 0 }
