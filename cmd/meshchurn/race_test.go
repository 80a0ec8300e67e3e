//go:build unix && race

package main

// raceFlags build meshchurn (the signaling server's process) with the
// race detector when the tests run with it; the farm's ranks stay plain,
// as the soak is about time and a 2-core machine runs five of them.
var raceFlags = []string{"-race"}
