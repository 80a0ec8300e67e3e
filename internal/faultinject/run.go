//go:build unix

package faultinject

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/internal/gobuild"
	"github.com/meshmpi/meshmpi/signaling"
)

// Binaries are the programs a run starts: meshrun and the workload,
// native and for wasip1, and the examples (BuildExamples), by name.
type Binaries struct {
	Meshrun  string
	Native   string
	WASM     string
	Examples map[string]Program
}

// Program is one program's executables: native and for wasip1.
type Program struct {
	Native, WASM string
}

// Build builds the binaries into dir and compiles the WASI module once
// into meshrun's cache. The working directory must be in the meshmpi
// module.
func Build(ctx context.Context, dir string) (Binaries, error) {
	const mod = "github.com/meshmpi/meshmpi/"
	b := Binaries{
		Meshrun: filepath.Join(dir, "meshrun"),
		Native:  filepath.Join(dir, "workload"),
		WASM:    filepath.Join(dir, "workload.wasm"),
	}
	for _, s := range []struct {
		g        gobuild.Go
		out, pkg string
	}{
		{gobuild.Go{}, b.Meshrun, mod + "cmd/meshrun"},
		{gobuild.Go{}, b.Native, mod + "internal/faultinject/workload"},
		{gobuild.Go{GOOS: "wasip1", GOARCH: "wasm"}, b.WASM, mod + "internal/faultinject/workload"},
	} {
		if err := s.g.Build(ctx, s.out, s.pkg); err != nil {
			return b, err
		}
	}
	return b, warm(ctx, b.Meshrun, b.WASM, "-op", "barrier", "-finalize", "-iters", "1")
}

// exampleWarmArgs are each example's arguments for a one-rank job that
// is over at once.
var exampleWarmArgs = map[string][]string{
	Resilient: {"-iters", "1", "-points", "10"},
	Farm:      {"-tasks", "1", "-work", "1"},
}

// BuildExamples builds the examples (Examples, from the module's
// examples/), native and for wasip1, into dir, records them in b, and
// compiles each WASI module once into meshrun's cache, as Build does
// the workload's; b.Meshrun must be built.
func BuildExamples(ctx context.Context, dir string, b *Binaries) error {
	const mod = "github.com/meshmpi/meshmpi/examples/"
	b.Examples = map[string]Program{}
	for _, name := range Examples {
		pr := Program{Native: filepath.Join(dir, name), WASM: filepath.Join(dir, name+".wasm")}
		if err := (gobuild.Go{}).Build(ctx, pr.Native, mod+name); err != nil {
			return err
		}
		if err := (gobuild.Go{GOOS: "wasip1", GOARCH: "wasm"}).Build(ctx, pr.WASM, mod+name); err != nil {
			return err
		}
		if err := warm(ctx, b.Meshrun, pr.WASM, exampleWarmArgs[name]...); err != nil {
			return err
		}
		b.Examples[name] = pr
	}
	return nil
}

// warm runs a one-rank WASI job of module, which leaves the module's
// machine code in meshrun's compilation cache, so the runs' meshruns,
// several at a time, do not each compile it (seconds of CPU each).
func warm(ctx context.Context, meshrun, module string, args ...string) error {
	cmd := exec.CommandContext(ctx, meshrun, append([]string{"-n", "1", module}, args...)...)
	cmd.Env = cleanEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("faultinject: a one-rank WASI job of %s: %w\n%s", filepath.Base(module), err, out)
	}
	return nil
}

// DefaultHangLimit is how long a run waits after the fault for the
// survivors to end before it calls the run a hang.
const DefaultHangLimit = 60 * time.Second

// stackDumpWait is how long a hung run's survivors have to write their
// stacks after SIGQUIT before the teardown kills what is left.
const stackDumpWait = 3 * time.Second

// launchLimit bounds the wait for the moment a plan strikes at.
const launchLimit = 90 * time.Second

// ulfmGrace is meshrun -n N's --grace in ulfm runs that strike a formed
// job: longer than the job takes to find a frozen rank by itself (the
// server's pings, about 8 s), so that a native freeze tests that, not
// meshrun's own killing of a stopped rank (--grace, 2 s by default). Once
// only the frozen rank is left, meshrun kills it at once. A rank frozen
// before it joined is found by meshrun alone (the server knows nothing
// of it yet), so formation faults keep the default. A mixed job's native
// victim runs in a meshrun join of its own, which kills it after the
// default --grace: its peers see it leave, as after a kill.
const ulfmGrace = 30 * time.Second

// finalizeIters is the workload's loops before Finalize, for plans that
// strike during Finalize.
const finalizeIters = 20

// Runner runs plans.
type Runner struct {
	Bin Binaries
	// HangLimit is how long survivors have after the fault;
	// DefaultHangLimit if 0.
	HangLimit time.Duration
}

// Exit is how a survivor ended, as its meshrun logged it.
type Exit struct {
	Status  int
	Stopped bool      // meshrun stopped it: it did not end by itself
	At      time.Time // when the harness read meshrun's log of it
}

// Errored reports whether the rank ended by itself with a failure.
func (e Exit) Errored() bool { return e.Status != 0 && !e.Stopped }

// Result is what became of a run.
type Result struct {
	Plan
	// Err says the run could not be made: a launch failed, or the job
	// ended before the moment the plan strikes at.
	Err error
	// Faulted is true once the fault was sent; Missed when the victim
	// had already ended by then (its peers may then succeed).
	Faulted, Missed bool
	// Struck is the phase the fault struck in: the job may have formed
	// before a formation fault's delay ran out.
	Struck Phase
	// Hung is true when a survivor still ran HangLimit after the fault.
	Hung bool
	// Survivors are the exits of the ranks other than the victim.
	Survivors map[int]Exit
	// LastExit is the time from the fault to the last survivor's exit.
	LastExit time.Duration
	// Job is, for an example run, the time from rank 0's first line to
	// the last survivor's exit (0 if one did not end).
	Job time.Duration
	// Report is meshrun's own lines ("meshrun: …") from every meshrun.
	Report []string
	// Output is every line the run's meshruns wrote, for a failed run.
	Output []string
	// RoundLines are, for a ulfm run, the round lines (ULFMRound.String)
	// each rank printed, in order.
	RoundLines map[int][]string
	// Ready are the ranks whose Init returned ("fi ready").
	Ready map[int]bool
	// VictimLeft: the victim had left the job cleanly (Finalize) before
	// the fault, as meshrun -n N's embedded server logged it; the fault
	// then counts as missed, and meshrun --keep-going counts the victim
	// among the survivors, with the status the fault gave it
	// (VictimStatus).
	VictimLeft   bool
	VictimStatus int
	// Meshruns are the exit statuses of the run's meshruns that ended by
	// themselves (not the teardown's), with the ranks each hosted (nil
	// for meshrun -n N's own job: every rank).
	Meshruns []MeshrunExit
}

// MeshrunExit is how one of a run's meshruns ended.
type MeshrunExit struct {
	Ranks  []int // the ranks it hosted; nil: all of them
	Status int
}

// WithoutError lists the survivors that did not end with an error of
// their own: they succeeded, meshrun had to stop them, or they hung.
func (r Result) WithoutError() []int {
	var ranks []int
	for rank := range r.Ranks {
		if rank == r.Victim {
			continue
		}
		if e, ok := r.Survivors[rank]; !ok || !e.Errored() {
			ranks = append(ranks, rank)
		}
	}
	return ranks
}

// Excused reports whether survivors may have succeeded: the victim had
// ended already, or was struck in Finalize, which may be over for the
// survivors by then.
func (r Result) Excused() bool { return r.Missed || r.Struck == Finalize }

// Failed says what is wrong with a run, or "" when nothing is: it hung,
// a survivor ended without an error it did not have an excuse for, or
// the run could not be made. A ulfm run is judged by the fault-tolerant
// contract instead (ULFMVerdict).
func (r Result) Failed() string {
	if r.ULFM() {
		return r.ulfmFailed()
	}
	if r.Example() {
		return r.exampleFailed()
	}
	switch {
	case r.Err != nil:
		return "run: " + r.Err.Error()
	case r.Hung:
		return fmt.Sprintf("hang: rank(s) %v still running %v after the fault", r.WithoutError(), r.LastExit.Round(time.Millisecond))
	case !r.Excused() && len(r.WithoutError()) > 0:
		var b strings.Builder
		for _, rank := range r.WithoutError() {
			e := r.Survivors[rank]
			fmt.Fprintf(&b, " rank %d status %d stopped %v;", rank, e.Status, e.Stopped)
		}
		return "survivors without an error:" + b.String()
	}
	return ""
}

// NamesVictim reports whether meshrun's report names the victim as the
// cause: its exit, or that it stopped responding.
func (r Result) NamesVictim() bool {
	who := "rank " + strconv.Itoa(r.Victim) + " "
	for _, line := range r.Report {
		if strings.HasPrefix(line, "meshrun: "+who) || strings.Contains(line, "after "+who) || strings.Contains(line, "because "+who) {
			return true
		}
	}
	return false
}

// proc is one meshrun of a run.
type proc struct {
	cmd   *exec.Cmd
	ranks []int
	done  bool
}

// event is a line a meshrun wrote, or its end (line "" and end set, with
// its exit status).
type event struct {
	proc   int
	line   string
	end    bool
	status int
	at     time.Time
}

var (
	// The workload's progress, through meshrun's prefix.
	rankLine = regexp.MustCompile(`^\[(\d+)\] fi (ready|op|finalize)$`)
	// meshrun -v's log of a native rank's start and of any rank's end.
	startedLine = regexp.MustCompile(`msg="rank started" rank=(\d+) pid=(\d+)`)
	exitedLine  = regexp.MustCompile(`msg="rank exited" rank=(\d+) status=(-?\d+) .*stopped=(true|false)`)
	// The ulfm workload's steps and rounds.
	stepLine  = regexp.MustCompile(`^\[(\d+)\] fi step (\d+) (revoke|connect|agree|shrink)$`)
	roundLine = regexp.MustCompile(`^\[(\d+)\] fi (round .*)$`)
	// meshrun -n N -v's embedded server: a rank left the job cleanly.
	leftLine = regexp.MustCompile(`msg="rank left" component=signaling .*rank=(\d+) reason="connection closed"`)
	// An example's first line, by rank 0: the computation starts.
	exampleStart = regexp.MustCompile(`^\[0\] (\d+ points, \d+ iterations|\d+ tasks of \d+ hash steps)`)
)

// Run runs p: it starts the job, waits for the moment p strikes at,
// sends the fault, and waits for the survivors to end.
func (rn *Runner) Run(ctx context.Context, p Plan) (res Result) {
	res = Result{Plan: p, Survivors: map[int]Exit{}, RoundLines: map[int][]string{}, Ready: map[int]bool{}}
	hangLimit := rn.HangLimit
	if hangLimit == 0 {
		hangLimit = DefaultHangLimit
	}
	args := []string{"-op", p.Op, "-form", p.Form, "-count", strconv.Itoa(p.Count)}
	if p.Phase == Finalize {
		args = append(args, "-finalize", "-iters", strconv.Itoa(finalizeIters))
	}
	// A ulfm job goes on without the victim: meshrun --keep-going, and
	// ranks that run as KeepGoing says because their job's settings say
	// so (meshrun -n N --keep-going puts it in its embedded job's, the
	// harness in its own), not because the program asks (the workload's
	// -keep-going=false).
	var keepGoing, grace []string
	settings := map[string]string{meshmpi.SettingNetwork: "loopback"}
	if p.ULFM() {
		args = []string{"-op", p.Op, "-rounds", strconv.Itoa(p.Rounds)}
		keepGoing = []string{"--keep-going"}
		if p.Phase != Formation {
			grace = []string{"--grace", ulfmGrace.String()}
		}
		settings[meshmpi.SettingKeepGoing] = "1"
		args = append(args, "-keep-going=false")
	}
	// An example runs with KeepGoing of its own, and under meshrun
	// --keep-going as its documentation says; it is struck once formed.
	native, wasm := rn.Bin.Native, rn.Bin.WASM
	if p.Example() {
		pr, ok := rn.Bin.Examples[p.Op]
		if !ok {
			res.Err = fmt.Errorf("no binaries of example %s (BuildExamples)", p.Op)
			return res
		}
		native, wasm = pr.Native, pr.WASM
		args = p.ExampleArgs()
		keepGoing = []string{"--keep-going"}
		grace = []string{"--grace", ulfmGrace.String()}
		settings[meshmpi.SettingKeepGoing] = "1"
	}
	// ulfm and example runs may be over before their fault strikes
	mayMiss := p.Phase == Finalize || p.ULFM() || p.Example()

	events := make(chan event, 256)
	joins := make(chan int, 64) // ranks the harness's server admitted
	var procs []*proc
	defer func() { // whatever is left of the run ends
		for _, pr := range procs {
			if !pr.done {
				_ = pr.cmd.Process.Signal(syscall.SIGCONT)
				_ = pr.cmd.Process.Kill()
			}
		}
		for _, pr := range procs {
			for !pr.done {
				ev := <-events
				if ev.end {
					procs[ev.proc].done = true
					continue
				}
				res.Output = append(res.Output, ev.line)
			}
		}
	}()
	launch := func(ranks []int, argv ...string) error {
		cmd := exec.Command(rn.Bin.Meshrun, argv...)
		cmd.Env = cleanEnv()
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		out, err := cmd.StdoutPipe()
		if err != nil {
			return err
		}
		cmd.Stderr = cmd.Stdout // one stream: the order of lines is what meshrun wrote
		if err := cmd.Start(); err != nil {
			return err
		}
		i := len(procs)
		procs = append(procs, &proc{cmd: cmd, ranks: ranks})
		go func() {
			readLines(out, i, events)
			_ = cmd.Wait()
			events <- event{proc: i, end: true, status: cmd.ProcessState.ExitCode(), at: time.Now()}
		}()
		return nil
	}

	// target is the process a fault goes to, per rank: a native rank's
	// own (once its meshrun logged it), a WASI rank's meshrun.
	target := map[int]int{}
	// ownProc is the meshrun that hosts only the victim, a WASI rank: it
	// never ends by itself when frozen.
	ownProc := -1
	if p.Mode == Native {
		argv := append(append(append([]string{"-v", "-n", strconv.Itoa(p.Ranks), "--native"}, keepGoing...), grace...), native)
		if err := launch(nil, append(argv, args...)...); err != nil {
			res.Err = err
			return res
		}
	} else {
		srv, err := signaling.ListenLocal(signaling.Config{MaxJobSize: p.Ranks, Logger: slog.New(joinHandler{joins})})
		if err != nil {
			res.Err = err
			return res
		}
		defer srv.Close()
		id := "faultinject-" + rand.Text()
		tokens, err := srv.SeatTokens(id, p.Ranks, settings, time.Hour)
		if err != nil {
			res.Err = err
			return res
		}
		for r := range p.Ranks {
			exe := native
			if r < p.WASI {
				exe = wasm
			}
			argv := append([]string{"join", srv.URL(), "--job", id, "--token", tokens[r], "--rank", strconv.Itoa(r), "-v"}, keepGoing...)
			argv = append(append(argv, exe), args...)
			if err := launch([]int{r}, argv...); err != nil {
				res.Err = err
				return res
			}
			if r < p.WASI {
				target[r] = procs[len(procs)-1].cmd.Process.Pid
				if r == p.Victim {
					ownProc = len(procs) - 1
				}
			}
		}
	}

	ready, looping := res.Ready, map[int]bool{}
	var trigger <-chan time.Time
	arm := func() {
		if trigger == nil && !res.Faulted && !res.Missed {
			trigger = time.After(p.Delay)
		}
	}

	limit := time.NewTimer(launchLimit)
	defer limit.Stop()
	var fault, started time.Time
	for {
		// The run is over when every meshrun but the victim's own ended.
		over := true
		for i, pr := range procs {
			if !pr.done && i != ownProc {
				over = false
			}
		}
		if over {
			switch {
			case res.Faulted || res.Missed || res.Err != nil:
			case mayMiss: // the survivors were through before the delay ran out
				res.Missed = true
			default:
				res.Err = errors.New("the job ended before the fault")
			}
			break
		}
		select {
		case <-ctx.Done():
			res.Err = ctx.Err()
			return res
		case ev := <-events:
			if ev.end {
				procs[ev.proc].done = true
				res.Meshruns = append(res.Meshruns, MeshrunExit{Ranks: procs[ev.proc].ranks, Status: ev.status})
				continue
			}
			res.Output = append(res.Output, ev.line)
			if strings.HasPrefix(ev.line, "meshrun: ") {
				res.Report = append(res.Report, ev.line)
			}
			if p.Example() && started.IsZero() && exampleStart.MatchString(ev.line) {
				started = ev.at
				arm()
				continue
			}
			if m := rankLine.FindStringSubmatch(ev.line); m != nil {
				rank, _ := strconv.Atoi(m[1])
				switch m[2] {
				case "ready":
					ready[rank] = true
				case "op":
					looping[rank] = true
					if p.Phase == Op && !p.ULFM() && len(looping) == p.Ranks {
						arm()
					}
				case "finalize":
					if p.Phase == Finalize && rank == p.Victim {
						arm()
					}
				}
				continue
			}
			if m := stepLine.FindStringSubmatch(ev.line); m != nil {
				rank, _ := strconv.Atoi(m[1])
				round, _ := strconv.Atoi(m[2])
				if p.ULFM() && p.Phase == Op && rank == p.Victim && round == p.Round && m[3] == p.Step {
					arm()
				}
				continue
			}
			if m := roundLine.FindStringSubmatch(ev.line); m != nil {
				rank, _ := strconv.Atoi(m[1])
				res.RoundLines[rank] = append(res.RoundLines[rank], m[2])
				continue
			}
			if m := leftLine.FindStringSubmatch(ev.line); m != nil {
				// a clean leave (the only kind this line matches) came
				// before the fault, even when meshrun's output tells of
				// it after the fault went out
				if rank, _ := strconv.Atoi(m[1]); rank == p.Victim {
					res.VictimLeft = true
				}
				continue
			}
			if m := startedLine.FindStringSubmatch(ev.line); m != nil {
				rank, _ := strconv.Atoi(m[1])
				pid, _ := strconv.Atoi(m[2])
				target[rank] = pid
				if p.Phase == Formation && rank == p.Victim && p.Mode == Native {
					arm() // meshrun sees it end, even before it joined
				}
				continue
			}
			if m := exitedLine.FindStringSubmatch(ev.line); m != nil {
				rank, _ := strconv.Atoi(m[1])
				status, _ := strconv.Atoi(m[2])
				if rank == p.Victim {
					res.VictimStatus = status
				}
				switch {
				case rank != p.Victim:
					res.Survivors[rank] = Exit{Status: status, Stopped: m[3] == "true", At: ev.at}
				case res.Faulted && status == 0:
					res.Missed = true // it had ended (a zombie takes signals too)
				case res.Faulted:
				case p.Phase == Finalize || (p.ULFM() || p.Example()) && status == 0: // it was quicker than the delay
					res.Missed, trigger = true, nil
				default:
					res.Err = fmt.Errorf("the victim ended before the fault, with status %d", status)
				}
			}
		case rank := <-joins:
			// A rank started by a launcher of its own that dies before it
			// reaches the server is, to the others, a rank not there yet:
			// only their join timeout ends their wait. Formation faults
			// in such jobs strike once the victim is in.
			if p.Phase == Formation && rank == p.Victim {
				arm()
			}
		case <-trigger:
			trigger = nil
			res.Faulted = true
			fault = time.Now()
			// Loop and Finalize faults strike once the victim is there, in
			// a formed job, even if another rank's "fi ready" has not been
			// read yet (each meshrun's output comes in its own time).
			switch {
			case p.Phase == Finalize:
				res.Struck = Finalize
			case p.Phase == Op || len(ready) == p.Ranks:
				res.Struck = Op
			default:
				res.Struck = Formation
			}
			sig := syscall.SIGKILL
			if p.Kind == Freeze {
				sig = syscall.SIGSTOP
			}
			pid := target[p.Victim]
			if pid == 0 {
				res.Err = errors.New("no process for the victim")
				return res
			}
			if err := syscall.Kill(pid, sig); err != nil {
				res.Missed = true // it ended as the fault went out
			}
			limit.Reset(hangLimit)
		case <-limit.C:
			if !res.Faulted {
				res.Err = fmt.Errorf("the moment to strike at did not come within %v", launchLimit)
				return res
			}
			res.Hung = true
			res.LastExit = time.Since(fault)
			// The survivors' goroutine stacks say where each waits: a
			// Go program dumps them on SIGQUIT, and its meshrun passes
			// them on to the output the deferred teardown collects.
			for r, pid := range target {
				if _, ended := res.Survivors[r]; r != p.Victim && !ended {
					_ = syscall.Kill(pid, syscall.SIGQUIT)
				}
			}
			time.Sleep(stackDumpWait) // no event says a dump is complete
			return res
		}
	}
	if p.Example() && !started.IsZero() && len(res.Survivors) == p.Ranks-1 {
		for _, e := range res.Survivors {
			res.Job = max(res.Job, e.At.Sub(started))
		}
	}
	if res.Faulted && !res.Missed {
		// a ulfm job is short, an example's computation may be over:
		// their survivors may be through before the fault
		over := p.ULFM() || p.Example()
		for _, e := range res.Survivors {
			res.LastExit = max(res.LastExit, e.At.Sub(fault))
			over = over && e.At.Before(fault)
		}
		res.Missed = over && len(res.Survivors) == p.Ranks-1 || (p.ULFM() || p.Example()) && res.VictimLeft
	}
	return res
}

// joinHandler is the harness server's log: it passes on the ranks it
// admits, and drops what the run no longer reads.
type joinHandler struct{ joins chan<- int }

func (h joinHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h joinHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "rank joined" {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "rank" {
			select {
			case h.joins <- int(a.Value.Int64()):
			default:
			}
			return false
		}
		return true
	})
	return nil
}

func (h joinHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h joinHandler) WithGroup(string) slog.Handler      { return h }

// readLines sends every line of r as an event of proc i.
func readLines(r io.Reader, i int, events chan<- event) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		events <- event{proc: i, line: sc.Text(), at: time.Now()}
	}
}

// cleanEnv is the harness's environment without a job of its own.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MESHMPI_") {
			env = append(env, kv)
		}
	}
	return env
}
