package mesh

import "errors"

// errHostFallback says a same-host link could not be made and the pair
// links over WebRTC instead: the lower rank could not listen, or the
// higher one could not dial what it was offered and said so
// (hostRefusal).
var errHostFallback = errors.New("same-host link unavailable, falling back to WebRTC")
