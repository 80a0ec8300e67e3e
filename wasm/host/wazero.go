//go:build !js && !wasip1

package host

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/experimental/sock"
	"github.com/tetratelabs/wazero/sys"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/signaling"
	"github.com/meshmpi/meshmpi/wasm"
)

// ExitTrap is the exit status Run reports for a guest that trapped (or
// was stopped) rather than exiting: as a shell reports a process that
// aborted (128+SIGABRT).
const ExitTrap = 134

// listenerFD is the file descriptor of the pre-opened listener: the first
// after stdio, as no directory is mounted.
const listenerFD = 3

// Program is a rank's WebAssembly module compiled for wazero, once for
// any number of ranks: compiling takes about a second, instantiating a
// few milliseconds.
type Program struct {
	rt   wazero.Runtime
	mod  wazero.CompiledModule
	poll *poller // its guests' poll_oneoff
	// budgeted: the module's loops count down the budget global
	// (loopbudget.go); false: wazero's own termination checks stop a
	// computing guest
	budgeted bool
}

// Compile compiles a wasip1 module. cacheDir keeps the machine code
// between runs (wazero's file cache: a warm start takes tens of
// milliseconds instead of a second); "" compiles afresh. A cache that
// cannot be used (its directory cannot be made, a full disk) costs the
// next run its warm start, never this one its module: the module is
// compiled without it.
func Compile(ctx context.Context, module []byte, cacheDir string) (*Program, error) {
	return compile(ctx, module, cacheDir, false)
}

// compile is Compile; stockPoll keeps wazero's own poll_oneoff, for the
// benchmark that shows what replacing it buys.
func compile(ctx context.Context, module []byte, cacheDir string, stockPoll bool) (*Program, error) {
	if cacheDir != "" {
		p, err := compileWith(ctx, module, cacheDir, stockPoll)
		if err == nil || ctx.Err() != nil {
			return p, err
		}
		// the cache failed (or the module is bad, which the retry says
		// again, at the cost of a second compile of a module that fails)
	}
	return compileWith(ctx, module, "", stockPoll)
}

// compileWith is one attempt of compile. Its functions compile on as
// many goroutines as the process has processors: a module of a few MB
// takes a core-second or more, and a cold start waits for all of it.
func compileWith(ctx context.Context, module []byte, cacheDir string, stockPoll bool) (*Program, error) {
	// a guest that computes without calling its host must still stop
	// when its run ends (a job's --timeout, an Abort, Ctrl-C), and let
	// the garbage collector stop the world: its loops count down a
	// budget and call the host when it runs out (loopbudget.go), or, in
	// a module the rewriter does not handle, wazero puts its own,
	// costlier, checks in the machine code; the host calls stop it
	// sooner (poll.go, "Stopping a guest")
	cfg := wazero.NewRuntimeConfig()
	budgeted, berr := addLoopBudget(module)
	if berr == nil {
		module = budgeted
	} else {
		cfg = cfg.WithCloseOnContextDone(true)
	}
	if cacheDir != "" {
		cache, err := wazero.NewCompilationCacheWithDir(cacheDir)
		if err != nil {
			return nil, fmt.Errorf("wasm host: compilation cache: %w", err)
		}
		cfg = cfg.WithCompilationCache(cache)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	poll, err := instantiateWASI(ctx, rt, stockPoll)
	if err == nil {
		err = InstantiateClosedCalls(ctx, rt)
	}
	if err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("wasm host: %w", err)
	}
	mod, err := rt.CompileModule(experimental.WithCompilationWorkers(ctx, runtime.GOMAXPROCS(0)), module)
	if err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("wasm host: compile: %w", err)
	}
	return &Program{rt: rt, mod: mod, poll: poll, budgeted: berr == nil}, nil
}

// InstantiateClosedCalls defines package wasm's host functions (module
// "meshmpi", its package doc) in rt as a stream that is closed: every
// wasip1 program that links meshmpi imports them, and a wazero host
// offers the socket instead (or, as wasirun, no job at all), so a guest
// that tried them would see the end of the stream, never a missing
// import.
func InstantiateClosedCalls(ctx context.Context, rt wazero.Runtime) error {
	closed := func(context.Context, uint32, uint32) int32 { return -1 }
	_, err := rt.NewHostModuleBuilder("meshmpi").
		NewFunctionBuilder().WithFunc(closed).Export("stream_write").
		NewFunctionBuilder().WithFunc(closed).Export("stream_read").
		NewFunctionBuilder().WithFunc(func(context.Context) {}).Export("stream_close").
		Instantiate(ctx)
	return err
}

// Close releases the compiled module; ranks still running are stopped.
func (p *Program) Close(ctx context.Context) error { return p.rt.Close(ctx) }

// Rank is one run of a Program as a rank of a job.
type Rank struct {
	Job  Job
	Name string   // the program's name (argv[0])
	Args []string // its arguments
	// Env is the guest's environment (KEY=VALUE); Run adds
	// meshmpi.EnvHost and wasm.EnvOffers.
	Env            []string
	Stdout, Stderr io.Writer // nil discards
	Logger         *slog.Logger
	// Reports, when set, asks the guest for its report (report.go): its
	// answer is a line of Stderr. nil: no one asks.
	Reports *Reports
}

// Run runs one rank to its end and returns its exit status: the code the
// guest exited with, or ExitTrap if it trapped or ctx stopped it. The
// guest gets real clocks, a random source, its arguments and environment
// and a pre-opened TCP listener on loopback, through which Serve relays
// it into the job; no directory is mounted. err reports what went wrong
// on the host's side (the job could not be joined for the guest, the
// guest broke the protocol, it trapped), for the launcher to show.
func (p *Program) Run(ctx context.Context, r Rank) (status int, err error) {
	log := r.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var key [wasm.KeyLen]byte
	if _, err := rand.Read(key[:]); err != nil {
		return 1, err
	}
	for attempt := 0; ; attempt++ {
		status, err, retry := p.run(ctx, r, key, log)
		if !retry || attempt == 4 {
			return status, err
		}
		log.Debug("listener port taken; retrying", "err", err)
	}
}

// run is one attempt of Run; retry says the listener's port was taken
// before the guest could bind it.
func (p *Program) run(ctx context.Context, r Rank, key [wasm.KeyLen]byte, log *slog.Logger) (status int, err error, retry bool) {
	port, err := freePort()
	if err != nil {
		return 1, err, false
	}
	cfg := wazero.NewModuleConfig().WithName("").
		WithArgs(append([]string{r.Name}, r.Args...)...).
		WithSysWalltime().WithSysNanotime().WithSysNanosleep().
		WithRandSource(rand.Reader).
		WithEnv(meshmpi.EnvHost, wasm.ListenerEnv(listenerFD, key)).
		WithEnv(wasm.EnvOffers, wasm.Offers())
	for _, kv := range r.Env {
		k, v, _ := cutEnv(kv)
		if k != meshmpi.EnvHost && k != wasm.EnvOffers && k != "" {
			cfg = cfg.WithEnv(k, v)
		}
	}
	// the relay reports the guest's output when the job's telemetry is on
	tap := new(consoleTap)
	cfg = cfg.WithStdout(tap.writer(r.Stdout, signaling.StreamOut)).WithStderr(tap.writer(r.Stderr, signaling.StreamErr))
	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	wake := newBell()
	sctx := withBell(sock.WithConfig(runCtx, sock.NewConfig().WithTCPListener("127.0.0.1", port)), wake)

	exited := make(chan struct{})
	var (
		wg       sync.WaitGroup
		serveErr error
	)
	wg.Go(func() {
		conn, err := dialGuest(runCtx, port, exited)
		if err != nil {
			return // the guest ended (or never bound its listener) first
		}
		wake.ring() // the connection waits to be accepted
		serveErr = Serve(runCtx, ringingConn{conn, wake}, Config{Job: r.Job, Key: key, Logger: log, Reports: r.Reports, console: tap,
			Agent: "meshmpi wasip1 (wazero)"})
	})
	mod, ierr := p.instantiate(sctx, runCtx, cfg, wake)
	close(exited)
	log.Debug("guest exited", "err", ierr)
	if mod != nil {
		mod.Close(context.Background())
	}
	stop(errGuestDone) // the guest is gone: Serve ends, leaving the job for it
	wg.Wait()
	var ee *sys.ExitError
	switch {
	case ierr == nil:
		status = 0
	case errors.As(ierr, &ee) && ctx.Err() == nil:
		status = int(ee.ExitCode())
	case errors.Is(ierr, syscall.EADDRINUSE):
		return 1, ierr, true
	default:
		status = ExitTrap
		if ctx.Err() != nil {
			err = fmt.Errorf("stopped: %w", context.Cause(ctx))
		} else {
			err = fmt.Errorf("trapped: %w", ierr)
		}
	}
	if serveErr != nil {
		err = errors.Join(err, serveErr)
	}
	return status, err, false
}

// instantiate instantiates the program's module and runs its _start
// (wazero's InstantiateModule); a budgeted module's guest gets its
// budget through b, and the budget runs out at once when runCtx ends.
func (p *Program) instantiate(ctx, runCtx context.Context, cfg wazero.ModuleConfig, b *bell) (api.Module, error) {
	if !p.budgeted {
		return p.rt.InstantiateModule(ctx, p.mod, cfg)
	}
	mod, err := p.rt.InstantiateModule(ctx, p.mod, cfg.WithStartFunctions())
	if err != nil {
		return mod, err
	}
	g, ok := mod.ExportedGlobal(budgetGlobal).(api.MutableGlobal)
	start := mod.ExportedFunction("_start")
	if !ok || start == nil {
		return mod, fmt.Errorf("wasm host: the module has no %s or no _start", budgetGlobal)
	}
	b.budget = g
	defer context.AfterFunc(runCtx, func() { b.refill(1) })()
	_, err = start.Call(ctx)
	var ee *sys.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 0 {
		err = nil // proc_exit(0), as InstantiateModule reports it
	}
	return mod, err
}

// ringingConn is the host's end of a guest's stream: whatever reaches
// the guest (bytes, the end) rings its bell, so a guest sleeping in
// poll_oneoff wakes to read it.
type ringingConn struct {
	net.Conn
	b *bell
}

// ringChunk bounds the bytes written between two rings. A write larger
// than the socket's buffers waits for the guest to read; had its first
// part gone unannounced, a guest that drained what it was told of would
// sleep through it until bellNap. Written in pieces that fit, each
// piece is announced and the next one finds room.
const ringChunk = 16 << 10

func (c ringingConn) Write(p []byte) (n int, err error) {
	for len(p) > 0 && err == nil {
		var k int
		k, err = c.Conn.Write(p[:min(len(p), ringChunk)])
		c.b.ring()
		n, p = n+k, p[k:]
	}
	return n, err
}

// SyscallConn, ring and onGuestWrite make the stream a guestSocket.
func (c ringingConn) SyscallConn() (syscall.RawConn, error) {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return nil, fmt.Errorf("wasm host: the guest's stream is no socket")
	}
	return sc.SyscallConn()
}

func (c ringingConn) ring() { c.b.ring() }

func (c ringingConn) onGuestWrite(s *streamReader) { c.b.stream.Store(s) }

func (c ringingConn) onGuestRead(q *outQueue) { c.b.pull.Store(q) }

func (c ringingConn) Close() error {
	c.b.hostClosed.Store(true) // before the socket says so: see bell.hostClosed
	err := c.Conn.Close()
	c.b.ring()
	return err
}

// dialGuest connects to the guest's listener once it is bound; it gives
// up when the guest exits first.
func dialGuest(ctx context.Context, port int, exited <-chan struct{}) (net.Conn, error) {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	var d net.Dialer
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			return c, nil
		}
		select {
		case <-exited:
			return nil, err
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-time.After(wait):
		}
	}
}

// freePort finds a loopback port no one listens on. Another process may
// take it before the guest binds it; Run then retries with another. A
// process that took it to pose as the guest learns only the key that
// guest would have checked, not the job's token.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	return port, ln.Close()
}

func cutEnv(kv string) (k, v string, ok bool) {
	for i := 0; i < len(kv); i++ {
		if kv[i] == '=' {
			return kv[:i], kv[i+1:], true
		}
	}
	return kv, "", false
}
