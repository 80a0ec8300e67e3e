//go:build !js && !wasip1

// Wasirun runs a GOOS=wasip1 program under wazero, as `go test -exec`
// wants it:
//
//	GOOS=wasip1 GOARCH=wasm go test -exec "go run ./wasm/wasirun" ./op ./coll ./peer .
//
// runs the packages' test binaries in wazero, so the same test functions
// that run natively run as WASI guests (tests that need a network or
// other processes skip themselves there). It also runs any wasip1
// program: wasirun prog.wasm [args...].
//
// The guest gets its arguments, wasirun's environment, real clocks, a
// random source, stdio, and the host's file system mounted at / with
// PWD set to wasirun's working directory (Go's wasip1 runtime takes its
// working directory from PWD), so tests find their testdata. Machine
// code is cached in the user's cache directory between runs. Wasirun
// exits with the guest's exit status (134 if it trapped).
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"

	"github.com/meshmpi/meshmpi/wasm/host"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: wasirun prog.wasm [args...]")
		os.Exit(2)
	}
	os.Exit(run(os.Args[1], os.Args[2:]))
}

func run(path string, args []string) int {
	ctx := context.Background()
	module, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "wasirun:", err)
		return 1
	}
	cfg := wazero.NewRuntimeConfig()
	if dir, err := os.UserCacheDir(); err == nil {
		if cache, err := wazero.NewCompilationCacheWithDir(filepath.Join(dir, "meshmpi", "wazero")); err == nil {
			cfg = cfg.WithCompilationCache(cache)
		}
	}
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	defer rt.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	if err := host.InstantiateClosedCalls(ctx, rt); err != nil {
		fmt.Fprintln(os.Stderr, "wasirun:", err)
		return 1
	}
	mod, err := rt.CompileModule(ctx, module)
	if err != nil {
		fmt.Fprintln(os.Stderr, "wasirun:", err)
		return 1
	}
	mc := wazero.NewModuleConfig().
		WithArgs(append([]string{filepath.Base(path)}, args...)...).
		WithStdin(os.Stdin).WithStdout(os.Stdout).WithStderr(os.Stderr).
		WithSysWalltime().WithSysNanotime().WithSysNanosleep().
		WithRandSource(rand.Reader).
		WithFSConfig(wazero.NewFSConfig().WithDirMount("/", "/"))
	for _, kv := range os.Environ() {
		for i := 0; i < len(kv); i++ {
			if kv[i] == '=' {
				mc = mc.WithEnv(kv[:i], kv[i+1:])
				break
			}
		}
	}
	if wd, err := os.Getwd(); err == nil {
		mc = mc.WithEnv("PWD", wd)
	}
	_, err = rt.InstantiateModule(ctx, mod, mc)
	var ee *sys.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return int(ee.ExitCode())
	default:
		fmt.Fprintln(os.Stderr, "wasirun:", err)
		return host.ExitTrap
	}
}
