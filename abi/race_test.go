//go:build cgo && race

package abi

// raceEnabled: the race detector changes what allocates (its sync.Pool
// drops items on purpose, its instrumentation moves values to the heap).
const raceEnabled = true
