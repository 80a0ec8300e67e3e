package peer

// DefaultUnexpectedLimit is the default bound, in bytes, on the unexpected
// eager messages an endpoint holds (Config.UnexpectedLimit): 16 MiB in a
// WASI guest, whose linear memory never shrinks once grown.
const DefaultUnexpectedLimit = 16 << 20
