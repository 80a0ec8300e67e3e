//go:build unix || windows

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	"github.com/meshmpi/meshmpi/internal/gobuild"
)

// target is what every rank process runs: an executable, or a Go package
// to build into one first.
type target struct {
	exe  string // the executable; "" until a package is built
	wasm string // the wasip1 module; "" until a package is built
	pkg  string // the package for go build; "" for an executable or a module
	// dir is the directory go build runs in: the package's own for a
	// directory or a .go file, so that the go.mod of the module holding
	// it applies (as with go run), whatever meshrun's working directory;
	// "" (the working directory) for an import path.
	dir  string
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
		return target{pkg: ".", dir: abs, name: filepath.Base(abs)}, nil
	case err == nil && strings.HasSuffix(s, ".wasm"):
		abs, err := filepath.Abs(s)
		if err != nil {
			return target{}, err
		}
		return target{wasm: abs, name: strings.TrimSuffix(filepath.Base(s), ".wasm")}, nil
	case err == nil && strings.HasSuffix(s, ".go"):
		abs, err := filepath.Abs(s)
		if err != nil {
			return target{}, err
		}
		return target{pkg: filepath.Base(abs), dir: filepath.Dir(abs), name: strings.TrimSuffix(filepath.Base(abs), ".go")}, nil
	case err == nil:
		if !isExecutable(s, info) {
			return target{}, fmt.Errorf("%s: not executable (and not a Go package)", s)
		}
		abs, err := filepath.Abs(s)
		if err != nil {
			return target{}, err
		}
		return target{exe: abs}, nil
	case filepath.IsAbs(s) || s == "." || s == ".." || relative(s):
		return target{}, fmt.Errorf("%s: no such file or directory", s)
	case !strings.Contains(s, "/") && !strings.ContainsRune(s, filepath.Separator):
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

// relative reports whether s starts with ./ or ../ (or .\ or ..\ on
// Windows).
func relative(s string) bool {
	sep := string(filepath.Separator)
	for _, p := range []string{"./", "../", "." + sep, ".." + sep} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
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

// goBuild builds t's package into dir and returns the executable's path:
// a native one, or with wasi a wasip1 module. go runs in t.dir, so a
// package in another module than meshrun's working directory builds with
// its own module's go.mod. Ending ctx interrupts the build. A failed
// build's error carries go build's output.
func goBuild(ctx context.Context, t target, dir string, wasi bool) (string, error) {
	name := t.name
	if name == "" || name == "." || name == "/" {
		name = "rank"
	}
	exe := filepath.Join(dir, name)
	g := gobuild.Go{Dir: t.dir, Setup: interruptGroup}
	if wasi {
		exe += ".wasm"
		g.GOOS, g.GOARCH = "wasip1", "wasm"
	} else {
		exe += exeSuffix
	}
	if err := g.Build(ctx, exe, t.pkg); err != nil {
		if t.dir != "" {
			return "", fmt.Errorf("in %s: %w", t.dir, err)
		}
		return "", err
	}
	if isArchive(exe) {
		return "", errNotMain
	}
	return exe, nil
}

// errNotMain is goBuild's error for a package that is not a main
// package: go build -o writes its archive, which no runtime can run.
var errNotMain = errors.New("is not a main package: there is no program to run")

// isArchive reports whether the file go build wrote is a package archive
// (the build of a package that is not main) rather than a program.
func isArchive(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	magic := make([]byte, len(archiveMagic))
	_, err = io.ReadFull(f, magic)
	return err == nil && string(magic) == archiveMagic
}

// archiveMagic starts a Go package archive (cmd/internal/archive).
const archiveMagic = "!<arch>\n"
