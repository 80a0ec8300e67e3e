// Package ranktest is the wasm host tests' name for internal/ranksuite,
// where the rank checks shared by every target (native, browser, WASI)
// live: point-to-point and a collective subset checked against a
// sequential reference, the failure check and the benchmarks' echo
// protocol. It only forwards; new code imports ranksuite.
package ranktest

import "github.com/meshmpi/meshmpi/internal/ranksuite"

// RendezvousBytes is ranksuite.RendezvousBytes.
const RendezvousBytes = ranksuite.RendezvousBytes

// Tags of the echo protocol (ranksuite.TagPing …).
const (
	TagPing = ranksuite.TagPing
	TagSink = ranksuite.TagSink
	TagSync = ranksuite.TagSync
	TagStop = ranksuite.TagStop
)

// Suite, PeerFails and Echo are ranksuite's.
var (
	Suite     = ranksuite.Suite
	PeerFails = ranksuite.PeerFails
	Echo      = ranksuite.Echo
)
