//go:build !js

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/meshmpi/meshmpi/internal/gobuild"
	"github.com/meshmpi/meshmpi/web"
)

// webConfig is where the browser UI's programs and wasm_exec.js come from.
type webConfig struct {
	wasmDir  string   // prebuilt NAME.wasm files
	buildDir string   // main packages to build for GOOS=js at start-up
	wasmExec string   // the toolchain's wasm_exec.js; empty: the building toolchain's, else this binary's
	goCmd    string   // the go command buildDir is built with
	lab      bool     // POST /lab/jobs for loopback clients
	labMax   int      // largest lab job
	names    []string // names the server is reached by (-public-name), besides addresses and localhost
}

// webOptions loads (or builds) the programs and wasm_exec.js of cfg.
func webOptions(ctx context.Context, cfg webConfig, secret []byte) (web.Options, error) {
	var o web.Options
	progs := map[string][]byte{}
	goroot := ""
	if cfg.buildDir != "" {
		out, err := os.MkdirTemp("", "meshmpi-wasm-")
		if err != nil {
			return o, err
		}
		defer os.RemoveAll(out)
		if goroot, err = buildPrograms(ctx, cfg.goCmd, cfg.buildDir, out); err != nil {
			return o, err
		}
		built, err := web.LoadPrograms(out)
		if err != nil {
			return o, err
		}
		for k, v := range built {
			progs[k] = v
		}
	}
	if cfg.wasmDir != "" {
		pre, err := web.LoadPrograms(cfg.wasmDir)
		if err != nil {
			return o, err
		}
		if len(pre) == 0 {
			return o, fmt.Errorf("-wasm %s: no .wasm files", cfg.wasmDir)
		}
		for k, v := range pre {
			progs[k] = v
		}
	}
	path := cfg.wasmExec
	if path == "" {
		if goroot == "" {
			goroot = runtime.GOROOT()
		}
		if goroot != "" {
			path = filepath.Join(goroot, "lib", "wasm", "wasm_exec.js")
		}
	}
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil && cfg.wasmExec == "" && len(progs) == 0 {
			b = nil // no programs to run: the pages work without it
		} else if err != nil {
			return o, fmt.Errorf("wasm_exec.js (set -wasm-exec): %w", err)
		}
		o.WasmExec = b
	}
	o.Programs = progs
	if cfg.lab {
		o.Lab = &web.LabConfig{Secret: secret, MaxSize: cfg.labMax, Hosts: cfg.names}
	}
	return o, nil
}

// buildPrograms builds every main package under dir (dir/…) for GOOS=js
// GOARCH=wasm, stripped, into out as NAME.wasm, and returns the GOROOT of
// the toolchain that built them, whose wasm_exec.js they need.
func buildPrograms(ctx context.Context, goCmd, dir, out string) (goroot string, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("build %s for the browser: %w", dir, err)
		}
	}()
	g := gobuild.Go{Cmd: goCmd, GOOS: "js", GOARCH: "wasm", Dir: dir}
	goroot, err = g.Output(ctx, "env", "GOROOT")
	if err != nil {
		return "", err
	}
	list, err := g.Output(ctx, "list", "-f", `{{if eq .Name "main"}}{{.ImportPath}}{{end}}`, "./...")
	if err != nil {
		return "", err
	}
	for _, pkg := range strings.Fields(list) {
		name := pkg[strings.LastIndex(pkg, "/")+1:]
		if err := g.Build(ctx, filepath.Join(out, name+".wasm"), pkg, "-trimpath", "-ldflags=-s -w"); err != nil {
			return "", err
		}
	}
	return goroot, nil
}
