//go:build race

package signaling

// raceEnabled: the race detector pads allocations, so memory bars hold
// only without it.
const raceEnabled = true
