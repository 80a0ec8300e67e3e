//go:build cgo && !js && !wasip1

package wasmtime

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/internal/leaktest"
	"github.com/meshmpi/meshmpi/wasm/host"
	"github.com/meshmpi/meshmpi/wasm/internal/hosttest"
	"github.com/meshmpi/meshmpi/wasm/internal/ranktest"
)

// testDir holds the guest the tests build and the runtimes' caches, once
// per test binary.
var testDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "wasm-wasmtime-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var buildGuest = sync.OnceValues(func() ([]byte, error) { return hosttest.BuildGuest(testDir) })

// program is a compiled guest of one runtime.
type program interface {
	hosttest.Runner
	Close(context.Context) error
}

// runtimes are the WASI runtimes the tests compare: the same guest and
// the same job on each.
var runtimes = []struct {
	name    string
	compile func(ctx context.Context, module []byte, cacheDir string) (program, error)
}{
	{"wasmtime", func(ctx context.Context, module []byte, dir string) (program, error) {
		return Compile(ctx, module, dir)
	}},
	{"wazero", func(ctx context.Context, module []byte, dir string) (program, error) {
		return host.Compile(ctx, module, dir)
	}},
}

// compile compiles the guest for runtime i; the caches make every compile
// after the first one quick.
func compile(t testing.TB, i int) program {
	t.Helper()
	module, err := buildGuest()
	require.NoError(t, err)
	rt := runtimes[i]
	p, err := rt.compile(context.Background(), module, filepath.Join(testDir, "cache-"+rt.name))
	require.NoError(t, err)
	t.Cleanup(func() { p.Close(context.Background()) })
	return p
}

func wasmtimeProgram(t testing.TB) program { return compile(t, 0) }

// TestMixedJob runs the suite (point-to-point, progress while waiting,
// the collective subset, each checked against a sequential reference) in
// a job of two WASI guests and two native ranks, on each runtime.
func TestMixedJob(t *testing.T) {
	for i, rt := range runtimes {
		t.Run(rt.name, func(t *testing.T) {
			leaktest.Check(t)
			p := compile(t, i)
			suite := []string{"-mode", "suite"}
			out := hosttest.RunJob(t, p, 4, map[int][]string{0: suite, 2: suite}, ranktest.Suite)
			for r, o := range out {
				require.NoError(t, o.Err, "rank %d", r)
				require.NoError(t, o.Finalize, "rank %d's Finalize", r)
				require.Zero(t, o.Status, "rank %d's exit status", r)
			}
			require.Contains(t, out[0].Output, "rank 0 done")
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

func TestTrappingGuest(t *testing.T) {
	leaktest.Check(t)
	p := wasmtimeProgram(t)
	// rank 0 traps after a barrier; the other guest and the native ranks
	// must see ErrProcFailed for a receive from it
	out := hosttest.RunJob(t, p, 4, map[int][]string{0: {"-mode", "trap"}, 1: {"-mode", "peerfail"}}, func(w *meshmpi.Comm) error {
		return ranktest.PeerFails(w, 0)
	})
	require.Equal(t, host.ExitTrap, out[0].Status, "the trapping rank's status")
	require.ErrorContains(t, out[0].Err, "trapped")
	require.Contains(t, out[0].Output, "trapping")
	for r := 1; r < 4; r++ {
		require.NoError(t, out[r].Err, "rank %d", r)
		require.Zero(t, out[r].Status, "rank %d's exit status", r)
		if err := out[r].Finalize; err != nil { // its barrier may meet the dead rank
			require.ErrorIs(t, err, meshmpi.ErrProcFailed, "rank %d's Finalize", r)
		}
	}
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
