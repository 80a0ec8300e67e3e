//go:build linux

package examples_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/internal/gobuild"
)

// The fault-tolerant examples as jobs under meshrun --keep-going, native
// rank processes or WASI ranks, with a rank lost either way a rank is
// lost: its function fails (the -fail flag) or its process is killed
// (SIGKILL, once the job is running; native ranks). The survivors finish
// with the right answer.
//
//	go test -v -run UnderMeshrun ./examples

// ftJob is a meshrun job of an example under test.
type ftJob struct {
	cmd            *exec.Cmd
	mu             sync.Mutex
	stdout, stderr strings.Builder
	more           chan struct{} // cap 1: stdout grew
	done           chan struct{}
	status         int
}

// hangGuard stops a job that hangs, so the test fails with its output
// instead of the test binary's timeout; no job comes near it.
const hangGuard = 3 * time.Minute

func startJob(t *testing.T, meshrun string, args ...string) *ftJob {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	t.Cleanup(cancel)
	j := &ftJob{more: make(chan struct{}, 1), done: make(chan struct{})}
	j.cmd = exec.CommandContext(ctx, meshrun, args...)
	out, err := j.cmd.StdoutPipe()
	require.NoError(t, err)
	errp, err := j.cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, j.cmd.Start())
	var wg sync.WaitGroup
	copyLines := func(r io.Reader, to *strings.Builder, notify bool) {
		defer wg.Done()
		s := bufio.NewScanner(r)
		for s.Scan() {
			j.mu.Lock()
			to.WriteString(s.Text() + "\n")
			j.mu.Unlock()
			if notify {
				select {
				case j.more <- struct{}{}:
				default:
				}
			}
		}
	}
	wg.Add(2)
	go copyLines(out, &j.stdout, true)
	go copyLines(errp, &j.stderr, false)
	go func() {
		wg.Wait()
		err := j.cmd.Wait()
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			j.status = ee.ExitCode()
		} else if err != nil {
			j.status = -1
		}
		close(j.done)
	}()
	return j
}

func (j *ftJob) output() (string, string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.stdout.String(), j.stderr.String()
}

// waitStdout waits until the job's output holds s.
func (j *ftJob) waitStdout(t *testing.T, s string) {
	t.Helper()
	for {
		if out, _ := j.output(); strings.Contains(out, s) {
			return
		}
		select {
		case <-j.more:
		case <-j.done:
			out, errs := j.output()
			t.Fatalf("the job ended before %q:\n%s%s", s, out, errs)
		}
	}
}

func (j *ftJob) wait(t *testing.T) int {
	t.Helper()
	<-j.done
	out, errs := j.output()
	t.Logf("meshrun exited with status %d\n%s%s", j.status, out, errs)
	return j.status
}

// rankPID finds the process of rank r among meshrun's children (each
// has the rank in its environment).
func rankPID(t *testing.T, meshrun, r int) int {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*")
	require.NoError(t, err)
	for _, d := range dirs {
		stat, err := os.ReadFile(d + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) < 2 || f[1] != strconv.Itoa(meshrun) {
			continue
		}
		env, err := os.ReadFile(d + "/environ")
		if err != nil {
			continue
		}
		for _, kv := range strings.Split(string(env), "\x00") {
			if kv == fmt.Sprintf("MESHMPI_RANK=%d", r) {
				pid, _ := strconv.Atoi(filepath.Base(d))
				return pid
			}
		}
	}
	t.Fatalf("no process of rank %d under meshrun (pid %d)", r, meshrun)
	return 0
}

// buildFT builds meshrun and the fault-tolerant examples (once per test
// binary: built).
func buildFT(t *testing.T) (meshrun, farm, resilient string) {
	t.Helper()
	return built(t, "meshrun", gobuild.Go{}, "../cmd/meshrun"), built(t, "farm", gobuild.Go{}, "farm"), built(t, "resilient", gobuild.Go{}, "resilient")
}

// failedAlone holds what meshrun says of a job in which one rank failed
// by returning an error under Main: the rank left as a crash would (its
// signaling connection drops with its process, not closed cleanly), so
// meshrun lists it as failed and the job's status is the survivors' (0).
func failedAlone(t *testing.T, status int, stderr string, rank int) {
	t.Helper()
	require.Equal(t, 0, status, "the survivors' status")
	require.Contains(t, stderr, fmt.Sprintf("meshrun: rank %d failed: ", rank))
}

func TestFarmUnderMeshrun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds meshrun and the examples, runs 4-rank jobs")
	}
	meshrun, farm, _ := buildFT(t)
	t.Run("worker_fails", func(t *testing.T) {
		j := startJob(t, meshrun, "--keep-going", "-n", "4", farm, "-tasks", "200", "-work", "20000", "-fail", "2:3")
		status := j.wait(t)
		out, errs := j.output()
		require.Contains(t, out, "[0] ok\n")
		require.Contains(t, out, "[0] failed workers [2], tasks reassigned 1, duplicate results ignored 0\n")
		require.Contains(t, errs, "meshrun: rank 2 exited with status 3 (--keep-going: the other ranks carry on)")
		failedAlone(t, status, errs, 2)
	})
	t.Run("worker_fails_wasi", func(t *testing.T) {
		// a package target: meshrun builds it for wasip1 and runs its
		// ranks under wazero; a WASI rank that exits nonzero has failed
		j := startJob(t, meshrun, "--keep-going", "-n", "4", "./farm", "-tasks", "200", "-work", "20000", "-fail", "2:3")
		require.Equal(t, 0, j.wait(t))
		out, errs := j.output()
		require.Contains(t, out, "[0] ok\n")
		require.Contains(t, out, "[0] failed workers [2], tasks reassigned 1, duplicate results ignored 0\n")
		require.Contains(t, errs, "meshrun: --keep-going: rank(s) 2 failed; the 3 other rank(s) exited with status 0 at worst")
	})
	t.Run("worker_killed", func(t *testing.T) {
		start := time.Now()
		j := startJob(t, meshrun, "--keep-going", "-n", "4", farm, "-tasks", "400", "-work", "200000")
		j.waitStdout(t, "[0] 400 tasks of 200000 hash steps for 3 workers")
		require.NoError(t, syscall.Kill(rankPID(t, j.cmd.Process.Pid, 2), syscall.SIGKILL))
		require.Equal(t, 0, j.wait(t))
		t.Logf("the job took %v", time.Since(start))
		out, errs := j.output()
		require.Contains(t, out, "[0] ok\n")
		require.Contains(t, out, "[0] failed workers [2], tasks reassigned ") // 0 if it died before it asked
		require.Contains(t, errs, "meshrun: rank 2 failed: was killed by signal 9")
	})
	t.Run("workers_join_and_leave", func(t *testing.T) {
		// a job that may grow: two workers join while it runs, and a
		// worker of the world is killed; the farm keeps adding tasks for
		// 8 s, far longer than joining takes
		info := filepath.Join(t.TempDir(), "join.json")
		j := startJob(t, meshrun, "--keep-going", "--max", "8", "--join-info", info, "-n", "3", farm, "-tasks", "64", "-for", "8s", "-work", "200000")
		j.waitStdout(t, "[0] adding tasks for 8s")
		b, err := os.ReadFile(info)
		require.NoError(t, err)
		var urls struct{ Join string }
		require.NoError(t, json.Unmarshal(b, &urls))
		late := startJob(t, meshrun, "join", urls.Join, "-n", "2", "--native", farm, "-work", "200000")
		require.NoError(t, syscall.Kill(rankPID(t, j.cmd.Process.Pid, 2), syscall.SIGKILL))
		require.Equal(t, 0, j.wait(t))
		require.Equal(t, 0, late.wait(t))
		out, errs := j.output()
		require.Contains(t, out, "[0] ok\n")
		require.Contains(t, out, ", 2 late workers: ")
		require.Contains(t, out, "[0] failed workers [2], tasks reassigned ")
		require.Contains(t, errs, "meshrun: rank 2 failed: was killed by signal 9")
	})
	t.Run("manager_killed", func(t *testing.T) {
		j := startJob(t, meshrun, "--keep-going", "-n", "4", farm, "-tasks", "400", "-work", "200000")
		j.waitStdout(t, "[0] 400 tasks of 200000 hash steps for 3 workers")
		require.NoError(t, syscall.Kill(rankPID(t, j.cmd.Process.Pid, 0), syscall.SIGKILL))
		// the workers' rank functions fail too (no manager, no work):
		// under Main each leaves as a failed rank, so every rank failed
		// and the job's status is the worst, the manager's
		require.Equal(t, 137, j.wait(t))
		_, errs := j.output()
		for w := 1; w < 4; w++ {
			require.Contains(t, errs, fmt.Sprintf("[%d] farm: rank %d: the manager (rank 0) failed: ", w, w))
		}
		require.Contains(t, errs, "meshrun: --keep-going: every rank failed")
	})
}

func TestResilientUnderMeshrun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds meshrun and the examples, runs 8-rank jobs")
	}
	meshrun, _, resilient := buildFT(t)
	t.Run("ranks_join_and_one_is_killed", func(t *testing.T) {
		// a job that may grow: a native rank joins, a rank of the job is
		// killed, a WASI rank joins; the leader waits at checkpoints
		// until both joined (-await 2), so the events come in this order
		info := filepath.Join(t.TempDir(), "join.json")
		j := startJob(t, meshrun, "--keep-going", "--max", "8", "--join-info", info, "-n", "6", resilient,
			"-iters", "2000", "-points", "2000", "-every", "100", "-await", "2")
		j.waitStdout(t, "[0] 2000 points, 2000 iterations, a checkpoint every 100, on 6 ranks")
		b, err := os.ReadFile(info)
		require.NoError(t, err)
		var urls struct{ Join string }
		require.NoError(t, json.Unmarshal(b, &urls))
		native := startJob(t, meshrun, "join", urls.Join, "--native", resilient)
		j.waitStdout(t, ": 7 ranks go on\n")
		require.NoError(t, syscall.Kill(rankPID(t, j.cmd.Process.Pid, 3), syscall.SIGKILL))
		j.waitStdout(t, "[0] rank(s) [3] failed: 6 survivors roll back to iteration ")
		wasi := startJob(t, meshrun, "join", urls.Join, "./resilient")
		require.Equal(t, 0, j.wait(t))
		require.Equal(t, 0, native.wait(t))
		require.Equal(t, 0, wasi.wait(t))
		out, errs := j.output()
		require.Contains(t, out, "[0] done on 7 ranks: ranks [3] failed, 1 recoveries\n")
		require.Contains(t, out, "[0] ranks joined while it ran: 2\n")
		require.Contains(t, out, "[0] points that differ from the sequential run: 0 (largest difference 0)\n")
		require.Contains(t, out, "[0] ok\n")
		require.Contains(t, errs, "meshrun: rank 3 failed: was killed by signal 9")
	})
	t.Run("rank_fails", func(t *testing.T) {
		j := startJob(t, meshrun, "--keep-going", "-n", "8", resilient, "-fail", "3:47")
		status := j.wait(t)
		out, errs := j.output()
		require.Contains(t, out, "[0] rank(s) [3] failed: 7 survivors roll back to iteration 40\n")
		require.Contains(t, out, "[0] points that differ from the sequential run: 0 (largest difference 0)\n")
		require.Contains(t, out, "[0] ok\n")
		failedAlone(t, status, errs, 3)
	})
	t.Run("rank_fails_wasi", func(t *testing.T) {
		j := startJob(t, meshrun, "--keep-going", "-n", "8", "./resilient", "-fail", "3:47")
		require.Equal(t, 0, j.wait(t))
		out, errs := j.output()
		require.Contains(t, out, "[0] rank(s) [3] failed: 7 survivors roll back to iteration 40\n")
		require.Contains(t, out, "[0] ok\n")
		require.Contains(t, errs, "meshrun: --keep-going: rank(s) 3 failed; the 7 other rank(s) exited with status 0 at worst")
	})
	t.Run("rank_killed", func(t *testing.T) {
		start := time.Now()
		j := startJob(t, meshrun, "--keep-going", "-n", "8", resilient, "-iters", "2000", "-points", "2000", "-every", "100")
		j.waitStdout(t, "[0] 2000 points, 2000 iterations, a checkpoint every 100, on 8 ranks")
		require.NoError(t, syscall.Kill(rankPID(t, j.cmd.Process.Pid, 3), syscall.SIGKILL))
		require.Equal(t, 0, j.wait(t))
		t.Logf("the job took %v", time.Since(start))
		out, errs := j.output()
		require.Contains(t, out, "[0] rank(s) [3] failed: 7 survivors roll back to iteration ")
		require.Contains(t, out, "[0] points that differ from the sequential run: 0 (largest difference 0)\n")
		require.Contains(t, out, "[0] ok\n")
		require.Contains(t, errs, "meshrun: rank 3 failed: was killed by signal 9")
	})
}
