//go:build race && !js && !wasip1

package wazerowarm

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

// Warm compiles the wasip1 module in the file at path into the wazero
// cache in dir, in a process without the race detector.
func Warm(path, dir string) {
	exe, err := helper()
	if err != nil {
		return
	}
	_ = exec.Command(exe, path, dir).Run()
}

// helper builds wazerocompile, once per test process, with this
// process's wazero version.
var helper = sync.OnceValues(func() (string, error) {
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
