//go:build !js && !wasip1

// Package mixedjob runs meshmpi jobs whose ranks are of different kinds
// (browser tabs of a headless chromium, headless firefoxes, WASI guests
// under wazero, native goroutines) all running one rank program,
// internal/ranksuite's: its mixedrank built for GOOS=js (one build for
// both browsers) and GOOS=wasip1, and ranksuite.Run itself for the
// native ranks. The mixed-job test and meshbench's cross-target
// links (browser-native, browser-browser, wasi-native) are built on it.
//
// A Launcher serves the browser ranks the way cmd/signal does (the run
// page, the ES module, wasm_exec.js and the program, beside the signaling
// endpoint) on a loopback port of its own, compiles the WASI module once
// for all its ranks, and opens a chromium tab per browser rank (driven
// over CDP) or starts a firefox per Firefox rank (no driver: the run
// page, framed by browsertest.Reporter's page, reports its end to the
// launcher's server). Building the
// program needs the go command and the module's source: run from inside
// the module.
package mixedjob

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/meshmpi/meshmpi/internal/gobuild"
)

// Package is the import path of the rank program.
const Package = "github.com/meshmpi/meshmpi/internal/ranksuite/mixedrank"

// ProgramName is the rank program's name: its run page's example= and
// its argv[0].
const ProgramName = "mixedrank"

// Programs are the rank program built for the WebAssembly targets.
type Programs struct {
	JS       []byte // GOOS=js GOARCH=wasm, stripped; nil if not built
	WasmExec []byte // the wasm_exec.js of the toolchain that built JS
	WASI     []byte // GOOS=wasip1 GOARCH=wasm, stripped; nil if not built
}

// Build builds the rank program with goCmd ("" means "go") for the
// browser when js is set and for WASI when wasi is set.
func Build(ctx context.Context, goCmd string, js, wasi bool) (*Programs, error) {
	dir, err := os.MkdirTemp("", "meshmpi-mixedjob-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	var p Programs
	if js {
		goJS := gobuild.Go{Cmd: goCmd, GOOS: "js", GOARCH: "wasm"}
		if p.JS, err = build(ctx, goJS, filepath.Join(dir, "js.wasm")); err != nil {
			return nil, err
		}
		goroot, err := goJS.Output(ctx, "env", "GOROOT")
		if err != nil {
			return nil, fmt.Errorf("mixedjob: %w", err)
		}
		if p.WasmExec, err = os.ReadFile(filepath.Join(goroot, "lib", "wasm", "wasm_exec.js")); err != nil {
			return nil, fmt.Errorf("mixedjob: the toolchain's wasm_exec.js: %w", err)
		}
	}
	if wasi {
		if p.WASI, err = build(ctx, gobuild.Go{Cmd: goCmd, GOOS: "wasip1", GOARCH: "wasm"}, filepath.Join(dir, "wasi.wasm")); err != nil {
			return nil, err
		}
	}
	return &p, nil
}

// build builds Package, stripped, with g into out and returns the module.
func build(ctx context.Context, g gobuild.Go, out string) ([]byte, error) {
	if err := g.Build(ctx, out, Package, "-trimpath", "-ldflags=-s -w"); err != nil {
		return nil, fmt.Errorf("mixedjob (run from inside the meshmpi module): %w", err)
	}
	return os.ReadFile(out)
}
