//go:build cgo && !js && !wasip1

package host

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"runtime"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"

	"github.com/meshmpi/meshmpi/abi"
)

// RunC runs a C rank: a wasm32-wasi module that imports the MPI calls
// (module abi.WASIModule; meshcc --target wasm32-wasi builds one). Its
// calls are served by the C binding's rank, which runs natively in this
// process (package abi): MPI_Init joins the job the process's environment
// names, as a native C rank's libmpi_abi does, and every call reads and
// writes the guest's memory in place. The binding's state is the
// process's, so a process runs one C rank (meshrun starts a process of
// its own for each). The guest's memory is reserved up to its maximum
// when it is made, so growing it never moves a buffer that a pending
// nonblocking operation holds. The guest's code and its calls run on the
// calling goroutine, locked to its thread while the guest runs.
//
// The status is the guest's exit code, or ExitTrap if it trapped.
func RunC(ctx context.Context, module []byte, r CRank) (status int, err error) {
	ctx = experimental.WithMemoryAllocator(ctx, reservingAllocator())
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(true))
	defer rt.Close(context.Background())
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		return 1, fmt.Errorf("wasm host: %w", err)
	}
	g := &abi.WASIGuest{}
	if err := instantiateMPI(ctx, rt, g); err != nil {
		return 1, fmt.Errorf("wasm host: the MPI calls: %w", err)
	}
	mod, err := rt.CompileModule(ctx, module)
	if err != nil {
		return 1, fmt.Errorf("wasm host: compile: %w", err)
	}
	cfg := wazero.NewModuleConfig().WithName("").
		WithArgs(append([]string{r.Name}, r.Args...)...).
		WithSysWalltime().WithSysNanotime().WithSysNanosleep().
		WithRandSource(rand.Reader).WithStartFunctions() // _start runs below, once g has the memory
	for _, kv := range r.Env {
		if k, v, ok := cutEnv(kv); ok && k != "" {
			cfg = cfg.WithEnv(k, v)
		}
	}
	if r.Stdout != nil {
		cfg = cfg.WithStdout(r.Stdout)
	}
	if r.Stderr != nil {
		cfg = cfg.WithStderr(r.Stderr)
	}
	if r.Stdin != nil {
		cfg = cfg.WithStdin(r.Stdin)
	}
	if r.Root != "" {
		cfg = cfg.WithFSConfig(wazero.NewFSConfig().WithDirMount(r.Root, "/"))
	}
	inst, err := rt.InstantiateModule(ctx, mod, cfg)
	if err != nil {
		return 1, fmt.Errorf("wasm host: instantiate: %w", err)
	}
	defer inst.Close(context.Background())
	mem := inst.Memory()
	if mem == nil {
		return 1, errors.New("wasm host: the C module exports no memory")
	}
	g.Memory = func() []byte {
		b, _ := mem.Read(0, mem.Size())
		return b
	}
	if f := inst.ExportedFunction("malloc"); f != nil {
		g.Malloc = func(n uint32) (uint32, error) {
			res, err := f.Call(ctx, uint64(n))
			if err != nil {
				return 0, err
			}
			return uint32(res[0]), nil
		}
	}
	if f := inst.ExportedFunction("free"); f != nil {
		g.Free = func(p uint32) error {
			_, err := f.Call(ctx, uint64(p))
			return err
		}
	}
	exports := map[string]api.Function{}
	g.CallExport = func(name string, args ...uint64) (uint64, error) {
		f, ok := exports[name]
		if !ok {
			if f = inst.ExportedFunction(name); f == nil {
				return 0, fmt.Errorf("the C module exports no %s (build it with meshcc --target wasm32-wasi)", name)
			}
			exports[name] = f
		}
		res, err := f.Call(ctx, args...)
		if err != nil || len(res) == 0 {
			return 0, err
		}
		return res[0], nil
	}
	start := inst.ExportedFunction("_start")
	if start == nil {
		return 1, errors.New("wasm host: the C module has no _start (build a command, not a reactor)")
	}
	// The guest runs on one thread, as a native C program's main thread
	// calls into libmpi_abi: MPI_Is_thread_main compares the caller's
	// thread with MPI_Init's, which a goroutine moving between threads
	// (after a park, a yield) would fail; and a goroutine free to move
	// woke another thread at each yield of its polling wait, which took
	// the remote rank's core (examples/c/README.md, 1 MiB bandwidth). Its
	// waits stay a Go rank's (not peer.SetLockedCallers'), which measured
	// better for it there, in bandwidth and in latency.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	g.Running()
	_, err = start.Call(ctx)
	var ee *sys.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &ee) && ctx.Err() == nil:
		return int(ee.ExitCode()), nil
	case ctx.Err() != nil:
		return ExitTrap, fmt.Errorf("stopped: %w", context.Cause(ctx))
	}
	return ExitTrap, fmt.Errorf("trapped: %w", err)
}

// instantiateMPI defines module abi.WASIModule in rt: every call of the
// C binding, under its MPI_ and PMPI_ names, served for guest g. Module
// "env" gets them too: a program compiled against another header of the
// standard ABI (which does not name the import module) and linked with
// --allow-undefined imports them from there.
func instantiateMPI(ctx context.Context, rt wazero.Runtime, g *abi.WASIGuest) error {
	for _, name := range []string{abi.WASIModule, "env"} {
		if err := instantiateMPIAs(ctx, rt, g, name); err != nil {
			return err
		}
	}
	return nil
}

func instantiateMPIAs(ctx context.Context, rt wazero.Runtime, g *abi.WASIGuest, module string) error {
	b := rt.NewHostModuleBuilder(module)
	calls := abi.WASICalls()
	for i := range calls {
		c := &calls[i]
		params := make([]api.ValueType, len(c.Params))
		for j, p := range c.Params {
			params[j] = valueType(p)
		}
		results := []api.ValueType{valueType(c.Result)}
		fn := api.GoModuleFunc(func(_ context.Context, _ api.Module, s []uint64) { c.Call(g, s) })
		b.NewFunctionBuilder().WithGoModuleFunction(fn, params, results).Export(c.Name)
		b.NewFunctionBuilder().WithGoModuleFunction(fn, params, results).Export("P" + c.Name)
	}
	_, err := b.Instantiate(ctx)
	return err
}

func valueType(t byte) api.ValueType {
	switch t {
	case abi.WASII64:
		return api.ValueTypeI64
	case abi.WASIF64:
		return api.ValueTypeF64
	}
	return api.ValueTypeI32
}

// CRank is how RunC runs a C rank's module: its name (argv[0]),
// arguments, environment and standard streams, and the directory it sees.
type CRank struct {
	Name           string
	Args           []string
	Env            []string // KEY=VALUE
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Root is the host directory the guest sees as / (and, as wasi-libc
	// starts in /, as its working directory, so a relative path means
	// the same as for a native rank started there); "": no files.
	Root string
}
