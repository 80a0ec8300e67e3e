//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/meshmpi/meshmpi/internal/gobuild"
)

// target is what every rank process runs: an executable, or a Go package
// to build into one first.
type target struct {
	exe  string // the executable; "" until a package is built
	wasm string // the wasip1 module; "" until a package is built
	pkg  string // the package for go build; "" for an executable or a module
	name string // the built executable's file name
}

// resolveTarget decides what the command line's target names: an existing
// directory or .go file is a package, any other existing file an
// executable; a missing ./ or ../ path is an error; a missing name without
// a slash is a command on PATH and one with a slash an import path.
func resolveTarget(s string) (target, error) {
	info, err := os.Stat(s)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return target{}, err
	}
	switch {
	case err == nil && info.IsDir():
		if !hasGoFiles(s) {
			return target{}, fmt.Errorf("%s: a directory without .go files", s)
		}
		abs, err := filepath.Abs(s)
		if err != nil {
			return target{}, err
		}
		return target{pkg: localPackage(s), name: filepath.Base(abs)}, nil
	case err == nil && strings.HasSuffix(s, ".wasm"):
		abs, err := filepath.Abs(s)
		if err != nil {
			return target{}, err
		}
		return target{wasm: abs, name: strings.TrimSuffix(filepath.Base(s), ".wasm")}, nil
	case err == nil && strings.HasSuffix(s, ".go"):
		return target{pkg: s, name: strings.TrimSuffix(filepath.Base(s), ".go")}, nil
	case err == nil:
		if info.Mode()&0o111 == 0 {
			return target{}, fmt.Errorf("%s: not executable (and not a Go package)", s)
		}
		abs, err := filepath.Abs(s)
		if err != nil {
			return target{}, err
		}
		return target{exe: abs}, nil
	case filepath.IsAbs(s) || s == "." || s == ".." || strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../"):
		return target{}, fmt.Errorf("%s: no such file or directory", s)
	case !strings.Contains(s, "/"):
		exe, err := exec.LookPath(s)
		if err != nil {
			return target{}, fmt.Errorf("%s: not a file, a directory or a command on PATH", s)
		}
		return target{exe: exe}, nil
	default: // an import path, perhaps of a module not downloaded yet
		pkg, _, _ := strings.Cut(s, "@")
		return target{pkg: pkg, name: path.Base(pkg)}, nil
	}
}

// hasGoFiles reports whether dir holds a .go file.
func hasGoFiles(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".go") {
			return true
		}
	}
	return false
}

// localPackage turns a directory into a package path go build reads as a
// directory: "examples/pi" would be an import path, "./examples/pi" is not.
func localPackage(dir string) string {
	if filepath.IsAbs(dir) {
		return dir
	}
	c := filepath.ToSlash(filepath.Clean(dir))
	if c == "." || c == ".." || strings.HasPrefix(c, "../") {
		return c
	}
	return "./" + c
}

// goBuild builds t's package into dir and returns the executable's path:
// a native one, or with wasi a wasip1 module. Ending ctx interrupts the
// build. A failed build's error carries go build's output.
func goBuild(ctx context.Context, t target, dir string, wasi bool) (string, error) {
	name := t.name
	if name == "" || name == "." || name == "/" {
		name = "rank"
	}
	exe := filepath.Join(dir, name)
	g := gobuild.Go{Setup: interruptGroup}
	if wasi {
		exe += ".wasm"
		g.GOOS, g.GOARCH = "wasip1", "wasm"
	}
	if err := g.Build(ctx, exe, t.pkg); err != nil {
		return "", err
	}
	return exe, nil
}

// interruptGroup gives go and the compilers it runs an interrupt when the
// context ends, in a process group of their own; go itself is killed if
// it has not ended 5 s later.
func interruptGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }
	cmd.WaitDelay = 5 * time.Second
}
