//go:build cgo && !js && !wasip1

package wasmtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	wt "github.com/bytecodealliance/wasmtime-go/v39"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/wasm"
	"github.com/meshmpi/meshmpi/wasm/host"
)

// cacheTag names the runtime that made a cached module: machine code is
// only valid for the wasmtime version and platform that compiled it
// (wasmtime checks too, and a mismatch recompiles).
const cacheTag = "wasmtime-v39.0.1-" + runtime.GOOS + "-" + runtime.GOARCH

// outputDrain bounds how long Run copies a guest's output after the
// guest ended.
const outputDrain = 2 * time.Second

// Program is a rank's WebAssembly module compiled for wasmtime, once for
// any number of ranks.
type Program struct {
	engine *wt.Engine
	module *wt.Module
}

// Compile compiles a wasip1 module. cacheDir keeps the machine code
// between runs (a cached module starts in milliseconds instead of a
// second of compiling); "" compiles afresh. The cache is trusted as the
// machine code it holds: keep it in a directory only the user can write.
func Compile(ctx context.Context, module []byte, cacheDir string) (*Program, error) {
	engine := wt.NewEngine()
	p := &Program{engine: engine}
	cached := ""
	if cacheDir != "" {
		sum := sha256.Sum256(module)
		cached = filepath.Join(cacheDir, hex.EncodeToString(sum[:16])+"-"+cacheTag+".cwasm")
		if m, err := wt.NewModuleDeserializeFile(engine, cached); err == nil {
			p.module = m
			return p, nil
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m, err := wt.NewModule(engine, module)
	if err != nil {
		return nil, fmt.Errorf("wasmtime host: compile: %w", err)
	}
	p.module = m
	if cached != "" {
		// a cache that cannot be written only costs the next run a compile
		_ = writeCache(cached, m)
	}
	return p, nil
}

// writeCache stores m's machine code at path, atomically.
func writeCache(path string, m *wt.Module) error {
	b, err := m.Serialize()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*.cwasm")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// Close releases the compiled module. Ranks still running keep what they
// use until they end.
func (p *Program) Close(context.Context) error {
	p.module.Close()
	p.engine.Close()
	return nil
}

// errStopped is the trap a host function raises once its rank's context
// ended.
const errStopped = "meshmpi: the rank was stopped"

// errGuestExited is the cause that ends Serve once the guest exited.
var errGuestExited = errors.New("the guest exited")

// Run runs one rank to its end and returns its exit status: the code the
// guest exited with, or host.ExitTrap if it trapped or ctx stopped it.
// The guest gets its arguments and environment (with meshmpi.EnvHost
// naming the call transport, and wasm.EnvOffers), stdout and stderr, and the meshmpi host
// functions, through which host.Serve relays it into the job; no
// directory is mounted. err reports what went wrong on the host's side
// (the job could not be joined for the guest, the guest broke the
// protocol, it trapped), for the launcher to show.
func (p *Program) Run(ctx context.Context, r host.Rank) (status int, err error) {
	log := r.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	pp := newPipe(pipeSize)
	store := wt.NewStore(p.engine)
	linker := wt.NewLinker(p.engine)
	var outs outputs
	defer func() {
		// the store holds the guest's ends of its output pipes
		linker.Close()
		store.Close()
		outs.wait()
	}()
	if err := outs.configure(store, r); err != nil {
		return 1, err
	}
	var mem *wt.Memory
	if err := defineCalls(linker, pp, &mem); err != nil {
		return 1, err
	}
	inst, err := linker.Instantiate(store, p.module)
	if err != nil {
		return 1, fmt.Errorf("wasmtime host: instantiate: %w", err)
	}
	if ex := inst.GetExport(store, "memory"); ex != nil {
		mem = ex.Memory()
	}
	start := inst.GetFunc(store, "_start")
	if mem == nil || start == nil {
		return 1, fmt.Errorf("wasmtime host: the module exports no memory or _start: not a wasip1 command: %w", meshmpi.ErrNotSupported)
	}

	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var (
		wg       sync.WaitGroup
		serveErr error
	)
	wg.Go(func() {
		serveErr = host.Serve(runCtx, hostEnd{pp}, host.Config{Job: r.Job, Logger: log, Reports: r.Reports, Agent: "meshmpi wasip1 (wasmtime)"})
	})
	unwatch := context.AfterFunc(ctx, func() { pp.stop() })
	_, callErr := start.Call(store)
	unwatch()
	pp.closeGuest()
	log.Debug("guest exited", "err", callErr)
	stop(errGuestExited) // a join still under way for the guest ends
	wg.Wait()
	if errors.Is(serveErr, errGuestExited) {
		serveErr = nil
	}
	status, err = exitStatus(ctx, callErr)
	if serveErr != nil {
		err = errors.Join(err, serveErr)
	}
	return status, err
}

// exitStatus turns how _start returned into the rank's status.
func exitStatus(ctx context.Context, callErr error) (int, error) {
	var we *wt.Error
	if callErr == nil {
		return 0, nil
	}
	if errors.As(callErr, &we) && ctx.Err() == nil {
		if code, ok := we.ExitStatus(); ok {
			return int(code), nil
		}
	}
	if ctx.Err() != nil {
		return host.ExitTrap, fmt.Errorf("stopped: %w", context.Cause(ctx))
	}
	return host.ExitTrap, fmt.Errorf("trapped: %w", trapError{callErr})
}

// trapError is a trap as the launcher shows it: wasmtime's message and
// the guest's backtrace, without the host's native stack frames.
type trapError struct{ err error }

func (e trapError) Error() string {
	msg, _, _ := strings.Cut(e.err.Error(), "\n\nStack backtrace:")
	return strings.TrimSpace(msg)
}

func (e trapError) Unwrap() error { return e.err }

// defineCalls defines the meshmpi host functions on linker, bound to pp
// and to the guest's memory (*mem, set once the module is instantiated:
// looked up once, not per call). They trap once pp is stopped, and when
// the guest names bytes outside its memory.
func defineCalls(linker *wt.Linker, pp *pipe, mem **wt.Memory) error {
	i32 := wt.NewValType(wt.KindI32)
	moveType := wt.NewFuncType([]*wt.ValType{i32, i32}, []*wt.ValType{i32})
	res := make([]wt.Val, 1) // the result slot, reused: one call at a time per store
	move := func(f func([]byte) int32) func(*wt.Caller, []wt.Val) ([]wt.Val, *wt.Trap) {
		return func(c *wt.Caller, args []wt.Val) ([]wt.Val, *wt.Trap) {
			if pp.stopped.Load() {
				return nil, wt.NewTrap(errStopped)
			}
			ptr, n := uint64(uint32(args[0].I32())), uint64(uint32(args[1].I32()))
			data := (*mem).UnsafeData(c)
			if ptr+n > uint64(len(data)) {
				return nil, wt.NewTrap(fmt.Sprintf("meshmpi: %d bytes at %#x lie outside the guest's %d-byte memory", n, ptr, len(data)))
			}
			res[0] = wt.ValI32(f(data[ptr : ptr+n]))
			return res, nil
		}
	}
	closeType := wt.NewFuncType(nil, nil)
	return errors.Join(
		linker.DefineWasi(),
		linker.FuncNew("meshmpi", "stream_write", moveType, move(pp.guestWrite)),
		linker.FuncNew("meshmpi", "stream_read", moveType, move(pp.guestRead)),
		linker.FuncNew("meshmpi", "stream_close", closeType, func(*wt.Caller, []wt.Val) ([]wt.Val, *wt.Trap) {
			pp.closeGuest()
			return nil, nil
		}),
	)
}

// outputs copies a guest's stdout and stderr to the rank's writers.
// wasmtime-go writes a guest's output only to files, so each goes
// through a pipe that wasmtime opens by its /dev/fd name.
type outputs struct {
	readers []*os.File
	done    []chan struct{}
}

// configure gives the guest of store its arguments, environment and
// output.
func (o *outputs) configure(store *wt.Store, r host.Rank) error {
	cfg := wt.NewWasiConfig()
	cfg.SetArgv(append([]string{r.Name}, r.Args...))
	keys, vals := []string{meshmpi.EnvHost, wasm.EnvOffers}, []string{wasm.CallsEnv(), wasm.Offers()}
	for _, kv := range r.Env {
		k, v, _ := strings.Cut(kv, "=")
		if k != meshmpi.EnvHost && k != wasm.EnvOffers && k != "" {
			keys, vals = append(keys, k), append(vals, v)
		}
	}
	cfg.SetEnv(keys, vals)
	for _, out := range []struct {
		w   io.Writer
		set func(string) error
	}{{r.Stdout, cfg.SetStdoutFile}, {r.Stderr, cfg.SetStderrFile}} {
		if out.w == nil {
			continue
		}
		if err := o.pipe(out.w, out.set); err != nil {
			cfg.Close()
			return fmt.Errorf("wasmtime host: the guest's output: %w", err)
		}
	}
	store.SetWasi(cfg)
	return nil
}

// pipe makes a pipe whose write end set hands to wasmtime and whose
// read end a goroutine copies to w.
func (o *outputs) pipe(w io.Writer, set func(string) error) error {
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	err = set("/dev/fd/" + strconv.Itoa(int(pw.Fd())))
	pw.Close() // wasmtime opened its own
	if err != nil {
		pr.Close()
		return err
	}
	done := make(chan struct{})
	o.readers, o.done = append(o.readers, pr), append(o.done, done)
	go func() {
		defer close(done)
		_, _ = io.Copy(w, pr)
	}()
	return nil
}

// wait lets the copies finish once the guest's ends are closed (the
// store is gone), within outputDrain.
func (o *outputs) wait() {
	limit := time.NewTimer(outputDrain)
	defer limit.Stop()
	for i, done := range o.done {
		select {
		case <-done:
		case <-limit.C:
			o.readers[i].Close()
			<-done
		}
		o.readers[i].Close()
	}
}
