//go:build !js && !wasip1

// Package testbin gives a test binary one directory for the programs its
// tests build, each built there once: cmd/meshrun's tests build the
// programs they launch, the WASI hosts' tests (wasm/internal/hosttest)
// their guest, and the runtimes' caches live there too. The package's
// TestMain calls Main, which removes the directory after the tests.
package testbin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/meshmpi/meshmpi/internal/gobuild"
)

// dir is Main's directory.
var dir string

// Main runs a test binary's tests with Dir, a fresh directory, and
// removes the directory after them.
func Main(m *testing.M) {
	d, err := os.MkdirTemp("", "meshmpi-testbin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	dir = d
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}

// Dir is Main's directory; "" in a test binary that did not call Main.
func Dir() string { return dir }

// Once returns a function that builds pkg with g into Dir as the file
// name the first time it is called, and then the file's path (or the
// build's error) every time.
func Once(g gobuild.Go, pkg, name string) func() (string, error) {
	return sync.OnceValues(func() (string, error) {
		if dir == "" {
			return "", fmt.Errorf("testbin: build %s: no directory (TestMain must call testbin.Main)", pkg)
		}
		out := filepath.Join(dir, name)
		if err := g.Build(context.Background(), out, pkg); err != nil {
			return "", err
		}
		return out, nil
	})
}
