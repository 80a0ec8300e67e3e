//go:build linux

package main

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/internal/gobuild"
	"github.com/meshmpi/meshmpi/internal/testbin"
)

var (
	deadWASI = func() func(t *testing.T) string {
		abs, err := filepath.Abs("testdata/deadrank")
		build := testbin.Once(gobuild.Go{GOOS: "wasip1", GOARCH: "wasm"}, abs, "deadrank.wasm")
		return func(t *testing.T) string {
			t.Helper()
			require.NoError(t, err)
			exe, err := build()
			require.NoError(t, err)
			return exe
		}
	}()
)

// signalBound is how long meshrun may take to end a job after SIGTERM:
// --grace for the ranks to act on it, --grace after SIGKILL, and a
// generous margin for a loaded host.
func signalBound(grace time.Duration) time.Duration { return 2*grace + 20*time.Second }

// SIGTERM to a meshrun whose 200 ranks are still starting ends the job
// within the bound, and no rank process is left behind.
func TestSignalWhileLaunching(t *testing.T) {
	if testing.Short() {
		t.Skip("200 rank processes in -short mode")
	}
	meshrun, err := meshrunBinary()
	require.NoError(t, err)
	dead := deadBinary(t)
	tag := "MESHRUN_TEST_TAG=" + rand.Text()
	const grace = 2 * time.Second
	cmd := exec.Command(meshrun, "-n", "200", "--grace", grace.String(), "-x", tag, dead)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { // a failed test leaves nothing running
		_ = cmd.Process.Kill()
		for _, pid := range tagged(tag) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})

	// the signal goes as soon as the first rank process exists
	deadline := time.Now().Add(hangLimit())
	for len(tagged(tag)) == 0 {
		select {
		case err := <-exited:
			t.Fatalf("meshrun ended before a rank started: %v\n%s", err, stderr.String())
		case <-time.After(5 * time.Millisecond): // polling /proc: nothing tells
		}
		require.True(t, time.Now().Before(deadline), "no rank process started")
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	sent := time.Now()
	select {
	case <-exited:
	case <-time.After(signalBound(grace)):
		t.Fatalf("meshrun still running %v after SIGTERM\n%s", signalBound(grace), stderr.String())
	}
	t.Logf("meshrun ended %v after SIGTERM", time.Since(sent).Round(time.Millisecond))
	require.Equal(t, 128+int(syscall.SIGTERM), cmd.ProcessState.ExitCode(), stderr.String())
	require.Contains(t, stderr.String(), "meshrun: terminated: stopping the ranks\n")
	require.Empty(t, tagged(tag), "rank processes left behind")
}

// tagged lists the processes with tag (VAR=value) in their environment.
func tagged(tag string) []int {
	var pids []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		env, err := os.ReadFile(d + "/environ")
		if err != nil {
			continue
		}
		for _, kv := range strings.Split(string(env), "\x00") {
			if kv == tag {
				var pid int
				if _, err := fmt.Sscan(filepath.Base(d), &pid); err == nil {
					pids = append(pids, pid)
				}
				break
			}
		}
	}
	return pids
}

// SIGTERM while meshrun compiles the WASI module (no compilation cache:
// the compile takes seconds) ends meshrun at once, with 128+15.
func TestSignalWhileCompiling(t *testing.T) {
	if testing.Short() {
		t.Skip("a WASI compile in -short mode")
	}
	module := deadWASI(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // a cold cache
	m := start("-n", "2", "--grace", "1s", module)
	m.sigc <- syscall.SIGTERM
	sent := time.Now()
	select {
	case status := <-m.status:
		m.status <- status
	case <-time.After(signalBound(time.Second)):
		t.Fatalf("meshrun still running %v after SIGTERM\n%s", signalBound(time.Second), m.stderr.String())
	}
	t.Logf("meshrun ended %v after SIGTERM", time.Since(sent).Round(time.Millisecond))
	require.Equal(t, 128+int(syscall.SIGTERM), m.wait(t))
	require.Contains(t, m.stderr.String(), "meshrun: terminated: stopping")
	require.NotContains(t, m.stdout.String()+m.stderr.String(), "[0]", "no rank started")
}
