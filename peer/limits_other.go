//go:build !js && !wasip1

package peer

// DefaultUnexpectedLimit is the default bound, in bytes, on the unexpected
// eager messages an endpoint holds (Config.UnexpectedLimit): 64 MiB for a
// native rank.
const DefaultUnexpectedLimit = 64 << 20
