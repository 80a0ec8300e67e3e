package peer

// DefaultUnexpectedLimit is the default bound, in bytes, on the unexpected
// eager messages an endpoint holds (Config.UnexpectedLimit): 16 MiB in a
// browser tab, whose memory is shared with the page and capped per tab.
const DefaultUnexpectedLimit = 16 << 20
