// Package wazerowarm fills a wazero compilation cache for tests that run
// under the race detector, where wazero's compiler, running in the test
// process, takes some ten times as long: a guest's first compile into a
// fresh cache cost tens of seconds of each test binary that runs one
// (wasm/host, wasm/wasmtime), and a minute or two of a loaded machine.
// Warm compiles the module in cmd/meshrun's wazerocompile, a process
// built without the race detector, and the test's own compile then loads
// the machine code, which is the same either way (host.Compile's).
//
// A cache is keyed by wazero's version, which wazero reads from the
// process's build info: a test binary of a library package lists no
// modules, so its wazero says "dev" where a go-built wazerocompile says
// go.mod's version, and a cache one fills the other never reads;
// wazerocompile is built with the test process's version set (-X). A
// warm-up that fails costs only time: the test's compile then does the
// work. The package has code only in race builds, the only ones that
// use it.
package wazerowarm
