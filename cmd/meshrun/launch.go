//go:build unix || windows

package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/signaling"
	"github.com/meshmpi/meshmpi/wasm/host"
	"github.com/meshmpi/meshmpi/wasm/wasmtime"
)

// Exit statuses meshrun picks itself; otherwise it exits with the ranks'.
const (
	exitUsage   = 2   // bad arguments, or a target that does not build
	exitTimeout = 124 // --timeout ran out (as timeout(1) does)
	exitNoStart = 127 // a rank process could not be started
)

const (
	// outputDrain bounds how long meshrun reads a rank's output after the
	// rank exited: a child of the rank may hold its pipes open.
	outputDrain = 2 * time.Second
	// tokenTTL is how long the embedded job's token admits ranks.
	tokenTTL = 24 * time.Hour
	// serverCloseLimit bounds the wait for the embedded server to close.
	serverCloseLimit = 5 * time.Second
)

// launcher runs one meshrun command: build, job, ranks.
type launcher struct {
	cfg     config
	log     *slog.Logger
	stdout  io.Writer // lockedWriters, shared by the ranks' lineWriters
	stderr  io.Writer
	sigc    <-chan os.Signal // signals that stop the job
	reports <-chan os.Signal // signals that ask for a hang report (SIGQUIT)
	seats   []string         // the embedded job's seat tokens, by rank; nil for an existing job
	server  *signaling.Local // the embedded server; nil for an existing job
	deps    *departureLog    // the embedded server's departures; nil for an existing job
	page    *browserProgram  // with --max, the package built for the browser's run page; nil if none
	late    string           // with --max, the embedded job's late token
	web     *webServer       // with --max and a page, the run page's server; nil if none
}

// fail reports a failure in one line on stderr.
func (l *launcher) fail(format string, args ...any) {
	fmt.Fprintf(l.stderr, "meshrun: "+format+"\n", args...)
}

func (l *launcher) run() int {
	if dir := l.cfg.outputDir; dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			l.fail("--output-dir: %v", err)
			return exitUsage
		}
	}
	t, err := resolveTarget(l.cfg.target)
	if err != nil {
		l.fail("%v", err)
		return exitUsage
	}
	nwasi, err := wasiRanks(l.cfg, t)
	if err != nil {
		l.fail("%v", err)
		return exitUsage
	}
	if l.cfg.memCheck {
		if err := checkMemory(l.cfg.n, nwasi); err != nil {
			l.fail("%v", err)
			return exitUsage
		}
	}
	if t.pkg != "" {
		dir, err := os.MkdirTemp("", "meshrun-")
		if err != nil {
			l.fail("%v", err)
			return 1
		}
		defer os.RemoveAll(dir)
		for _, wasi := range []bool{false, true} {
			if wasi && nwasi == 0 || !wasi && nwasi == l.cfg.n {
				continue
			}
			if status, ok := l.build(&t, dir, wasi); !ok {
				return status
			}
		}
		if l.cfg.max > 0 {
			if status, ok := l.buildBrowser(t, dir); !ok {
				return status
			}
		}
	}
	// the module compiles (a second or more without a cache) while the
	// job's server starts
	var compiling *compiling
	if nwasi > 0 {
		compiling = l.startCompile(t.wasm)
	}
	spec, stop, err := l.job()
	if err != nil {
		if compiling != nil {
			compiling.abandon()
		}
		l.fail("%v", err)
		return 1
	}
	defer stop()
	var prog program
	if compiling != nil {
		var status int
		if prog, status = compiling.wait(); prog == nil {
			return status
		}
		defer prog.Close(context.Background())
	}
	if l.cfg.max > 0 {
		if err := l.growable(spec); err != nil {
			l.fail("%v", err)
			return 1
		}
	}
	return l.supervise(t, prog, nwasi, spec)
}

// wasiRanks is how many ranks (the first ones) run under WASI: every one
// for a package or a module, none for an executable, unless --native or
// --wasi say otherwise.
func wasiRanks(c config, t target) (int, error) {
	module := t.wasm != "" && t.pkg == ""
	switch {
	case c.native && module:
		return 0, fmt.Errorf("%s is a WebAssembly module: it runs under WASI, not --native", c.target)
	case c.native:
		return 0, nil
	case c.wasi > 0 && t.pkg == "" && t.exe != "":
		return 0, fmt.Errorf("--wasi: %s is an executable; a mixed job needs a package, built for both", c.target)
	case c.wasi > 0 && module && c.wasi < c.n:
		return 0, fmt.Errorf("--wasi %d: %s is a WebAssembly module and cannot run the %d native ranks", c.wasi, c.target, c.n-c.wasi)
	case c.wasi > 0:
		return c.wasi, nil
	case t.pkg != "" || module:
		return c.n, nil
	}
	return 0, nil
}

// WASI runtimes meshrun embeds (--runtime).
const (
	runtimeWazero   = "wazero"   // pure Go, the default
	runtimeWasmtime = "wasmtime" // through wasmtime-go (cgo)
)

// program is the WASI ranks' module compiled for the job's runtime:
// host.Program (wazero) or wasmtime.Program.
type program interface {
	Run(ctx context.Context, r host.Rank) (status int, err error)
	Close(ctx context.Context) error
}

// compile compiles the WASI ranks' module once for all of them, for the
// runtime --runtime names, with its cache of machine code in the user's
// cache directory (cacheDir).
func (l *launcher) compile(path string) (program, error) {
	module, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	rt := l.cfg.runtime
	if rt == "" {
		rt = runtimeWazero
	}
	cache, err := cacheDir(rt)
	if err != nil {
		l.log.Warn("no compilation cache: every run compiles the module afresh", "err", err)
	}
	if compileHook != nil && cache != "" {
		compileHook(path, rt, cache)
	}
	start := time.Now()
	var p program
	switch rt {
	case runtimeWasmtime:
		p, err = wasmtime.Compile(context.Background(), module, cache)
	default:
		p, err = host.Compile(context.Background(), module, cache)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	l.log.Info("compiled", "module", path, "runtime", rt, "bytes", len(module), "cache", cache, "took", time.Since(start).Round(time.Millisecond))
	if rt == runtimeWazero && cache != "" {
		if err := host.PruneCache(cache, host.CacheKeep); err != nil {
			l.log.Warn("pruning the compilation cache", "dir", cache, "err", err)
		}
	}
	return p, nil
}

// compileHook, when set, runs before compile compiles the module at path
// for runtime rt with its cache in cache. The tests set it when they run
// under the race detector, which makes wazero's compiler, running in the
// test process, some ten times slower: the hook fills the cache from a
// process without it, and the compile below then loads the machine code.
var compileHook func(path, rt, cache string)

// cacheDir is the directory of runtime rt's compilation cache, made if
// need be: meshmpi/rt in the user's cache directory. A user without one
// (no home, a read-only one) gets "" and why: the runs work, cold.
func cacheDir(rt string) (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir = filepath.Join(dir, "meshmpi", rt)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	return dir, nil
}

// compiling is the WASI ranks' module being compiled (compile).
type compiling struct {
	l    *launcher
	done chan compiled // cap 1

	mu   sync.Mutex
	gone bool // abandoned: the compile's program is closed, not sent
}

type compiled struct {
	prog program
	err  error
}

// startCompile starts compiling the WASI ranks' module.
func (l *launcher) startCompile(path string) *compiling {
	c := &compiling{l: l, done: make(chan compiled, 1)}
	go func() {
		p, err := l.compile(path)
		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.gone {
			c.done <- compiled{p, err}
		} else if err == nil {
			_ = p.Close(context.Background())
		}
	}()
	return c
}

// wait returns the compiled module, or gives up at a signal: a compile
// (seconds for a large module without a cache, more on a loaded host)
// is left to finish on its own and its program closed, and meshrun
// exits at once. When it fails, prog is nil and status is meshrun's
// exit status.
func (c *compiling) wait() (prog program, status int) {
	select {
	case r := <-c.done:
		if r.err != nil {
			c.l.fail("%v", r.err)
			return nil, exitUsage
		}
		return r.prog, 0
	case sig := <-c.l.sigc:
		c.abandon()
		c.l.fail("%v: stopping (the WASI module was still compiling)", sig)
		return nil, signalStatus(sig)
	}
}

// abandon gives up on the compile; its program is closed.
func (c *compiling) abandon() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gone = true
	select { // a compile that ended meanwhile
	case r := <-c.done:
		if r.err == nil {
			_ = r.prog.Close(context.Background())
		}
	default:
	}
}

// build builds t's package into dir, natively or for wasip1, or gives up
// at a signal. When it fails, status is meshrun's exit status.
func (l *launcher) build(t *target, dir string, wasi bool) (status int, ok bool) {
	start := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		exe string
		err error
	}
	done := make(chan result, 1)
	go func() {
		exe, err := goBuild(ctx, *t, dir, wasi)
		done <- result{exe, err}
	}()
	select {
	case r := <-done:
		if errors.Is(r.err, errNotMain) {
			l.fail("%s %v", l.cfg.target, r.err)
			return exitUsage, false
		}
		if r.err != nil {
			l.fail("%v", r.err)
			return exitUsage, false
		}
		if wasi {
			t.wasm = r.exe
		} else {
			t.exe = r.exe
		}
		l.log.Info("built", "package", t.pkg, "exe", r.exe, "took", time.Since(start).Round(time.Millisecond))
		return 0, true
	case sig := <-l.sigc:
		cancel()
		<-done // bounded by goBuild's WaitDelay
		return signalStatus(sig), false
	}
}

// job returns the job the ranks join: the one the command line names, or a
// new one on an embedded server that stop closes.
func (l *launcher) job() (spec meshmpi.JobSpec, stop func(), err error) {
	c := l.cfg
	if c.signal != "" {
		return meshmpi.JobSpec{Signal: c.signal, Job: c.job, Token: c.token}, func() {}, nil
	}
	deps := newDepartureLog()
	srv, err := signaling.ListenLocal(signaling.Config{MaxJobSize: max(c.n, c.max), Logger: l.log.With("component", "signaling"), Departed: deps.add})
	if err != nil {
		return spec, nil, err
	}
	id := "meshrun-" + rand.Text()
	// one seat token per rank: a rank's token admits it and no other, and
	// a rank that dies before the job forms fails the job at once; with
	// --max they say the job may grow (the late token says it too)
	claims := signaling.Claims{Job: id, Size: c.n, Expires: time.Now().Add(tokenTTL).Unix(), Settings: c.settings, Max: c.max}
	seats, err := srv.MintSeats(claims)
	var late string
	if err == nil && c.max > 0 {
		claims.Late = true
		late, err = srv.Mint(claims)
	}
	if err != nil {
		_ = srv.Close()
		return spec, nil, err
	}
	var web *webServer
	if l.page != nil {
		if web, err = serveRunPage(srv, l.page); err != nil {
			_ = srv.Close()
			return spec, nil, err
		}
	}
	l.log.Info("embedded signaling server", "url", srv.URL(), "job", id, "settings", c.settings, "max", c.max)
	stop = func() {
		done := make(chan error, 1)
		go func() {
			var err error
			if web != nil {
				err = web.Close() // no new pages and no new connections through it
			}
			done <- errors.Join(err, srv.Close())
		}()
		select {
		case err := <-done:
			if err != nil {
				l.log.Warn("closing the signaling server", "err", err)
			}
		case <-time.After(serverCloseLimit):
			l.log.Warn("the signaling server did not close in time")
		}
	}
	l.seats, l.server, l.deps = seats, srv, deps
	l.late, l.web = late, web
	return meshmpi.JobSpec{Signal: srv.URL(), Job: id}, stop, nil
}

// supervise starts the ranks of spec (the first nwasi under WASI, with
// prog; the others as processes of t.exe), waits for them and returns
// meshrun's exit status.
func (l *launcher) supervise(t target, prog program, nwasi int, spec meshmpi.JobSpec) int {
	j := &job{l: l, exe: t.exe, env: l.cfg.env.with(withRankTimeout(rankEnv(os.Environ(), spec, l.cfg.joinTimeout), l.cfg.timeout)), exits: make(chan exit, l.cfg.n),
		prog: prog, nwasi: nwasi, name: t.name, spec: spec, hang: newHangWatch(l.cfg.n, l.cfg.reportHang)}
	defer j.hang.stop()
	// A rank stopped by a signal cannot answer its peers: the kernel tells
	// meshrun with SIGCHLD, and meshrun names it as the job's trouble
	// before its peers fail because of it. Asked for before the first
	// rank starts: a rank stopped as it starts (before it even joined)
	// sends its only SIGCHLD at once, which would otherwise be lost.
	chld, unwatch := watchStops()
	defer unwatch()
	for i := range l.cfg.n {
		// a signal while the ranks start (a large job, a loaded host)
		// stops the start: the ranks started so far are stopped below
		select {
		case sig := <-l.sigc:
			j.override = signalStatus(sig)
			l.fail("%v: stopping the ranks", sig)
			l.log.Info("signal while the ranks start", "started", i, "of", l.cfg.n)
			j.escalate()
		default:
		}
		if j.override != 0 {
			break
		}
		start := j.start
		if i < nwasi {
			start = j.startWASI
		}
		if err := start(i); err != nil {
			l.fail("rank %s: cannot start: %v", j.label(i), err)
			j.status = exitNoStart
			j.stage, j.timer = stageGrace, time.After(l.cfg.grace)
			break
		}
	}
	var timeout <-chan time.Time
	if l.cfg.timeout > 0 {
		t := time.NewTimer(stopAfter(l.cfg.timeout))
		defer t.Stop()
		timeout = t.C
	}
	for j.live > 0 {
		select {
		case e := <-j.exits:
			j.exited(e)
			if (j.stage != stageRun || l.cfg.keepGoing) && j.onlyStoppedLeft() {
				j.killStopped(true) // nothing else can end them: --grace would only delay the end
			}
		case <-chld:
			j.checkStopped()
		case <-j.frozen:
			j.killStopped(false)
		case sig := <-l.sigc:
			if j.override == 0 {
				j.override = signalStatus(sig)
				l.fail("%v: stopping the ranks", sig)
			}
			j.escalate()
		case sig := <-l.reports:
			j.askReports(sig.String())
		case a := <-j.hang.answers:
			j.answered(a)
		case <-j.hang.timer:
			j.reportVerdict()
		case <-j.hang.idleC():
			j.idleCheck()
		case <-timeout:
			timeout = nil
			if j.override == 0 {
				j.override = exitTimeout
				l.fail("the job did not end within --timeout %v: stopping the ranks", l.cfg.timeout)
			}
			if j.stage < stageTerm {
				j.escalate()
			}
		case <-j.timer:
			if j.stage == stageKill {
				l.fail("%s did not exit after SIGKILL; leaving them", j.running())
				j.live = 0 // their waiters may still report; exits has room
				continue
			}
			j.escalate()
		}
	}
	if j.override != 0 {
		return j.override
	}
	if l.cfg.keepGoing {
		return j.keepGoingResult()
	}
	if j.status != 0 && j.cause != "" {
		l.fail("the job failed because %s", j.cause)
	}
	return j.status
}

// rankEnv is the environment of a rank process: meshrun's, without any job
// of its own, plus spec's; start adds the rank.
func rankEnv(environ []string, spec meshmpi.JobSpec, joinTimeout time.Duration) []string {
	var env []string
	for _, kv := range environ {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case meshmpi.EnvSignal, meshmpi.EnvJob, meshmpi.EnvToken, meshmpi.EnvRank:
			continue
		}
		env = append(env, kv)
	}
	env = append(env,
		meshmpi.EnvSignal+"="+spec.Signal, meshmpi.EnvJob+"="+spec.Job, meshmpi.EnvToken+"="+spec.Token,
		meshmpi.EnvReport+"=1") // answer SIGQUIT's question (hang.go)
	if joinTimeout > 0 {
		env = append(env, meshmpi.EnvJoinTimeout+"="+joinTimeout.String())
	}
	return env
}

// withRankTimeout gives env --timeout as meshmpi.EnvTimeout, so every
// rank (native or WASI) reports what it is blocked in and exits 124
// when it runs out, before meshrun's own stop.
func withRankTimeout(env []string, d time.Duration) []string {
	if d <= 0 {
		return env
	}
	return setEnv(env, meshmpi.EnvTimeout+"="+d.String())
}

// setEnv sets kv (VAR=value) in env, replacing VAR's earlier values.
func setEnv(env []string, kv string) []string {
	k, _, _ := strings.Cut(kv, "=")
	env = slices.DeleteFunc(env, func(x string) bool { return strings.HasPrefix(x, k+"=") })
	return append(env, kv)
}

// stopAfter is when meshrun stops a job run with --timeout d: the ranks
// time out d after the job formed, and report during meshmpi.TimeoutLinger;
// meshrun stops what is left after that and a margin for forming.
func stopAfter(d time.Duration) time.Duration {
	return d + meshmpi.TimeoutLinger + timeoutMargin
}

// timeoutMargin allows for the job forming between meshrun's start of the
// ranks and theirs of their timers.
const timeoutMargin = 5 * time.Second

// stage is how far a job's teardown has gone.
type stage int

const (
	stageRun   stage = iota // every rank on its own
	stageGrace              // a rank failed: the others have a grace period to fail too
	stageTerm               // SIGTERM sent
	stageKill               // SIGKILL sent
)

// job is the rank processes of one meshrun and what became of them. Only
// supervise's goroutine touches it; each rank's waiter sends on exits.
type job struct {
	l     *launcher
	exe   string
	env   []string
	prog  program // the WASI ranks' module
	nwasi int     // ranks 0 … nwasi-1 (of this meshrun) run under WASI
	name  string  // the WASI ranks' argv[0]
	spec  meshmpi.JobSpec
	ranks []*rank
	exits chan exit
	live  int // started and not yet exited

	status   int // worst status of the ranks that ended on their own
	override int // meshrun's status after a signal or a timeout, or 0
	stage    stage
	timer    <-chan time.Time // next escalation

	// cause is what meshrun knows made the job fail, when it is not the
	// first rank to exit: "rank 3 stopped responding". The ranks that
	// lose a peer fail first and would otherwise take the blame.
	cause  string
	frozen <-chan time.Time // when to kill ranks found stopped; nil if none

	hang *hangWatch // SIGQUIT and --report-hang (hang.go)

}

// rank is one rank process, or a WASI rank running in meshrun.
type rank struct {
	label          string
	seat           int                // its place among meshrun's ranks: the index of its seat token
	cmd            *exec.Cmd          // nil for a WASI rank
	stop           context.CancelFunc // a WASI rank's: stops it
	reports        *host.Reports      // a WASI rank's: asks its guest for a hang report (hang.go)
	stdout, stderr *lineWriter
	start          time.Time
	exited         bool
	stopped        bool       // meshrun signalled it: its status does not count
	status         int        // its exit status, once exited
	how            string     // how it ended, in words ("exited with status 3")
	frozenSince    time.Time  // when meshrun found its process stopped; zero while it runs
	killedFrozen   bool       // meshrun killed it because it stayed stopped
	files          []*os.File // --output-dir: its stdout and stderr files; nil without
}

// exit reports that a rank ended; err is what Wait returned, or for a
// WASI rank what went wrong on the host's side, with its status.
type exit struct {
	r      *rank
	err    error
	status int // a WASI rank's exit status
	rank   int // the rank a WASI rank's host joined as, if the server numbered it; else -1
}

// label names the i-th process in output prefixes and messages: its rank,
// or "join i" when the server assigns ranks, until meshrun learns the
// rank (a WASI rank's host tells it; a native process never does).
func (j *job) label(i int) string {
	if j.l.cfg.first == meshmpi.AnyRank {
		return joinLabel + strconv.Itoa(i)
	}
	return strconv.Itoa(j.l.cfg.first + i)
}

// joinLabel starts the label of a process whose rank the server assigns
// and meshrun does not know: "[join 0] " is the first such process's
// prefix.
const joinLabel = "join "

// start starts the i-th rank process and its waiter.
func (j *job) start(i int) error {
	label := j.label(i)
	cmd := exec.Command(j.exe, j.l.cfg.args...)
	cmd.Env = j.env
	if j.l.cfg.first != meshmpi.AnyRank {
		cmd.Env = append(cmd.Env[:len(cmd.Env):len(cmd.Env)], meshmpi.EnvRank+"="+label)
	}
	if j.l.seats != nil { // the last of duplicate keys counts
		cmd.Env = append(cmd.Env[:len(cmd.Env):len(cmd.Env)], meshmpi.EnvToken+"="+j.l.seats[i])
	}
	r := &rank{
		label:  label,
		seat:   i,
		cmd:    cmd,
		stdout: newLineWriter(j.l.stdout, "["+label+"] "),
		stderr: newLineWriter(j.l.stderr, "["+label+"] "),
	}
	if err := j.openOutput(r); err != nil {
		return err
	}
	r.stdout.onLine, r.stderr.onLine = j.hang.seen, j.hang.tap(r)
	cmd.Stdout, cmd.Stderr = r.stdout, r.stderr
	cmd.SysProcAttr = rankProcAttr()
	cmd.WaitDelay = outputDrain
	if err := cmd.Start(); err != nil {
		r.closeOutput()
		return err
	}
	r.start = time.Now()
	j.l.log.Info("rank started", "rank", label, "pid", cmd.Process.Pid)
	j.ranks = append(j.ranks, r)
	j.live++
	go func() {
		err := cmd.Wait()
		_ = r.stdout.Flush()
		_ = r.stderr.Flush()
		r.closeOutput()
		j.exits <- exit{r: r, err: err, rank: -1}
	}()
	return nil
}

// startWASI starts the i-th rank as a WASI guest of meshrun's: it runs in
// a goroutine, and meshrun relays its links.
func (j *job) startWASI(i int) error {
	label := j.label(i)
	ctx, stop := context.WithCancel(context.Background())
	r := &rank{
		label:   label,
		seat:    i,
		stop:    stop,
		stdout:  newLineWriter(j.l.stdout, "["+label+"] "),
		stderr:  newLineWriter(j.l.stderr, "["+label+"] "),
		start:   time.Now(),
		reports: &host.Reports{},
	}
	if err := j.openOutput(r); err != nil {
		stop()
		return err
	}
	r.stdout.onLine, r.stderr.onLine = j.hang.seen, j.hang.tap(r)
	// a rank the server numbers (a late rank among them): its host
	// learns its rank when it joins, and its lines wait for it
	joined := &joinedRank{}
	joined.rank.Store(-1)
	log := j.l.log.With("rank", label)
	if j.l.cfg.first == meshmpi.AnyRank {
		r.stdout.hold()
		r.stderr.hold()
		log = slog.New(&joinWatch{Handler: log.Handler(), joined: func(rank int) {
			if joined.rank.CompareAndSwap(-1, int64(rank)) {
				j.renameOutput(r, strconv.Itoa(rank))
				prefix := "[" + strconv.Itoa(rank) + "] "
				r.stdout.release(prefix)
				r.stderr.release(prefix)
			}
		}})
	}
	jr := host.Rank{
		Job: host.Job{Signal: j.spec.Signal, ID: j.spec.Job, Token: j.spec.Token, Rank: meshmpi.AnyRank,
			JoinTimeout: j.l.cfg.joinTimeout},
		Name: j.name, Args: j.l.cfg.args, Env: j.l.cfg.env.with(withRankTimeout(guestEnv(os.Environ()), j.l.cfg.timeout)),
		Stdout: r.stdout, Stderr: r.stderr, Logger: log, Reports: r.reports,
	}
	if j.l.cfg.first != meshmpi.AnyRank {
		jr.Job.Rank = j.l.cfg.first + i
	}
	if j.l.seats != nil {
		jr.Job.Token = j.l.seats[i]
	}
	j.l.log.Info("wasi rank started", "rank", label)
	j.ranks = append(j.ranks, r)
	j.live++
	go func() {
		status, err := j.runWASI(ctx, jr, r, joined)
		stop()
		_ = r.stdout.Flush()
		_ = r.stderr.Flush()
		r.closeOutput()
		j.exits <- exit{r: r, err: err, status: status, rank: int(joined.rank.Load())}
	}()
	return nil
}

// Backoff of a WASI rank's joins while its job has not formed.
const (
	notFormedFirstWait = 100 * time.Millisecond
	notFormedMaxWait   = 2 * time.Second
)

// runWASI runs a WASI rank, and runs it again while the server refuses
// its join because the job has not formed yet (signaling.ErrNotFormed: a
// late token, or an open one of a seated job, that came too early), with
// a doubling wait, until --join-timeout after its start. A refused
// guest's output (its Init's error) is dropped with it: the rank's lines
// wait for its rank, which a refused guest never learns.
func (j *job) runWASI(ctx context.Context, jr host.Rank, r *rank, joined *joinedRank) (status int, err error) {
	limit := j.l.cfg.joinTimeout
	if limit <= 0 {
		limit = meshmpi.DefaultJoinTimeout
	}
	deadline := time.Now().Add(limit)
	wait := notFormedFirstWait
	for try := 1; ; try++ {
		jr.Job.JoinTimeout = max(time.Until(deadline), time.Millisecond)
		status, err = j.prog.Run(ctx, jr)
		if !errors.Is(err, signaling.ErrNotFormed) || joined.rank.Load() >= 0 || time.Until(deadline) < wait || ctx.Err() != nil {
			return status, err
		}
		dropped := r.stdout.drop() + r.stderr.drop()
		if try == 1 {
			j.l.fail("rank %s: job %s has not formed yet: joining again until it has (--join-timeout %v)", r.label, jr.Job.ID, limit)
		}
		j.l.log.Info("job not formed: joining again", "rank", r.label, "try", try, "wait", wait, "dropped output bytes", dropped, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return status, err
		}
		wait = min(2*wait, notFormedMaxWait)
	}
}

// joinedRank is the rank a WASI rank's host joined as, once it has; -1
// until then.
type joinedRank struct{ rank atomic.Int64 }

// joinWatch passes a WASI rank's host's log records on to meshrun's
// logger and tells joined of the rank in its "joined" record (package
// wasm/host logs it, at debug level, once the job took the guest in and
// before the guest hears of it): host.Rank has no other word of the
// rank the server gave. TestGrowJoinWASI fails if that record changes.
type joinWatch struct {
	slog.Handler
	joined func(rank int)
}

func (h *joinWatch) Enabled(ctx context.Context, level slog.Level) bool {
	return level >= slog.LevelDebug || h.Handler.Enabled(ctx, level)
}

func (h *joinWatch) Handle(ctx context.Context, rec slog.Record) error {
	if rec.Message == "joined" {
		rec.Attrs(func(a slog.Attr) bool {
			if a.Key != "rank" {
				return true
			}
			if v := a.Value.Resolve(); v.Kind() == slog.KindInt64 {
				h.joined(int(v.Int64()))
			}
			return false
		})
	}
	if !h.Handler.Enabled(ctx, rec.Level) {
		return nil
	}
	return h.Handler.Handle(ctx, rec)
}

func (h *joinWatch) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &joinWatch{Handler: h.Handler.WithAttrs(attrs), joined: h.joined}
}

func (h *joinWatch) WithGroup(name string) slog.Handler {
	return &joinWatch{Handler: h.Handler.WithGroup(name), joined: h.joined}
}

// guestEnv is a WASI rank's environment: meshrun's without any job (the
// host holds it).
func guestEnv(environ []string) []string {
	var env []string
	for _, kv := range environ {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case meshmpi.EnvSignal, meshmpi.EnvJob, meshmpi.EnvToken, meshmpi.EnvRank, meshmpi.EnvJoinTimeout, meshmpi.EnvHost:
			continue
		}
		env = append(env, kv)
	}
	return env
}

// exited records a rank's end; the first failure starts the teardown.
func (j *job) exited(e exit) {
	r := e.r
	r.exited = true
	if e.rank >= 0 && strings.HasPrefix(r.label, joinLabel) {
		r.label = strconv.Itoa(e.rank) // its lines said so since it joined
	}
	j.live--
	var status int
	var how string
	if r.cmd != nil {
		status, how = exitStatus(r.cmd)
	} else {
		status, how = e.status, fmt.Sprintf("exited with status %d", e.status)
		if e.err != nil {
			how = fmt.Sprintf("ended with status %d: %v", e.status, e.err)
		}
	}
	r.status, r.how = status, how
	j.l.log.Info("rank exited", "rank", r.label, "status", status, "after", time.Since(r.start).Round(time.Millisecond), "stopped", r.stopped)
	r.frozenSince = time.Time{}
	var ee *exec.ExitError
	if r.cmd != nil && e.err != nil && !errors.As(e.err, &ee) {
		j.l.log.Warn("waiting for a rank", "rank", r.label, "err", e.err)
	}
	if r.stopped {
		return
	}
	j.status = max(j.status, status)
	if status == 0 {
		if e.err != nil { // the guest succeeded, but the host saw trouble
			j.l.log.Warn("wasi rank", "rank", r.label, "err", e.err)
		}
		return
	}
	if j.stage == stageRun {
		j.checkStopped() // the cause may be a stopped rank, even if no SIGCHLD said so
	}
	switch {
	case r.killedFrozen:
		how = "stopped responding; meshrun killed it"
	case j.cause != "" && j.cause != "rank "+r.label+" stopped responding": // not itself
		how += ", after " + j.cause
	}
	j.vacate(r)
	if j.l.cfg.keepGoing {
		// the job goes on: the survivors handle the failure themselves
		j.l.fail("rank %s %s (--keep-going: the other ranks carry on)", r.label, how)
		return
	}
	j.l.fail("rank %s %s", r.label, how)
	if j.stage == stageRun {
		j.stage, j.timer = stageGrace, time.After(j.l.cfg.grace)
	}
}

// vacate makes sure that the job of meshrun's embedded server fails if r
// failed before it formed. A rank that ends before it reached the server
// leaves its seat empty, and the other ranks would wait for it until
// their join timeout (minutes): nothing but meshrun knows it is gone.
// Meshrun, which holds the rank's seat token, tells its server so
// (FailSeat), which fails the seated job for every member and later
// joiner. If the rank had joined, the server already knows (the seat is
// taken, or the job failed or formed) and FailSeat does nothing.
func (j *job) vacate(r *rank) {
	if j.l.server == nil || r.seat >= len(j.l.seats) {
		return // an existing job: its seats are not meshrun's
	}
	failed, err := j.l.server.FailSeat(j.spec.Job, j.l.seats[r.seat], "its process ended")
	j.l.log.Info("seat of the failed rank", "rank", r.label, "job failed", failed, "err", err)
}

// escalate takes the teardown a step further: SIGTERM, then SIGKILL.
func (j *job) escalate() {
	switch j.stage {
	case stageRun, stageGrace:
		j.stage = stageTerm
		j.stopRanks("SIGTERM", terminate)
		j.timer = time.After(j.l.cfg.grace)
	case stageTerm:
		j.stage = stageKill
		j.stopRanks("SIGKILL", kill)
		j.timer = time.After(j.l.cfg.grace + outputDrain)
	}
}

// stopRanks stops every rank still running: a process with how
// (terminate or kill, named sig in the log), a WASI rank at once.
func (j *job) stopRanks(sig string, how func(*os.Process) error) {
	for _, r := range j.ranks {
		if r.exited {
			continue
		}
		r.stopped = true
		if r.cmd == nil {
			r.stop() // a WASI rank stops at once, whatever the signal
			j.l.log.Info("stopped wasi rank", "rank", r.label, "signal", sig)
			continue
		}
		err := how(r.cmd.Process)
		j.l.log.Info("signalled rank", "rank", r.label, "signal", sig, "err", err)
	}
}

// checkStopped looks at the state of every rank process still running: a
// rank newly found stopped by a signal is reported, and killed if it is
// still stopped after --grace (killStopped), so that its peers see it
// leave instead of waiting for it; a rank that resumed is forgotten.
// The first one found is the job's cause.
func (j *job) checkStopped() {
	for _, r := range j.ranks {
		if r.cmd == nil || r.exited || r.stopped || r.killedFrozen {
			continue
		}
		switch stopped := processStopped(r.cmd.Process.Pid); {
		case stopped && r.frozenSince.IsZero():
			r.frozenSince = time.Now()
			j.l.fail("rank %s stopped responding: its process is stopped by a signal; it is killed if still stopped after %v", r.label, j.l.cfg.grace)
			if j.cause == "" {
				j.cause = "rank " + r.label + " stopped responding"
			}
			if j.frozen == nil {
				j.frozen = time.After(j.l.cfg.grace)
			}
		case !stopped && !r.frozenSince.IsZero():
			r.frozenSince = time.Time{}
			j.l.log.Info("rank resumed", "rank", r.label)
		}
	}
}

// onlyStoppedLeft reports whether every rank still running is one found
// stopped.
func (j *job) onlyStoppedLeft() bool {
	j.checkStopped()
	for _, r := range j.ranks {
		if !r.exited && !r.killedFrozen && r.frozenSince.IsZero() {
			return false
		}
	}
	return j.live > 0
}

// killStopped kills the ranks that have been stopped for --grace, or all
// of them now, and waits again for those stopped since.
func (j *job) killStopped(now bool) {
	j.frozen = nil
	j.checkStopped()
	var next time.Duration
	for _, r := range j.ranks {
		if r.frozenSince.IsZero() || r.exited || r.killedFrozen {
			continue
		}
		if left := j.l.cfg.grace - time.Since(r.frozenSince); left > 0 && !now {
			if next == 0 || left < next {
				next = left
			}
			continue
		}
		r.killedFrozen = true
		err := kill(r.cmd.Process)
		j.l.log.Info("killed stopped rank", "rank", r.label, "err", err)
	}
	if next > 0 {
		j.frozen = time.After(next)
	}
}

// running lists the ranks still running, for a message.
func (j *job) running() string {
	var labels []string
	for _, r := range j.ranks {
		if !r.exited {
			labels = append(labels, r.label)
		}
	}
	return "rank(s) " + strings.Join(labels, ", ")
}

// exitStatus is a finished rank's exit status as a shell reports it
// (128+n for a rank killed by signal n, 1 if unknown) and its description.
func exitStatus(cmd *exec.Cmd) (int, string) {
	ps := cmd.ProcessState
	if ps == nil {
		return 1, "ended without an exit status"
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), fmt.Sprintf("was killed by signal %d (%v)", int(ws.Signal()), ws.Signal())
	}
	if code := ps.ExitCode(); code >= 0 {
		return code, fmt.Sprintf("exited with status %d", code)
	}
	return 1, ps.String()
}

// signalStatus is the exit status for a job stopped by sig: 128+sig.
func signalStatus(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 1
}
