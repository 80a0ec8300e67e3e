//go:build cgo && !js && !wasip1

package wasmtime

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/internal/leaktest"
	"github.com/meshmpi/meshmpi/internal/testbin"
	"github.com/meshmpi/meshmpi/wasm/host"
	"github.com/meshmpi/meshmpi/wasm/internal/hosttest"
)

func TestMain(m *testing.M) { testbin.Main(m) }

// runtimes are the WASI runtimes the tests compare: the same guest and
// the same job on each.
var runtimes = []struct {
	name    string
	compile func(ctx context.Context, module []byte, cacheDir string) (hosttest.Program, error)
}{
	{"wasmtime", func(ctx context.Context, module []byte, dir string) (hosttest.Program, error) {
		return Compile(ctx, module, dir)
	}},
	{"wazero", func(ctx context.Context, module []byte, dir string) (hosttest.Program, error) {
		return host.Compile(ctx, module, dir)
	}},
}

// compile compiles the guest for runtime i.
func compile(t testing.TB, i int) hosttest.Program {
	return hosttest.Compile(t, runtimes[i].name, runtimes[i].compile)
}

func wasmtimeProgram(t testing.TB) hosttest.Program { return compile(t, 0) }

// TestMixedJob runs hosttest.MixedJob, two guests and two native ranks
// running the suite, on each runtime.
func TestMixedJob(t *testing.T) {
	for i, rt := range runtimes {
		t.Run(rt.name, func(t *testing.T) {
			leaktest.Check(t)
			hosttest.MixedJob(t, compile(t, i))
		})
	}
}

// TestAllGuests: every rank of the job is a wasmtime guest, so every
// pair of links is relayed by a host on both ends.
func TestAllGuests(t *testing.T) {
	leaktest.Check(t)
	p := wasmtimeProgram(t)
	suite := []string{"-mode", "suite"}
	out := hosttest.RunJob(t, p, 3, map[int][]string{0: suite, 1: suite, 2: suite}, nil)
	for r, o := range out {
		require.NoError(t, o.Err, "rank %d", r)
		require.Zero(t, o.Status, "rank %d's exit status", r)
		require.Contains(t, o.Output, fmt.Sprintf("rank %d done", r))
	}
}

// TestTrappingGuest: a wasmtime guest that traps fails its job's
// receives from it with ErrProcFailed.
func TestTrappingGuest(t *testing.T) {
	leaktest.Check(t)
	hosttest.TrappingGuest(t, wasmtimeProgram(t))
}

// TestExitStatus: a guest that exits without joining a job reports its
// status and its output, and the host's relay ends quietly.
func TestExitStatus(t *testing.T) {
	leaktest.Check(t)
	p := wasmtimeProgram(t)
	w := &hosttest.LogWriter{T: t}
	ctx, cancel := context.WithTimeout(context.Background(), hosttest.JobLimit)
	defer cancel()
	status, err := p.Run(ctx, host.Rank{Job: hosttest.Job(t, 1), Name: "rank", Args: []string{"-mode", "exit"}, Stdout: w})
	require.NoError(t, err)
	require.Equal(t, 3, status)
	require.Equal(t, "exiting with 3\n", w.String())
}

// TestStop: a guest waiting for a job that never fills stops, trapping,
// when its context ends; the host leaves the job for it.
func TestStop(t *testing.T) {
	leaktest.Check(t)
	p := wasmtimeProgram(t)
	job := hosttest.Job(t, 2) // the second rank never comes
	ctx, cancel := context.WithCancelCause(context.Background())
	stopped := fmt.Errorf("the test stopped the rank")
	w := &hosttest.LogWriter{T: t}
	// the guest prints nothing before it joins, so stop it once the
	// server has its join: the job's other seat stays empty
	go func() {
		time.Sleep(500 * time.Millisecond)
		cancel(stopped)
	}()
	status, err := p.Run(ctx, host.Rank{Job: job, Name: "rank", Args: []string{"-mode", "suite"}, Stdout: w, Stderr: w})
	require.Equal(t, host.ExitTrap, status)
	require.ErrorIs(t, err, stopped)
}
