// Package js holds the JavaScript glue that boots a Go WebAssembly rank in
// a page: the ES module meshmpi.js (startRank, signalURL). cmd/signal
// serves it at /js/meshmpi.js; see the module's header comment for its
// use. The Go toolchain's wasm_exec.js, which the module loads, is served
// beside it from the toolchain that built the ranks.
package js

import _ "embed"

// Module is the text of meshmpi.js.
//
//go:embed meshmpi.js
var Module []byte
