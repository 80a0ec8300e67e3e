//go:build race && !js && !wasip1

package host

import "github.com/meshmpi/meshmpi/wasm/internal/wazerowarm"

// Under the race detector the guest's first compile into a fresh cache
// is some ten times slower (TestGuestWaitsToWrite's took 1 to 2 minutes
// of a loaded machine; its hang guard is 2): the cache is filled by a
// process without it (wazerowarm).
func init() { warmCache = wazerowarm.Warm }
