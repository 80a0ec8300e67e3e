//go:build !js && !wasip1

package meshmpi

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// rankMainEnv makes the test binary run as a rank process (rankMain)
// instead of running tests: multi-process tests start copies of it.
const rankMainEnv = "MESHMPI_TEST_RANK_MAIN"

// exitProcFailed is a rank process's exit code for an error that wraps
// ErrProcFailed.
const exitProcFailed = 7

func TestMain(m *testing.M) {
	runFresh()
	if what := os.Getenv(rankMainEnv); what != "" {
		os.Exit(rankMain(what))
	}
	os.Exit(m.Run())
}

// rankMain is a rank process: it joins the job in its environment through
// Init and runs the program what names.
func rankMain(what string) int {
	w, err := Init()
	if err != nil {
		fmt.Fprintln(os.Stderr, "init:", err)
		return 1
	}
	switch what {
	case "telemetry": // telemetry_mesh_test.go
		return telemetryRank(w)
	case "allreduce-forever":
		// print once the loop runs, then reduce until a peer fails
		sum := []int64{0}
		for i := 0; ; i++ {
			if err = Allreduce(w, []int64{1}, sum, Sum); err != nil {
				break
			}
			if i == 100 {
				fmt.Println("running")
			}
		}
	case "deadlock":
		// ranks 0 and 1 wait for each other; the others for rank 0
		peer := 0
		switch w.Rank() {
		case 0:
			peer = 1
		case 1:
			peer = 0
		}
		_, err = Recv(w, make([]byte, 1), peer, 7)
	case "abort":
		// rank 2 aborts once all are in; the others wait for a message
		// that never comes
		if err = Barrier(w); err != nil {
			break
		}
		if w.Rank() == 2 {
			w.Abort(3)
		}
		_, err = Recv(w, make([]byte, 1), AnySource, 0)
	default:
		err = fmt.Errorf("unknown rank program %q", what)
	}
	fmt.Fprintln(os.Stderr, "rank error:", err)
	if errors.Is(err, ErrProcFailed) {
		return exitProcFailed
	}
	return 1
}

// A rank killed in the middle of a collective: the other ranks' collective
// fails with ErrProcFailed instead of hanging, and they exit.
func TestMeshKilledRank(t *testing.T) {
	if testing.Short() {
		t.Skip("WebRTC jobs in -short mode")
	}
	const n, victim = 4, 2
	spec := localJobs(t, nil)(t, n)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // hang guard
	defer cancel()
	var (
		cmds    [n]*exec.Cmd
		running sync.WaitGroup
	)
	running.Add(n)
	for r := range n {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), rankMainEnv+"=allreduce-forever",
			EnvSignal+"="+spec.Signal, EnvJob+"="+spec.Job, EnvToken+"="+spec.Token, fmt.Sprintf("%s=%d", EnvRank, r))
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Start())
		go func() {
			sc := bufio.NewScanner(out)
			once := sync.Once{}
			for sc.Scan() {
				if sc.Text() == "running" {
					once.Do(running.Done)
				}
			}
			once.Do(running.Done) // it ended early: the exit checks say why
		}()
		cmds[r] = cmd
		t.Cleanup(func() {
			if cmd.ProcessState == nil {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
			}
			if t.Failed() {
				t.Logf("rank %d stderr:\n%s", r, stderr.String())
			}
		})
	}
	running.Wait()
	require.NoError(t, cmds[victim].Process.Kill())
	killed := time.Now()
	for r, cmd := range cmds {
		err := cmd.Wait()
		if r == victim {
			continue
		}
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit, "rank %d", r)
		require.Equal(t, exitProcFailed, exit.ExitCode(), "rank %d's error should wrap ErrProcFailed", r)
	}
	t.Logf("every survivor failed with ErrProcFailed %v after the kill", time.Since(killed).Round(time.Millisecond))
}

// A rank process that calls Abort ends the job: it tells the signaling
// server, and every rank, blocked or not, prints who aborted and exits
// with the code.
func TestMeshAbort(t *testing.T) {
	if testing.Short() {
		t.Skip("WebRTC jobs in -short mode")
	}
	for r, p := range startRankProcs(t, 4, "abort") {
		require.Equal(t, 3, p.exitCode(t), "rank %d:\n%s", r, p.stderr.String())
		require.Contains(t, p.stderr.String(), "meshmpi: rank 2 called Abort(3) at mesh_proc_test.go:", "rank %d", r)
		if r != 2 {
			require.Contains(t, p.stderr.String(), fmt.Sprintf(": ending rank %d", r))
		}
	}
}

// A deadlocked job whose ranks run under MESHMPI_TIMEOUT: every rank
// prints what it is blocked in and exits with 124.
func TestMeshRankTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("WebRTC jobs in -short mode")
	}
	want := []string{
		"meshmpi: rank 0 timed out after 2s (MESHMPI_TIMEOUT): Recv(from rank 1, tag 7) on world: waiting for a message from rank 1",
		"meshmpi: rank 1 timed out after 2s (MESHMPI_TIMEOUT): Recv(from rank 0, tag 7) on world: waiting for a message from rank 0",
		"meshmpi: rank 2 timed out after 2s (MESHMPI_TIMEOUT): Recv(from rank 0, tag 7) on world: waiting for a message from rank 0",
	}
	for r, p := range startRankProcs(t, 3, "deadlock", EnvTimeout+"=2s") {
		require.Equal(t, 124, p.exitCode(t), "rank %d:\n%s", r, p.stderr.String())
		require.Contains(t, p.stderr.String(), want[r])
	}
}

// A rank past EnvTimeout exits 124 even when, while it lingers after its
// report, the peer it waits for dies: the failure that peer's exit raises
// in its parked Recv never reaches the program, whose own error exit
// would otherwise win (CI saw exit 7 for a rank of TestMeshRankTimeout
// whose peer timed out first). Rank 1 has no timeout and is killed once
// rank 0 has reported; a kill landing after rank 0's exit proves nothing
// but cannot fail.
func TestMeshTimeoutOutlivesPeerExit(t *testing.T) {
	if testing.Short() {
		t.Skip("WebRTC jobs in -short mode")
	}
	spec := localJobs(t, nil)(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // hang guard
	defer cancel()
	reported := make(chan struct{})
	var cmds [2]*exec.Cmd
	var errs [2]*syncBuffer
	for r := range 2 {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), rankMainEnv+"=deadlock",
			EnvSignal+"="+spec.Signal, EnvJob+"="+spec.Job, EnvToken+"="+spec.Token, fmt.Sprintf("%s=%d", EnvRank, r))
		errs[r] = &syncBuffer{}
		if r == 0 {
			cmd.Env = append(cmd.Env, EnvTimeout+"=1s")
			errs[r].seen, errs[r].signal = "timed out after 1s", reported
		}
		cmd.Stderr = errs[r]
		require.NoError(t, cmd.Start())
		cmds[r] = cmd
	}
	select {
	case <-reported:
	case <-ctx.Done():
		t.Fatalf("rank 0 never reported its timeout:\n%s", errs[0])
	}
	require.NoError(t, cmds[1].Process.Kill())
	_ = cmds[1].Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, cmds[0].Wait(), &exit, "stderr:\n%s", errs[0])
	require.Equal(t, 124, exit.ExitCode(), "rank 0:\n%s", errs[0])
	require.Contains(t, errs[0].String(), "meshmpi: rank 0 timed out after 1s (MESHMPI_TIMEOUT): Recv(from rank 1, tag 7) on world")
}

// syncBuffer is a process's standard error that a test may read while
// the process writes, and that closes signal once seen appears in it.
type syncBuffer struct {
	mu     sync.Mutex
	b      strings.Builder
	seen   string
	signal chan struct{}
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.b.Write(p)
	if b.signal != nil && strings.Contains(b.b.String(), b.seen) {
		close(b.signal)
		b.signal = nil
	}
	return len(p), nil
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// rankProc is a rank process of a job (rankMain) and its standard error.
type rankProc struct {
	cmd    *exec.Cmd
	stderr *strings.Builder
}

// startRankProcs starts n rank processes of a fresh job, each running the
// rank program named program with env added; a minute bounds them.
func startRankProcs(t *testing.T, n int, program string, env ...string) []rankProc {
	spec := localJobs(t, nil)(t, n)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // hang guard
	t.Cleanup(cancel)
	procs := make([]rankProc, n)
	for r := range procs {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
		cmd.Env = append(append(os.Environ(), env...), rankMainEnv+"="+program,
			EnvSignal+"="+spec.Signal, EnvJob+"="+spec.Job, EnvToken+"="+spec.Token, fmt.Sprintf("%s=%d", EnvRank, r))
		procs[r] = rankProc{cmd: cmd, stderr: new(strings.Builder)}
		cmd.Stderr = procs[r].stderr
		require.NoError(t, cmd.Start())
	}
	return procs
}

// exitCode waits for the process, which must exit with a status.
func (p rankProc) exitCode(t *testing.T) int {
	var exit *exec.ExitError
	require.ErrorAs(t, p.cmd.Wait(), &exit, "stderr:\n%s", p.stderr.String())
	return exit.ExitCode()
}
