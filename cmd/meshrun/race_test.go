//go:build race

package main

import (
	"os/exec"
	"path/filepath"

	"github.com/meshmpi/meshmpi/internal/gobuild"
	"github.com/meshmpi/meshmpi/internal/testbin"
)

// wazeroCompileExe builds testdata/wazerocompile (without the race
// detector: gobuild does not pass -race on) once.
var wazeroCompileExe = testbin.Once(gobuild.Go{}, mustAbs("testdata/wazerocompile"), "wazerocompile")

// Under the race detector meshrun's compile of a WASI module, in the test
// process, takes tens of seconds a module (wazero's compiler runs about
// ten times slower): warmCache fills the cache from wazerocompile, a
// process without it, so that the tests' time goes to what they test.
// The machine code is the same either way: the cache is keyed by the
// module's bytes, wazero's version and the CPU. A warm-up that fails
// costs only time, the in-process compile then does the work.
func init() { compileHook = warmCache }

func warmCache(path, rt, cache string) {
	if rt != runtimeWazero {
		return // wasmtime's compiler is Rust: the race detector does not slow it
	}
	exe, err := wazeroCompileExe()
	if err != nil {
		return
	}
	_ = exec.Command(exe, path, filepath.Clean(cache)).Run()
}
