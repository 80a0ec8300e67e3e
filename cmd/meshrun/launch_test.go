//go:build unix

package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/internal/lockedbuf"
	"github.com/meshmpi/meshmpi/signaling"
)

// hangLimit bounds every meshrun a test starts: one still running then has
// hung, and the test stops it and fails. It is generous (a WASI job's
// meshrun compiles its module in the test process, which the race
// detector slows about tenfold and a loaded machine more still; a job
// that ends sooner ends the wait sooner), and it ends before the test
// binary's own limit (go test -timeout, counted from the binary's start,
// less a margin for the report): a hang then fails its own test, with
// the job's output, instead of the whole binary with a goroutine dump
// that names no test.
func hangLimit() time.Duration {
	const margin, most = 30 * time.Second, 8 * time.Minute
	f := flag.Lookup("test.timeout")
	if f == nil {
		return most
	}
	d, err := time.ParseDuration(f.Value.String())
	if err != nil || d <= 0 {
		return most
	}
	return min(most, max(time.Until(binaryStart.Add(d))-margin, margin))
}

// binaryStart is when the test binary started, roughly: go test's
// -timeout counts from then.
var binaryStart = time.Now()

// meshrunRun is one meshrun running in the test process.
type meshrunRun struct {
	args           []string
	sigc           chan os.Signal // what meshrun receives as signals
	reports        chan os.Signal // SIGQUIT: a hang report
	stdout, stderr notifyBuffer
	status         chan int
	limit          time.Duration   // hangLimit when it started
	ctx            context.Context // ends at the limit
	cancel         context.CancelFunc
}

// start runs meshrun with args in a goroutine.
func start(args ...string) *meshrunRun {
	m := &meshrunRun{args: args, sigc: make(chan os.Signal, 2), reports: make(chan os.Signal, 1), status: make(chan int, 1)}
	m.stdout.written = make(chan struct{}, 1)
	m.stderr.written = make(chan struct{}, 1)
	m.limit = hangLimit()
	m.ctx, m.cancel = context.WithTimeout(context.Background(), m.limit)
	go func() { m.status <- run(args, &m.stdout, &m.stderr, m.sigc, m.reports) }()
	return m
}

// notifyBuffer is a buffer that says when it was written to.
type notifyBuffer struct {
	lockedbuf.Buffer
	written chan struct{} // cap 1: a Write since the last receive
}

func (b *notifyBuffer) Write(p []byte) (int, error) {
	n, err := b.Buffer.Write(p)
	select {
	case b.written <- struct{}{}:
	default:
	}
	return n, err
}

// waitStdout waits until meshrun's standard output satisfies done. It
// fails the test if meshrun exits first or hangs.
func (m *meshrunRun) waitStdout(t *testing.T, done func(out string) bool) {
	t.Helper()
	for !done(m.stdout.String()) {
		select {
		case <-m.stdout.written:
		case status := <-m.status:
			m.status <- status // for wait
			t.Fatalf("meshrun %q exited with %d before the output the test waits for\nstdout:\n%s\nstderr:\n%s", m.args, status, m.stdout.String(), m.stderr.String())
		case <-m.ctx.Done():
			m.wait(t) // fails the test
		}
	}
}

// wait returns meshrun's exit status. A meshrun still running at the hang
// limit gets a SIGTERM, to stop its ranks, and fails the test.
func (m *meshrunRun) wait(t *testing.T) int {
	t.Helper()
	defer m.cancel()
	select {
	case status := <-m.status:
		t.Logf("meshrun %q: status %d\nstdout:\n%s\nstderr:\n%s", m.args, status, m.stdout.String(), m.stderr.String())
		return status
	case <-m.ctx.Done():
	}
	m.sigc <- os.Kill // any signal: meshrun stops the ranks
	select {
	case <-m.status:
	case <-time.After(30 * time.Second):
	}
	t.Fatalf("meshrun %q hung: still running after %v\nstdout:\n%s\nstderr:\n%s", m.args, m.limit, m.stdout.String(), m.stderr.String())
	return 0
}

// The real thing: the pi example as 4 rank processes joined over WebRTC on
// loopback, built by meshrun from its package path.
func TestRunPi(t *testing.T) {
	if testing.Short() {
		t.Skip("go build and a WebRTC job in -short mode")
	}
	piBinary(t) // warms the build cache for the go build in meshrun
	require.Contains(t, runInModule(t, "-n", "4", "./examples/pi", "-steps", "1000000"), "[0] pi ≈")
}

// runInModule runs meshrun with args in the module's root, where the
// examples are, checks that it succeeds with nothing on standard error,
// and returns its standard output.
func runInModule(t *testing.T, args ...string) string {
	t.Helper()
	t.Chdir("../..")
	m := start(args...)
	require.Equal(t, 0, m.wait(t))
	require.Empty(t, m.stderr.String())
	return m.stdout.String()
}

// Rank 2 dies with status 3 while the others wait for it in an Allreduce:
// they fail on their own with ErrProcFailed, within the long grace period,
// and meshrun exits with the worst status, 3.
func TestFailingRank(t *testing.T) {
	if testing.Short() {
		t.Skip("a WebRTC job in -short mode")
	}
	checkFailrank(t, start("-n", "4", "--grace", "30s", failrankBinary(t)))
}

// A rank that calls Abort(5) ends the job: it says so, the others end at
// once — told by the server, they say who aborted and exit with 5 (a rank
// that sees the aborter's links drop before the notice arrives fails with
// ErrProcFailed instead) — and meshrun exits with 5, with no grace period
// waited out.
func TestAbortRank(t *testing.T) {
	if testing.Short() {
		t.Skip("a WebRTC job in -short mode")
	}
	checkAbortrank(t, start("-n", "3", "--grace", "60s", abortBinary(t)))
}

func checkAbortrank(t *testing.T, m *meshrunRun) {
	t.Helper()
	require.Equal(t, 5, m.wait(t), "stderr:\n%s", m.stderr.String())
	stderr := m.stderr.String()
	require.Regexp(t, `\[1\] meshmpi: rank 1 called Abort\(5\) at main\.go:\d+\n`, stderr)
	told := 0
	for _, r := range []int{0, 2} {
		ending := regexp.MustCompile(fmt.Sprintf(`\[%d\] meshmpi: rank 1 called Abort\(5\) at main\.go:\d+: ending rank %d\n`, r, r))
		if ending.MatchString(stderr) {
			told++
			continue
		}
		require.Regexp(t, fmt.Sprintf(`\[%d\] abortrank: Abort did not end this rank: .*process failed`, r), stderr)
	}
	require.Positive(t, told, "no rank was told of the abort before the aborter's links dropped")
}

// checkFailrank checks how a meshrun of failrank on 4 ranks ended: rank 2
// crashed with status 3, the others failed by themselves with
// ErrProcFailed, and meshrun exited with 3.
func checkFailrank(t *testing.T, m *meshrunRun) {
	t.Helper()
	require.Equal(t, 3, m.wait(t))
	require.Contains(t, m.stdout.String(), "[2] rank 2 crashing\n")
	stderr := m.stderr.String()
	require.Contains(t, stderr, "meshrun: rank 2 exited with status 3\n")
	for _, r := range []int{0, 1, 3} {
		require.Contains(t, stderr, fmt.Sprintf("[%d] failrank: a peer failed:", r), "rank %d should fail by itself with ErrProcFailed", r)
	}
}

// Two meshrun joins make up a 2-rank job on a server of the test's.
func TestJoin(t *testing.T) {
	if testing.Short() {
		t.Skip("a WebRTC job in -short mode")
	}
	srv, err := signaling.ListenLocal(signaling.Config{})
	require.NoError(t, err)
	defer srv.Close()
	const job = "meshrun-join-test"
	token, err := srv.Token(job, 2, map[string]string{meshmpi.SettingNetwork: "loopback"}, time.Minute)
	require.NoError(t, err)
	pi := piBinary(t)

	var ms []*meshrunRun
	for r := range 2 {
		ms = append(ms, start("join", srv.URL(), "--job", job, "--token", token, "--rank", strconv.Itoa(r), pi, "-steps", "100000"))
	}
	for r, m := range ms {
		require.Equal(t, 0, m.wait(t), "rank %d", r)
	}
	require.Contains(t, ms[0].stdout.String(), "[0] pi ≈")
	require.Empty(t, ms[1].stdout.String())
}

// -x/--env sets variables in every rank's environment, as Open MPI's -x:
// VAR=value, or VAR for meshrun's own value; the job's are refused.
func TestRankEnvFlag(t *testing.T) {
	t.Setenv("MESHRUN_TEST_OWN", "mine")
	job := []string{"--signal", "ws://127.0.0.1:1/ws", "--job", "j", "--token", "t"}
	args := append([]string{"-n", "2", "-x", "GREETING=hello world", "--env", "MESHRUN_TEST_OWN", "-x", "LANG=C.UTF-8"}, job...)
	m := start(append(args, "sh", "-c", `echo "greeting=$GREETING own=$MESHRUN_TEST_OWN lang=$LANG"`)...)
	require.Equal(t, 0, m.wait(t), m.stderr.String())
	for _, i := range []int{0, 1} {
		require.Contains(t, m.stdout.String(), fmt.Sprintf("[join %d] greeting=hello world own=mine lang=C.UTF-8\n", i))
	}
	m = start("-n", "1", "-x", meshmpi.EnvToken+"=stolen", "sh", "-c", "true")
	require.Equal(t, exitUsage, m.wait(t))
	require.Contains(t, m.stderr.String(), "meshrun sets it for each rank")
}

// Ranks get the job in their environment, and not one meshrun inherited;
// their labels are their ranks, or ?i when the server picks them.
func TestRankEnvironment(t *testing.T) {
	t.Setenv(meshmpi.EnvRank, "9")
	t.Setenv(meshmpi.EnvJoinTimeout, "5s")
	script := `echo "rank=$MESHMPI_RANK job=$MESHMPI_JOB token=$MESHMPI_TOKEN signal=$MESHMPI_SIGNAL timeout=$MESHMPI_JOIN_TIMEOUT"`
	job := []string{"--signal", "ws://127.0.0.1:1/ws", "--job", "j", "--token", "t"}

	m := start(append(append([]string{"-n", "2", "--rank", "5"}, job...), "sh", "-c", script)...)
	require.Equal(t, 0, m.wait(t))
	for _, r := range []int{5, 6} {
		require.Contains(t, m.stdout.String(), fmt.Sprintf("[%d] rank=%d job=j token=t signal=ws://127.0.0.1:1/ws timeout=5s\n", r, r))
	}

	m = start(append(append([]string{"-n", "2", "--join-timeout", "1m"}, job...), "sh", "-c", script)...)
	require.Equal(t, 0, m.wait(t))
	for _, i := range []int{0, 1} {
		require.Contains(t, m.stdout.String(), fmt.Sprintf("[join %d] rank= job=j token=t signal=ws://127.0.0.1:1/ws timeout=1m0s\n", i))
	}
}

// Statuses: the worst one wins; a rank killed by a signal counts 128+n.
func TestExitStatus(t *testing.T) {
	m := start("-n", "3", "sh", "-c", `printf "no newline"; exit $MESHMPI_RANK`)
	require.Equal(t, 2, m.wait(t))
	for r := range 3 {
		require.Contains(t, m.stdout.String(), fmt.Sprintf("[%d] no newline\n", r))
	}
	for r := 1; r <= 2; r++ { // every rank that failed on its own, in any order
		require.Contains(t, m.stderr.String(), fmt.Sprintf("meshrun: rank %d exited with status %d\n", r, r))
	}
	require.NotContains(t, m.stderr.String(), "rank 0 exited")

	m = start("-n", "2", "sh", "-c", `kill -9 $$`)
	require.Equal(t, 128+9, m.wait(t))
	require.Contains(t, m.stderr.String(), "killed by signal 9")
}

// A rank that cannot start fails the job with 127.
func TestRankCannotStart(t *testing.T) {
	garbage := filepath.Join(t.TempDir(), "garbage")
	require.NoError(t, os.WriteFile(garbage, []byte{0, 1, 2, 3}, 0o755))
	m := start("-n", "2", garbage)
	require.Equal(t, exitNoStart, m.wait(t))
	require.Contains(t, m.stderr.String(), "meshrun: rank 0: cannot start")
}

// A deadlocked job under --timeout: every rank, native or WASI, says
// what it is blocked in, in MPI terms, and exits with 124, and so does
// meshrun.
func TestTimeoutReportsDeadlock(t *testing.T) {
	if testing.Short() {
		t.Skip("WebRTC jobs in -short mode")
	}
	for _, tc := range []struct{ name, target string }{
		{"native", ""},
		{"wasi", "./testdata/deadrank"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := tc.target
			if target == "" {
				target = deadBinary(t)
			}
			m := start("-n", "3", "--timeout", "3s", target)
			require.Equal(t, exitTimeout, m.wait(t), "stderr:\n%s", m.stderr.String())
			for r := range 3 {
				left := (r + 2) % 3
				require.Contains(t, m.stderr.String(), fmt.Sprintf("[%d] meshmpi: rank %d timed out after 3s (MESHMPI_TIMEOUT): Recv(from rank %d, tag 7) on world: waiting for a message from rank %d\n", r, r, left, left))
			}
		})
	}
}

// Ranks that ignore SIGTERM outlive --timeout: meshrun kills them and exits
// with 124.
func TestTimeout(t *testing.T) {
	m := start("-n", "2", "--timeout", "500ms", "--grace", "100ms", "sh", "-c", `trap "" TERM; echo up; sleep 100`)
	require.Equal(t, exitTimeout, m.wait(t))
	require.Contains(t, m.stderr.String(), "did not end within --timeout 500ms")
}

// A signal to meshrun stops the ranks and sets the exit status.
func TestInterrupt(t *testing.T) {
	m := start("-n", "3", "--grace", "100ms", "sleep", "100")
	m.sigc <- os.Interrupt
	require.Equal(t, 130, m.wait(t))
	require.Contains(t, m.stderr.String(), "meshrun: interrupt: stopping the ranks\n")
	require.False(t, strings.Contains(m.stderr.String(), "exited with"), "ranks meshrun stopped are not failures")
}

func TestRunWASI(t *testing.T) { runWASI(t, "") }

// runWASI runs WASI ranks under runtime (--runtime; "" for the default,
// wazero) inside meshrun, each
// its own member of the WebRTC mesh: the pi example on 4 guests; a mixed
// job, ranks 0 and 1 guests and 2 and 3 native processes; and failrank
// with every rank a guest, whose exit status is the rank's while the
// other guests fail by themselves.
func runWASI(t *testing.T, runtime string) {
	if testing.Short() {
		t.Skip("go build, a WASI runtime and a WebRTC job in -short mode")
	}
	var rt []string
	if runtime != "" {
		rt = []string{"--runtime", runtime}
	}
	t.Run("pi", func(t *testing.T) {
		out := runInModule(t, append(rt, "-n", "4", "./examples/pi", "-steps", "1000000")...)
		require.Contains(t, out, "[0] pi ≈")
		require.Contains(t, out, "on 4 ranks")
	})
	t.Run("mixed", func(t *testing.T) {
		runInModule(t, append(rt, "-n", "4", "--wasi", "2", "./examples/allreduce")...)
	})
	t.Run("failrank", func(t *testing.T) {
		checkFailrank(t, start(append(rt, "-n", "4", "--grace", "30s", "./testdata/failrank")...))
	})
	t.Run("abortrank", func(t *testing.T) {
		checkAbortrank(t, start(append(rt, "-n", "3", "--grace", "60s", "./testdata/abortrank")...))
	})
}

// A guest that does not build for wasip1 is a usage error that says so.
func TestWASIBuildFails(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\nfunc main() { undefined() }\n"), 0o644))
	m := start("-n", "1", dir)
	require.Equal(t, exitUsage, m.wait(t))
	require.Contains(t, m.stderr.String(), "GOOS=wasip1 GOARCH=wasm go build")
}

// A rank stopped by SIGSTOP is the cause of the job's failure, not the
// ranks that lose it: meshrun names it at once and blames it for their
// failures. Its peers find it frozen by themselves (ICE's consent checks,
// or the server's pings, within --grace), and once they have ended
// meshrun kills it without waiting out --grace: nothing else would. (Had
// they not ended by --grace, meshrun would have killed it then, so that
// they saw it leave.)
func TestStoppedRank(t *testing.T) {
	if testing.Short() {
		t.Skip("a WebRTC job in -short mode")
	}
	m := start("-n", "4", "--grace", "40s", looprankBinary(t))
	pids := map[int]int{}
	m.waitStdout(t, func(out string) bool {
		for _, line := range strings.Split(out, "\n") {
			var label, rank, pid int
			if _, err := fmt.Sscanf(line, "[%d] rank %d pid %d running", &label, &rank, &pid); err == nil {
				pids[rank] = pid
			}
		}
		return len(pids) == 4
	})
	require.NoError(t, syscall.Kill(pids[3], syscall.SIGSTOP))
	require.Equal(t, 128+9, m.wait(t))
	stderr := m.stderr.String()
	require.Contains(t, stderr, "meshrun: rank 3 stopped responding: its process is stopped by a signal")
	require.Contains(t, stderr, "meshrun: rank 3 stopped responding; meshrun killed it\n")
	require.Contains(t, stderr, "meshrun: the job failed because rank 3 stopped responding\n")
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "meshrun: rank") && strings.Contains(line, "exited with status") {
			require.Contains(t, line, "after rank 3 stopped responding", "a survivor's failure blamed on it")
		}
	}
	for _, r := range []int{0, 1, 2} {
		require.Contains(t, stderr, fmt.Sprintf("[%d] looprank: a peer failed:", r), "rank %d should fail by itself with ErrProcFailed", r)
	}
}

// A rank that dies before it reached the signaling server fails the job
// for the others at once (meshrun takes its seat and leaves it), instead
// of leaving them waiting until their join timeout: they fail by
// themselves well within the long grace period.
func TestRankDiesBeforeJoining(t *testing.T) {
	if testing.Short() {
		t.Skip("a WebRTC job in -short mode")
	}
	m := start("-n", "4", "--grace", "60s", "--join-timeout", "10m", earlyBinary(t))
	require.Equal(t, 3, m.wait(t))
	stderr := m.stderr.String()
	require.Contains(t, stderr, "meshrun: rank 2 exited with status 3\n")
	for _, r := range []int{0, 1, 3} {
		require.Contains(t, stderr, fmt.Sprintf("[%d] earlyexit: init:", r), "rank %d should fail by itself", r)
		require.Contains(t, stderr, "rank 2 left before the job formed")
	}
}

// A rank stopped the moment it starts, before it could join, is found
// too: its only SIGCHLD comes at once, and meshrun listens for it before
// it starts the first rank. It is named and killed after --grace, which
// fails the job for the others (a seat left before the job formed)
// instead of leaving them in their join timeout. (meshfault found a
// native rank frozen 1 ms after its start that meshrun never noticed.)
func TestRankStoppedAtStart(t *testing.T) {
	if testing.Short() {
		t.Skip("a WebRTC job in -short mode")
	}
	m := start("-n", "3", "--grace", "1s", "--join-timeout", "10m", "sh", "-c",
		`if [ "$MESHMPI_RANK" = 0 ]; then kill -STOP $$; fi; exec `+strconv.Quote(looprankBinary(t)))
	m.wait(t)
	stderr := m.stderr.String()
	require.Contains(t, stderr, "meshrun: rank 0 stopped responding: its process is stopped by a signal")
	require.Contains(t, stderr, "meshrun: the job failed because rank 0 stopped responding\n")
	for _, r := range []int{1, 2} {
		require.Contains(t, stderr, fmt.Sprintf("[%d] looprank:", r), "rank %d should fail by itself", r)
	}
}
