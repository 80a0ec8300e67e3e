//go:build unix

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/internal/browsertest"
	"github.com/meshmpi/meshmpi/internal/gobuild"
	"github.com/meshmpi/meshmpi/internal/testbin"
	"github.com/meshmpi/meshmpi/signaling"
)

var (
	keepgoingBinary = buildOnce("testdata/keepgoing")
	detectBinary    = buildOnce("testdata/detectrank")
)

// With --keep-going, a rank that crashes (os.Exit(3) without Finalize)
// does not end the job: the others learn of it, finish their work among
// themselves and exit 0, and so does meshrun, which lists the failed rank,
// how it ended and when the job was told. Without the flag the same job
// fails with 3, as before.
func TestKeepGoing(t *testing.T) {
	if testing.Short() {
		t.Skip("a WebRTC job in -short mode")
	}
	for _, tc := range []struct{ name, target string }{
		{"native", ""},
		{"wasi", "./testdata/keepgoing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := tc.target
			if target == "" {
				target = keepgoingBinary(t)
			}
			m := start("-n", "4", "--keep-going", "--grace", "30s", target)
			require.Equal(t, 0, m.wait(t), "stderr:\n%s", m.stderr.String())
			out, stderr := m.stdout.String(), m.stderr.String()
			require.Contains(t, out, "[2] rank 2 crashing\n")
			for _, r := range []int{0, 1, 3} {
				require.Contains(t, out, fmt.Sprintf("[%d] rank %d survived rank 2's failure\n", r, r))
			}
			require.Contains(t, stderr, "meshrun: rank 2 exited with status 3 (--keep-going: the other ranks carry on)\n")
			if tc.target == "" {
				require.Regexp(t, `meshrun: rank 2 failed: exited with status 3; left the job at \d\d:\d\d:\d\d\.\d{3} \(connection lost: its process ended without Finalize`, stderr)
			} else { // its host leaves the job for it
				require.Regexp(t, `meshrun: rank 2 failed: exited with status 3; left the job at \d\d:\d\d:\d\d\.\d{3} \(connection closed\)`, stderr)
			}
			require.Contains(t, stderr, "meshrun: --keep-going: rank(s) 2 failed; the 3 other rank(s) exited with status 0 at worst\n")
			require.NotContains(t, stderr, "the job failed because")
		})
	}
	t.Run("without", func(t *testing.T) {
		m := start("-n", "4", "--grace", "30s", keepgoingBinary(t))
		require.Equal(t, 3, m.wait(t))
		require.Contains(t, m.stderr.String(), "meshrun: rank 2 exited with status 3\n")
		require.NotContains(t, m.stderr.String(), "--keep-going")
	})
}

// --keep-going's exit status is the survivors' worst: a failing program
// (every rank exits 2 after leaving cleanly, here ranks that never join a
// job) fails meshrun with it, and a job where every rank failed exits
// with the worst status of all.
func TestKeepGoingStatus(t *testing.T) {
	job := []string{"--signal", "ws://127.0.0.1:1/ws", "--job", "j", "--token", "t", "--rank", "0", "--keep-going"}
	m := start(append(append([]string{"-n", "3"}, job...), "sh", "-c", `exit $((MESHMPI_RANK + 1))`)...)
	// a job on another server: meshrun sees no departures, so every
	// nonzero status is a failure, and there is no survivor
	require.Equal(t, 3, m.wait(t))
	require.Contains(t, m.stderr.String(), "meshrun: --keep-going: every rank failed\n")
	for r := range 3 {
		require.Contains(t, m.stderr.String(), fmt.Sprintf("meshrun: rank %d failed: exited with status %d\n", r, r+1))
	}
	m = start(append(append([]string{"-n", "3"}, job...), "sh", "-c", `[ "$MESHMPI_RANK" = 1 ] && kill -9 $$; exit 0`)...)
	require.Equal(t, 0, m.wait(t))
	require.Contains(t, m.stderr.String(), "meshrun: rank 1 failed: was killed by signal 9 (killed)\n")
	require.Contains(t, m.stderr.String(), "meshrun: --keep-going: rank(s) 1 failed; the 2 other rank(s) exited with status 0 at worst\n")
}

// detection is one detection run's result: each survivor's latency from
// the moment the test signalled the victim.
type detection struct {
	latencies []time.Duration
}

var detectedRE = regexp.MustCompile(`rank (\d+) detected rank (\d+) at (\d+): (.*)`)

// parseDetections returns the detection times in out, by survivor.
func parseDetections(out string) map[int]time.Time {
	got := map[int]time.Time{}
	for _, m := range detectedRE.FindAllStringSubmatch(out, -1) {
		r, _ := strconv.Atoi(m[1])
		ns, _ := strconv.ParseInt(m[3], 10, 64)
		got[r] = time.Unix(0, ns)
	}
	return got
}

// readyPIDs returns the process ids the ranks printed as ready.
func readyPIDs(out string) map[int]int {
	pids := map[int]int{}
	for _, line := range strings.Split(out, "\n") {
		var label, rank, pid int
		if _, err := fmt.Sscanf(line, "[%d] rank %d pid %d ready", &label, &rank, &pid); err == nil {
			pids[rank] = pid
		}
	}
	return pids
}

// detectNative runs detectrank as 4 native rank processes under meshrun
// --keep-going, signals rank 3's process with sig once every rank is
// ready, and returns how long each survivor took to learn of it. A
// stopped victim is killed by meshrun once the survivors have ended.
func detectNative(t *testing.T, sig syscall.Signal) detection {
	t.Helper()
	m := start("-n", "4", "--keep-going", "--grace", "120s", detectBinary(t), "-victim", "3")
	var pids map[int]int
	m.waitStdout(t, func(out string) bool { pids = readyPIDs(out); return len(pids) == 4 })
	t0 := time.Now()
	require.NoError(t, syscall.Kill(pids[3], sig))
	var got map[int]time.Time
	m.waitStdout(t, func(out string) bool { got = parseDetections(out); return len(got) == 3 })
	require.Equal(t, 0, m.wait(t), "stderr:\n%s", m.stderr.String())
	require.Contains(t, m.stderr.String(), "meshrun: rank 3 failed: ")
	return latencies(t, t0, got)
}

func latencies(t *testing.T, t0 time.Time, got map[int]time.Time) detection {
	t.Helper()
	var d detection
	for r, at := range got {
		require.NotEqual(t, 3, r)
		d.latencies = append(d.latencies, at.Sub(t0))
	}
	return d
}

// detectWASI runs detectrank with every rank under WASI: ranks 0-2 in one
// meshrun (in the test process), rank 3, the victim, in a meshrun process
// of its own (meshrun join) — a WASI rank's process is its host, so
// killing or stopping it is killing or stopping that host. The job is on
// the test's signaling server.
func detectWASI(t *testing.T, sig syscall.Signal) detection {
	t.Helper()
	m, victim := startWASIVictim(t)
	t0 := time.Now()
	require.NoError(t, syscall.Kill(victim.cmd.Process.Pid, sig))
	var got map[int]time.Time
	m.waitStdout(t, func(out string) bool { got = parseDetections(out); return len(got) == 3 })
	require.Equal(t, 0, m.wait(t), "stderr:\n%s", m.stderr.String())
	return latencies(t, t0, got)
}

// wasiVictim is detectrank's rank 3 under WASI in a meshrun of its own.
type wasiVictim struct {
	cmd  *exec.Cmd
	out  notifyBuffer // its standard output and error
	done chan struct{}
	err  error // how cmd ended, once done is closed
	ctx  context.Context
}

// wait waits for the victim's meshrun to end; it fails the test if it
// hangs.
func (v *wasiVictim) wait(t *testing.T) {
	t.Helper()
	select {
	case <-v.done:
	case <-v.ctx.Done():
		t.Fatalf("the victim's meshrun hung:\n%s", v.out.String())
	}
}

// startWASIVictim starts detectWASI's job (survivors with args for
// detectrank) and returns once every rank is ready; the test's end kills
// what is left.
func startWASIVictim(t *testing.T, args ...string) (*meshrunRun, *wasiVictim) {
	t.Helper()
	srv, err := signaling.ListenLocal(signaling.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	job := "detect-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	tok, err := srv.Token(job, 4, map[string]string{meshmpi.SettingNetwork: "loopback"}, time.Hour)
	require.NoError(t, err)
	wasm := detectWASM(t)

	ctx, cancel := context.WithTimeout(context.Background(), hangLimit())
	t.Cleanup(cancel)
	meshrun, err := meshrunBinary()
	require.NoError(t, err)
	v := &wasiVictim{done: make(chan struct{}), ctx: ctx}
	v.cmd = exec.CommandContext(ctx, meshrun, "join", srv.URL(), "--job", job, "--token", tok, "--rank", "3", wasm, "-victim", "3")
	v.out.written = make(chan struct{}, 1)
	v.cmd.Stdout, v.cmd.Stderr = &v.out, &v.out
	require.NoError(t, v.cmd.Start())
	go func() { v.err = v.cmd.Wait(); close(v.done) }()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the victim's meshrun:\n%s", v.out.String())
		}
		_ = v.cmd.Process.Signal(syscall.SIGCONT)
		_ = v.cmd.Process.Kill()
		<-v.done
	})
	m := start(append([]string{"--signal", srv.URL(), "--job", job, "--token", tok, "--rank", "0", "-n", "3", "--keep-going", "--grace", "120s",
		wasm, "-victim", "3"}, args...)...)
	m.waitStdout(t, func(out string) bool { return len(readyPIDs(out)) == 3 })
	for !strings.Contains(v.out.String(), "rank 3 pid") {
		select {
		case <-v.out.written:
		case <-v.done:
			t.Fatalf("the victim's meshrun ended before it was ready (%v):\n%s", v.err, v.out.String())
		case <-ctx.Done():
			t.Fatalf("the victim's meshrun did not get ready:\n%s", v.out.String())
		}
	}
	return m, v
}

// detectWASM builds detectrank for wasip1 once.
var detectWASM = func() func(t *testing.T) string {
	abs, err := filepath.Abs("testdata/detectrank")
	build := testbin.Once(gobuild.Go{GOOS: "wasip1", GOARCH: "wasm"}, abs, "detectrank.wasm")
	return func(t *testing.T) string {
		t.Helper()
		require.NoError(t, err)
		exe, err := build()
		require.NoError(t, err)
		return exe
	}
}()

// Every survivor learns that a rank was killed (SIGKILL) or frozen
// (SIGSTOP), natively, under WASI and in a browser; the detection latencies, from the
// signal to each survivor's failed receive, are logged as p50/p99 over
// the runs (MESHRUN_DETECT_RUNS, default 1 per case), never asserted.
// SIGKILL closes the rank's signaling connection (the server announces
// it at once); SIGSTOP is found by the server's pings (declared failed
// within PingInterval+PingTimeout) or by the survivors' links.
func TestDetectionLatency(t *testing.T) {
	if testing.Short() {
		t.Skip("WebRTC jobs in -short mode")
	}
	runs := 1
	if s := os.Getenv("MESHRUN_DETECT_RUNS"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err)
		runs = n
	}
	for _, target := range []string{"native", "wasi", "browser"} {
		for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGSTOP} {
			t.Run(target+"/"+sig.String(), func(t *testing.T) {
				var all []time.Duration
				for range runs {
					var d detection
					switch target {
					case "native":
						d = detectNative(t, sig)
					case "wasi":
						d = detectWASI(t, sig)
					default:
						d = detectBrowser(t, sig)
					}
					all = append(all, d.latencies...)
				}
				slices.Sort(all)
				t.Logf("detection latency, %s rank, %v, %d runs × 3 survivors: p50 %v, p99 %v, max %v",
					target, sig, runs, pct(all, 50), pct(all, 99), all[len(all)-1])
			})
		}
	}
}

// pct is the p-th percentile of sorted (nearest rank).
func pct(sorted []time.Duration, p int) time.Duration {
	i := (p*len(sorted) + 99) / 100
	return sorted[max(0, min(len(sorted)-1, i-1))].Round(time.Millisecond)
}

// descendants returns the process ids of pid's descendants (from /proc).
func descendants(t *testing.T, pid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	parent := map[int]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// "pid (comm) S ppid …": comm may hold spaces, the state follows the last ')'
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 {
			parent[p], _ = strconv.Atoi(f[1])
		}
	}
	var out []int
	for p := range parent {
		for q := parent[p]; q > 1; q = parent[q] {
			if q == pid {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// detectBrowser runs detectrank with rank 3, the victim, as a browser
// rank (GOOS=js, in headless chromium through cmd/jsrun) and ranks 0-2 as
// native processes under meshrun, on the test's signaling server, and
// signals every process of the victim's browser with sig: SIGKILL is the
// browser gone at once (a crashed or killed browser, a closed laptop's
// lost network), SIGSTOP a frozen one.
func detectBrowser(t *testing.T, sig syscall.Signal) detection {
	t.Helper()
	browsertest.Require(t)
	jsrun, err := jsrunBinary()
	require.NoError(t, err)
	wasm, err := detectJS()
	require.NoError(t, err)
	// the page is jsrun's, on a port of its own
	srv, err := signaling.ListenLocal(signaling.Config{OriginPatterns: []string{"127.0.0.1:*"}})
	require.NoError(t, err)
	defer srv.Close()
	job := "detect-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	tok, err := srv.Token(job, 4, map[string]string{meshmpi.SettingNetwork: "loopback"}, time.Hour)
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), hangLimit())
	defer cancel()
	victim := exec.CommandContext(ctx, jsrun, wasm, "-victim", "3")
	victim.Env = append(os.Environ(), meshmpi.EnvSignal+"="+srv.URL(), meshmpi.EnvJob+"="+job, meshmpi.EnvToken+"="+tok, meshmpi.EnvRank+"=3")
	var vout notifyBuffer
	vout.written = make(chan struct{}, 1)
	victim.Stdout, victim.Stderr = &vout, &vout
	require.NoError(t, victim.Start())
	var browser []int
	defer func() {
		if t.Failed() {
			t.Logf("the browser rank's output:\n%s", vout.String())
		}
		for _, p := range append(browser, descendants(t, victim.Process.Pid)...) {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		_ = victim.Process.Kill()
		_ = victim.Wait()
	}()
	m := start("--signal", srv.URL(), "--job", job, "--token", tok, "--rank", "0", "-n", "3", "--keep-going", "--grace", "120s", detectBinary(t), "-victim", "3")
	m.waitStdout(t, func(out string) bool { return len(readyPIDs(out)) == 3 })
	for !strings.Contains(vout.String(), "rank 3 pid") {
		select {
		case <-vout.written:
		case <-ctx.Done():
			t.Fatalf("the browser rank did not get ready:\n%s", vout.String())
		}
	}
	browser = descendants(t, victim.Process.Pid)
	require.NotEmpty(t, browser)
	t0 := time.Now()
	for _, p := range browser {
		_ = syscall.Kill(p, sig)
	}
	var got map[int]time.Time
	m.waitStdout(t, func(out string) bool { got = parseDetections(out); return len(got) == 3 })
	require.Equal(t, 0, m.wait(t), "stderr:\n%s", m.stderr.String())
	return latencies(t, t0, got)
}

var (
	jsrunBinary = testbin.Once(gobuild.Go{}, mustAbs("../jsrun"), "jsrun")
	detectJS    = testbin.Once(gobuild.Go{GOOS: "js", GOARCH: "wasm"}, mustAbs("testdata/detectrank"), "detectrank-js.wasm")
)

func mustAbs(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		panic(err)
	}
	return abs
}

// A rank frozen (SIGSTOP) long enough to be declared failed, and then
// resumed, does not carry on as a zombie: the server evicted it, and its
// pending receive (from any source) fails with the words that say so, so
// it ends with status 1. meshrun lists it as declared failed.
func TestEvictedRankEnds(t *testing.T) {
	if testing.Short() {
		t.Skip("a WebRTC job in -short mode")
	}
	hold := filepath.Join(t.TempDir(), "hold")
	m := start("-n", "4", "--keep-going", "--grace", "120s", detectBinary(t), "-victim", "3", "-hold", hold)
	var pids map[int]int
	m.waitStdout(t, func(out string) bool { pids = readyPIDs(out); return len(pids) == 4 })
	require.NoError(t, syscall.Kill(pids[3], syscall.SIGSTOP))
	m.waitStdout(t, func(out string) bool { return len(parseDetections(out)) == 3 })
	require.NoError(t, syscall.Kill(pids[3], syscall.SIGCONT))
	m.waitStderr(t, func(out string) bool { return strings.Contains(out, "meshrun: rank 3 exited with status 1") })
	require.NoError(t, os.WriteFile(hold, nil, 0o644))
	require.Equal(t, 0, m.wait(t))
	stderr := m.stderr.String()
	// the rank's process ends as soon as it hears, saying why (fail-stop)
	require.Regexp(t, evictedLine(`\[3\] `), stderr)
	require.Regexp(t, `meshrun: rank 3 failed: exited with status 1; declared failed at \d\d:\d\d:\d\d\.\d{3} \(no answer to pings within `+signaling.DefaultPingTimeout.String()+`\)`, stderr)
}

// A WASI rank frozen long enough to be declared failed, and then
// resumed, ends as a native one does (TestEvictedRankEnds), saying it
// was evicted, where its host used to report every other rank lost to
// it, and a fault-tolerant program went on as a job of one (CI: a
// frozen rank of examples/resilient resumed "1 survivors roll back").
func TestEvictedWASIRankEnds(t *testing.T) {
	if testing.Short() {
		t.Skip("a WebRTC job in -short mode")
	}
	// the survivors end once they detected it (a WASI rank has no files
	// to hold on: -hold is native only); the server keeps the job
	m, v := startWASIVictim(t)
	require.NoError(t, syscall.Kill(v.cmd.Process.Pid, syscall.SIGSTOP))
	m.waitStdout(t, func(out string) bool { return len(parseDetections(out)) == 3 })
	require.Equal(t, 0, m.wait(t), "stderr:\n%s", m.stderr.String())
	require.NoError(t, syscall.Kill(v.cmd.Process.Pid, syscall.SIGCONT))
	v.wait(t)
	var ee *exec.ExitError
	require.ErrorAs(t, v.err, &ee, "the victim's meshrun:\n%s", v.out.String())
	require.Equal(t, 1, ee.ExitCode(), "the victim's meshrun:\n%s", v.out.String())
	out := v.out.String()
	require.Regexp(t, evictedLine(`\[3\] `), out)
	require.Contains(t, out, "rank 3 exited with status 1")
	require.NotContains(t, out, "detectrank:", "the program went on after its eviction")
}

// evictedLine matches what an evicted rank says as it ends, after prefix.
func evictedLine(prefix string) string {
	return prefix + `meshmpi: rank 3 was evicted from the job: process failed: .*rank 3 was declared failed: no answer to pings within ` +
		signaling.DefaultPingTimeout.String() + `.*: ending the process`
}

// waitStderr is waitStdout for meshrun's standard error.
func (m *meshrunRun) waitStderr(t *testing.T, done func(out string) bool) {
	t.Helper()
	for !done(m.stderr.String()) {
		select {
		case <-m.stderr.written:
		case status := <-m.status:
			m.status <- status // for wait
			t.Fatalf("meshrun %q exited with %d before the output the test waits for\nstdout:\n%s\nstderr:\n%s", m.args, status, m.stdout.String(), m.stderr.String())
		case <-m.ctx.Done():
			m.wait(t) // fails the test
		}
	}
}
