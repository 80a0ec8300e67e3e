//go:build unix

package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/internal/gobuild"
	"github.com/meshmpi/meshmpi/signaling"
)

// farmPkg is the program the soak runs.
const farmPkg = "github.com/meshmpi/meshmpi/examples/farm"

const (
	// formLimit bounds the initial job's forming.
	formLimit = 2 * time.Minute
	// drainBase and the duration bound the farm's end once churn
	// stopped: the manager finishes the tasks out, stops its workers and
	// checks its answer against a sequential run of every task (one
	// core doing all the work the workers did: a small share of the
	// duration with the default -work, as long as the soak with tasks of
	// milliseconds), and a late worker started last may look for the farm
	// for its -wait (lateWait) before it gives up; what is left after
	// that is killed, and counts as hung.
	drainBase = 3 * time.Minute
	// endMargin is how long before the manager's -for is over the churn
	// stops and the last sample is taken, so that no sample sees the farm
	// end.
	endMargin = 2 * time.Second
	// lateWait is a late worker's -wait (and the manager's).
	lateWait = 30 * time.Second
	// firstTasks is the manager's -tasks: its first batch.
	firstTasks = 64
	// lateMargin is how many late ranks the job admits beyond two per
	// churn event the soak can make.
	lateMargin = 64
	// keepFailures is how many unexpected ends the report shows in full
	// (with the end of the process's output); all are counted.
	keepFailures = 10
	// keepLines is how many of the manager's lines (not its stats) are kept.
	keepLines = 200
	// tailBytes is how much of a worker's output an unexpected end shows.
	tailBytes = 2048
)

// kind is a rank process's part in the farm.
type kind int

const (
	managerKind kind = iota // rank 0
	worldKind               // ranks 1…workers, seated
	lateKind                // joined the running job with the late token
)

// proc is a rank process meshchurn started.
type proc struct {
	id     int // start order; the manager is 0
	kind   kind
	rank   int    // world rank; -1 for a late worker, whose rank is the server's choice
	out    string // its output file (a worker's)
	cmd    *exec.Cmd
	start  time.Time
	killed bool  // by the churn
	err    error // Wait's
}

func (p *proc) String() string {
	switch p.kind {
	case managerKind:
		return "the manager (rank 0)"
	case worldKind:
		return fmt.Sprintf("world worker (rank %d, pid %d)", p.rank, p.cmd.Process.Pid)
	}
	return fmt.Sprintf("late worker #%d (pid %d)", p.id, p.cmd.Process.Pid)
}

// sample is one look at the signaling server's process (meshchurn's
// own) and the job.
type sample struct {
	at         time.Time
	goroutines int
	heap       uint64 // HeapAlloc after a GC
	fds        int    // -1 where the system cannot say
	conns      int    // the server's open connections (ranks and joining ranks)
	ranks      int    // ranks present in the job
	procs      int    // rank processes alive (not yet reaped)
	kills      int
	joins      int
	mgr        mgrStat // the manager's latest stats line (zero before the first)
}

// mgrStat is one of the manager's "stats goroutines=… heap=… fds=…" lines.
type mgrStat struct {
	at         time.Time // when meshchurn read it
	goroutines int
	heap       uint64 // HeapAlloc, garbage included (the farm does not collect first)
	fds        int
	live       int // workers present in the job then (its ranks but the manager)
}

// soak is one run.
type soak struct {
	cfg            config
	stdout, stderr io.Writer
	dir            string
	farm           string
	srv            *signaling.Local
	job            string
	limit          int // ranks the job admits, late ones included
	env            []string
	seats          []string
	late           string
	rng            *mrand.Rand

	exits  chan *proc
	live   []*proc // started and not yet reaped, in start order
	nextID int
	mgr    *proc
	mgrOut *managerOutput

	res result

	departed, declared, lateDeparted atomic.Int64
}

// run runs the soak and returns the exit status: 0 when every check of
// the verdict holds.
func run(ctx context.Context, cfg config, stdout, stderr io.Writer) int {
	stderr = &lockedWriter{w: stderr}
	s := &soak{cfg: cfg, stdout: stdout, stderr: stderr, exits: make(chan *proc),
		rng: mrand.New(mrand.NewPCG(cfg.seed, cfg.seed^0x6d657368636875))}
	defer s.cleanup()
	if err := s.setup(ctx); err != nil {
		fmt.Fprintln(stderr, "meshchurn:", err)
		return 1
	}
	s.soak(ctx)
	r := &s.res
	r.print(stdout)
	if failed := r.verdict(); len(failed) > 0 {
		fmt.Fprintf(stdout, "FAIL: %s\n", strings.Join(failed, "; "))
		return 1
	}
	fmt.Fprintln(stdout, "PASS")
	return 0
}

// setup builds the farm, starts the signaling server and mints the job's
// tokens.
func (s *soak) setup(ctx context.Context) error {
	c := s.cfg
	dir, err := os.MkdirTemp("", "meshchurn-")
	if err != nil {
		return err
	}
	s.dir, s.farm = dir, c.farm
	if s.farm == "" {
		s.farm = filepath.Join(dir, "farm")
		start := time.Now()
		if err := (gobuild.Go{}).Build(ctx, s.farm, farmPkg); err != nil {
			return err
		}
		s.logf("built examples/farm in %v\n", time.Since(start).Round(time.Millisecond))
	}
	// every churn event admits one late rank, and late numbers are never
	// given again: room for twice the events the soak can make
	s.limit = min(signaling.MaxJobSize, 1+c.workers+2*int(c.duration/c.every)+lateMargin)
	s.srv, err = signaling.ListenLocal(signaling.Config{MaxJobSize: s.limit, Departed: s.departure})
	if err != nil {
		return err
	}
	s.job = "meshchurn-" + rand.Text()
	claims := signaling.Claims{
		Job: s.job, Size: 1 + c.workers, Max: s.limit,
		Expires:  time.Now().Add(c.duration + time.Hour).Unix(),
		Settings: map[string]string{meshmpi.SettingNetwork: "loopback", meshmpi.SettingKeepGoing: "1"},
	}
	if s.seats, err = s.srv.MintSeats(claims); err != nil {
		return err
	}
	claims.Late = true
	if s.late, err = s.srv.Mint(claims); err != nil {
		return err
	}
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case meshmpi.EnvSignal, meshmpi.EnvJob, meshmpi.EnvToken, meshmpi.EnvRank, meshmpi.EnvJoinTimeout, meshmpi.EnvTimeout, meshmpi.EnvHost:
			continue
		}
		s.env = append(s.env, kv)
	}
	s.env = append(s.env, meshmpi.EnvSignal+"="+s.srv.URL(), meshmpi.EnvJob+"="+s.job)
	s.res = result{cfg: c, limit: s.limit, seed: c.seed}
	return nil
}

// departure is the server's Departed: it runs under the server's lock.
func (s *soak) departure(d signaling.Departure) {
	s.departed.Add(1)
	if d.Declared {
		s.declared.Add(1)
	}
	if d.Late {
		s.lateDeparted.Add(1)
	}
}

// soak forms the job, churns it for the duration and lets the farm end.
func (s *soak) soak(ctx context.Context) {
	r := &s.res
	c := s.cfg
	defer func() {
		st := s.srv.Stats()
		r.server = st
		r.departed, r.declared, r.lateDeparted = s.departed.Load(), s.declared.Load(), s.lateDeparted.Load()
		r.mgrStats, r.mgrLines = s.mgrOut.snapshot()
	}()

	// the job: the manager and the world's workers, one seat each
	mgrArgs := []string{"-for", c.duration.String(), "-stats", c.sample.String(), "-work", strconv.Itoa(c.work),
		"-wait", lateWait.String(), "-tasks", strconv.Itoa(firstTasks)}
	if err := s.start(managerKind, 0, mgrArgs); err != nil {
		r.problems = append(r.problems, fmt.Sprintf("cannot start the manager: %v", err))
		return
	}
	for w := 1; w <= c.workers; w++ {
		if err := s.start(worldKind, w, []string{"-work", strconv.Itoa(c.work)}); err != nil {
			r.problems = append(r.problems, fmt.Sprintf("cannot start worker %d: %v", w, err))
			return
		}
	}
	started := time.Now()
	formTimer := time.NewTimer(formLimit)
	defer formTimer.Stop()
forming:
	for {
		select {
		case <-s.mgrOut.formed:
			break forming
		case p := <-s.exits:
			s.reap(p)
			r.problems = append(r.problems, fmt.Sprintf("%v ended before the job formed", p))
			return
		case <-formTimer.C:
			r.problems = append(r.problems, fmt.Sprintf("the job did not form within %v", formLimit))
			return
		case <-ctx.Done():
			r.problems = append(r.problems, "interrupted")
			return
		}
	}
	r.formedAt = time.Now()
	s.logf("job %s formed in %v (1+%d ranks, up to %d); churning for %v, every ~%v\n",
		s.job, r.formedAt.Sub(started).Round(time.Millisecond), c.workers, s.limit, c.duration, c.every)

	// churn until the manager's -for is over
	s.sample()
	tick := time.NewTicker(c.sample)
	defer tick.Stop()
	next := time.NewTimer(s.interval())
	defer next.Stop()
	end := time.NewTimer(c.duration - min(endMargin, c.duration/4))
	defer end.Stop()
churning:
	for {
		select {
		case <-next.C:
			s.churn()
			next.Reset(s.interval())
		case <-tick.C:
			s.sample()
		case p := <-s.exits:
			s.reap(p)
			if p == s.mgr {
				r.problems = append(r.problems, fmt.Sprintf("the manager ended %v before its -for was over", time.Until(r.formedAt.Add(c.duration)).Round(time.Second)))
				break churning
			}
		case <-end.C:
			break churning
		case <-ctx.Done():
			r.problems = append(r.problems, "interrupted")
			return
		}
	}
	r.churnEnd = time.Now()
	s.logf("churn over (%d kills, %d joins); waiting for the farm to end\n", r.kills, r.joins)

	// the farm ends by itself: the manager finishes the tasks out and
	// stops its workers; late workers that find no farm exit 0
	drain := time.NewTimer(r.drainLimit())
	defer drain.Stop()
	for len(s.live) > 0 {
		select {
		case p := <-s.exits:
			s.reap(p)
			if p == s.mgr {
				r.mgrEnd = time.Now()
			}
		case <-drain.C:
			for _, p := range s.live {
				r.hung = append(r.hung, p.String())
				_ = p.cmd.Process.Kill()
			}
		case <-ctx.Done():
			r.problems = append(r.problems, "interrupted")
			return
		}
	}
	r.allEnd = time.Now()
}

// interval is the wait before the next churn event: every, ±50%.
func (s *soak) interval() time.Duration {
	return time.Duration(float64(s.cfg.every) * (0.5 + s.rng.Float64()))
}

// churn kills a live worker, if any, and starts a late one.
func (s *soak) churn() {
	r := &s.res
	var workers []*proc
	for _, p := range s.live {
		if p.kind != managerKind && !p.killed {
			workers = append(workers, p)
		}
	}
	if len(workers) > 0 {
		p := workers[s.rng.IntN(len(workers))]
		p.killed = true
		if err := p.cmd.Process.Kill(); err != nil {
			p.killed = false // it ended meanwhile: its exit tells how
		} else {
			r.kills++
			if s.cfg.verbose {
				s.logf("killed %v after %v\n", p, time.Since(p.start).Round(time.Millisecond))
			}
		}
	}
	if r.joins >= s.limit-1-s.cfg.workers {
		if !r.exhausted {
			r.exhausted = true
			s.logf("the job's %d late ranks are used up: no more joins\n", r.joins)
		}
		return
	}
	if err := s.start(lateKind, -1, []string{"-work", strconv.Itoa(s.cfg.work), "-wait", lateWait.String()}); err != nil {
		r.problems = append(r.problems, fmt.Sprintf("cannot start a late worker: %v", err))
		return
	}
	r.joins++
}

// start starts a rank process: rank ≥ 0 takes its seat of the world, a
// late one (rank -1) joins with the late token.
func (s *soak) start(k kind, rank int, args []string) error {
	p := &proc{id: s.nextID, kind: k, rank: rank}
	s.nextID++
	env := s.env[:len(s.env):len(s.env)]
	if rank >= 0 {
		env = append(env, meshmpi.EnvToken+"="+s.seats[rank], meshmpi.EnvRank+"="+strconv.Itoa(rank))
	} else {
		env = append(env, meshmpi.EnvToken+"="+s.late)
	}
	p.cmd = exec.Command(s.farm, args...)
	p.cmd.Env = env
	p.cmd.SysProcAttr = procAttr()
	var out, pr *os.File // the write end the process gets (ours is closed once it started), the manager's read end
	if k == managerKind {
		// the manager's lines are read as they come: its stats are
		// samples, stamped with the time they arrive
		var err error
		if pr, out, err = os.Pipe(); err != nil {
			return err
		}
	} else {
		p.out = filepath.Join(s.dir, strconv.Itoa(p.id)+".out")
		f, err := os.Create(p.out)
		if err != nil {
			return err
		}
		out = f
	}
	p.cmd.Stdout, p.cmd.Stderr = out, out
	err := p.cmd.Start()
	_ = out.Close()
	if err != nil {
		if p.out != "" {
			_ = os.Remove(p.out)
		}
		if pr != nil {
			_ = pr.Close()
		}
		return err
	}
	if pr != nil {
		s.mgrOut = newManagerOutput(s.cfg.verbose, s.stderr, func() int { return s.srv.Stats().Ranks - 1 })
		go s.mgrOut.read(pr)
	}
	p.start = time.Now()
	if k == managerKind {
		s.mgr = p
	}
	s.live = append(s.live, p)
	if s.cfg.verbose {
		s.logf("started %v\n", p)
	}
	go func() {
		p.err = p.cmd.Wait()
		s.exits <- p
	}()
	return nil
}

// reap takes an ended process off the live list and judges its end: a
// process killed by the churn, or one that exited 0, ended as it should.
func (s *soak) reap(p *proc) {
	r := &s.res
	for i, q := range s.live {
		if q == p {
			s.live = append(s.live[:i], s.live[i+1:]...)
			break
		}
	}
	var tail string
	if p.out != "" {
		tail = readTail(p.out)
		_ = os.Remove(p.out)
	}
	ws, _ := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	byUs := p.killed && ws.Signaled() && ws.Signal() == syscall.SIGKILL
	if s.cfg.verbose && !byUs {
		s.logf("%v ended after %v: %v\n", p, time.Since(p.start).Round(time.Millisecond), exitText(p.err))
	}
	switch {
	case p.kind == managerKind:
		s.mgrOut.wait(5 * time.Second)
		r.mgrExited, r.mgrErr = true, p.err
		return
	case byUs:
		return
	case p.err == nil:
		switch {
		case strings.Contains(tail, "the farm is over"):
			r.farmOver++
		case strings.Contains(tail, "no farm to join"):
			r.noFarm++
		}
		return
	}
	r.unexpected++
	if len(r.failures) < keepFailures {
		r.failures = append(r.failures, fmt.Sprintf("%v %s after %v; its output ends:\n%s",
			p, exitText(p.err), time.Since(p.start).Round(time.Millisecond), indent(tail)))
	}
}

// sample looks at meshchurn's own process (the signaling server's) and
// takes the manager's latest stats line.
func (s *soak) sample() {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	st := s.srv.Stats()
	smp := sample{
		at: time.Now(), goroutines: runtime.NumGoroutine(), heap: ms.HeapAlloc, fds: countFDs(),
		conns: st.Conns, ranks: st.Ranks, procs: len(s.live), kills: s.res.kills, joins: s.res.joins,
		mgr: s.mgrOut.latest(),
	}
	s.res.samples = append(s.res.samples, smp)
	if s.cfg.verbose {
		s.logf("sample %s\n", smp.row(s.res.formedAt))
	}
}

// cleanup kills what is still running, reaps it, closes the server and
// removes the temporary directory.
func (s *soak) cleanup() {
	for _, p := range s.live {
		_ = p.cmd.Process.Kill()
	}
	for len(s.live) > 0 {
		s.reap(<-s.exits)
	}
	if s.srv != nil {
		done := make(chan struct{})
		go func() { _ = s.srv.Close(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			s.logf("the signaling server did not close in time\n")
		}
	}
	if s.dir != "" {
		_ = os.RemoveAll(s.dir)
	}
}

// managerOutput reads the manager's output: its stats lines, stamped with
// the time they came and the workers present then, and its other lines.
type managerOutput struct {
	verbose bool
	w       io.Writer
	live    func() int

	formed     chan struct{} // closed at "adding tasks for": the job formed
	formedOnce sync.Once
	done       chan struct{} // closed at the end of its output

	mu    sync.Mutex
	stats []mgrStat
	lines []string // the last keepLines
}

func newManagerOutput(verbose bool, w io.Writer, live func() int) *managerOutput {
	return &managerOutput{verbose: verbose, w: w, live: live, formed: make(chan struct{}), done: make(chan struct{})}
}

func (m *managerOutput) read(r *os.File) {
	defer close(m.done)
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		var st mgrStat
		if n, _ := fmt.Sscanf(line, "stats goroutines=%d heap=%d fds=%d", &st.goroutines, &st.heap, &st.fds); n == 3 {
			st.at, st.live = time.Now(), m.live()
			m.mu.Lock()
			m.stats = append(m.stats, st)
			m.mu.Unlock()
			continue
		}
		if m.verbose {
			fmt.Fprintf(m.w, "%s [0] %s\n", stamp(), line)
		}
		m.mu.Lock()
		if len(m.lines) == keepLines {
			m.lines = append(m.lines[:0], m.lines[1:]...)
		}
		m.lines = append(m.lines, line)
		m.mu.Unlock()
		if strings.HasPrefix(line, "adding tasks for") {
			m.formedOnce.Do(func() { close(m.formed) })
		}
	}
	_, _ = io.Copy(io.Discard, r) // a line too long: the rest goes
}

// wait waits at most d for the end of the output.
func (m *managerOutput) wait(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-m.done:
	case <-t.C:
	}
}

func (m *managerOutput) latest() mgrStat {
	if m == nil {
		return mgrStat{}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.stats) == 0 {
		return mgrStat{}
	}
	return m.stats[len(m.stats)-1]
}

func (m *managerOutput) snapshot() ([]mgrStat, []string) {
	if m == nil {
		return nil, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]mgrStat(nil), m.stats...), append([]string(nil), m.lines...)
}

// countFDs counts this process's open files; -1 where the system cannot
// say.
func countFDs() int {
	for _, dir := range []string{"/proc/self/fd", "/dev/fd"} {
		if ents, err := os.ReadDir(dir); err == nil {
			return len(ents) - 1 // not the directory ReadDir opened
		}
	}
	return -1
}

// readTail is the end of a file, at most tailBytes.
func readTail(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > tailBytes {
		_, _ = f.Seek(fi.Size()-tailBytes, io.SeekStart)
	}
	b, _ := io.ReadAll(io.LimitReader(f, tailBytes))
	return string(b)
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return "\t(nothing)"
	}
	return "\t" + strings.ReplaceAll(s, "\n", "\n\t")
}

// exitText says how a process ended.
func exitText(err error) string {
	if err == nil {
		return "exited 0"
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "was killed by " + ws.Signal().String()
		}
		return fmt.Sprintf("exited %d", ee.ExitCode())
	}
	return err.Error()
}

// lockedWriter serializes writes from meshchurn's goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// logf writes a line of meshchurn's own on standard error.
func (s *soak) logf(format string, args ...any) {
	fmt.Fprintf(s.stderr, "meshchurn: "+stamp()+" "+format, args...)
}

// stamp is the time of day, for the lines -v writes.
func stamp() string { return time.Now().UTC().Format("15:04:05.000") }

// drainLimit bounds the farm's end once churn stopped (see drainBase).
func (r *result) drainLimit() time.Duration { return drainBase + r.cfg.duration }
