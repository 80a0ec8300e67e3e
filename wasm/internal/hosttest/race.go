//go:build race && !js && !wasip1

package hosttest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/tetratelabs/wazero"

	"github.com/meshmpi/meshmpi/internal/gobuild"
	"github.com/meshmpi/meshmpi/internal/testbin"
)

// Under the race detector wazero's compiler, running in the test process,
// takes some ten times as long: the guest's first compile, into a fresh
// cache, cost tens of seconds of each test binary that runs it under
// wazero (wasm/host, wasm/wasmtime). warmWazero fills the cache from
// cmd/meshrun's wazerocompile, a process without the race detector, and
// Compile then loads the machine code, which is the same either way. A
// cache is keyed by wazero's version, which wazero reads from the
// process's build info: a test binary of a library package lists no
// modules, so its wazero says "dev" where a go-built wazerocompile says
// go.mod's version, and a cache one fills the other never reads;
// wazerocompile is built with this process's version set (-X). A warm-up
// that fails costs only time: Compile then does the work. (wasm/host's
// race_test.go does the same for its own package's tests.)
func init() { warmWazero = warmCache }

var wazeroCompile = sync.OnceValues(func() (string, error) {
	ver, err := cacheVersion()
	if err != nil {
		return "", err
	}
	out := filepath.Join(testbin.Dir(), "wazerocompile")
	return out, gobuild.Go{}.Build(context.Background(), out, "github.com/meshmpi/meshmpi/cmd/meshrun/testdata/wazerocompile",
		"-ldflags=-X github.com/tetratelabs/wazero/internal/version.version="+ver)
})

// cacheVersion is the wazero version this process keys its caches by:
// wazero names a cache's directory wazero-VERSION-GOARCH-GOOS.
func cacheVersion() (string, error) {
	dir, err := os.MkdirTemp(testbin.Dir(), "version-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	if _, err := wazero.NewCompilationCacheWithDir(dir); err != nil {
		return "", err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		v, ok := strings.CutPrefix(e.Name(), "wazero-")
		if v, ok2 := strings.CutSuffix(v, "-"+runtime.GOARCH+"-"+runtime.GOOS); ok && ok2 && v != "" {
			return v, nil
		}
	}
	return "", errors.New("no wazero-VERSION directory in a new cache")
}

func warmCache(dir string) {
	exe, err := wazeroCompile()
	if err != nil {
		return
	}
	path, err := guest()
	if err != nil {
		return
	}
	_ = exec.Command(exe, path, dir).Run()
}
