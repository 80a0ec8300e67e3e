//go:build !js && !wasip1

package examples_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/meshmpi/meshmpi/internal/gobuild"
	"github.com/meshmpi/meshmpi/internal/testbin"
)

// The programs the tests run are built once per test binary, into
// testbin's directory: meshrun, farm and resilient serve the course and
// fault-tolerance jobs alike, and an example's browser build serves both
// TestCourseInBrowser and TestBrowserBuildSize. Each go build links its
// program afresh (the build cache holds the packages, not the linked
// program), some 15 CPU-seconds for meshrun: building each once took
// three links of meshrun, two of farm and of resilient, and two browser
// builds of five examples, down to one each.
func TestMain(m *testing.M) { testbin.Main(m) }

// builds holds the programs built so far, by file name.
var builds struct {
	sync.Mutex
	m map[string]func() (string, error)
}

// built builds pkg (a directory relative to examples/) with g and flags
// into testbin's directory as the file name, the first time a test asks
// for name, and returns the program's path.
func built(t *testing.T, name string, g gobuild.Go, pkg string, flags ...string) string {
	t.Helper()
	builds.Lock()
	build := builds.m[name]
	if build == nil {
		pkg := mustAbs(t, pkg)
		build = sync.OnceValues(func() (string, error) {
			out := filepath.Join(testbin.Dir(), name)
			return out, g.Build(context.Background(), out, pkg, flags...)
		})
		if builds.m == nil {
			builds.m = map[string]func() (string, error){}
		}
		builds.m[name] = build
	}
	builds.Unlock()
	path, err := build()
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// jsBuild builds the example in directory name for GOOS=js GOARCH=wasm
// exactly as cmd/signal builds the programs it serves (-trimpath
// -ldflags='-s -w'), once per test binary, and returns the module's path.
func jsBuild(t *testing.T, name string) string {
	t.Helper()
	return built(t, name+".wasm", gobuild.Go{GOOS: "js", GOARCH: "wasm"}, name, "-trimpath", "-ldflags=-s -w")
}

// mustAbs is path (relative to examples/, the tests' directory) made
// absolute, so that a build does not depend on the working directory.
func mustAbs(t *testing.T, path string) string {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}
