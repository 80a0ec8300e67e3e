//go:build !js && !wasip1

package host

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/internal/leaktest"
	"github.com/meshmpi/meshmpi/signaling"
	"github.com/meshmpi/meshmpi/wasm/internal/ranktest"
)

// testDir holds what the tests build and wazero's compilation cache, once
// per test binary.
var testDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "wasm-host-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildGuest builds testdata/rank for wasip1, once.
var buildGuest = sync.OnceValues(func() ([]byte, error) {
	out := filepath.Join(testDir, "rank.wasm")
	cmd := exec.Command("go", "build", "-o", out, "./testdata/rank")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build the guest: %v\n%s", err, b)
	}
	return os.ReadFile(out)
})

// program compiles the guest; the file cache makes every compile after
// the first one quick.
func program(t *testing.T) *Program {
	t.Helper()
	module, err := buildGuest()
	require.NoError(t, err)
	p, err := Compile(context.Background(), module, filepath.Join(testDir, "cache"))
	require.NoError(t, err)
	t.Cleanup(func() { p.Close(context.Background()) })
	return p
}

// testJob starts a signaling server with a job of n ranks on loopback.
func testJob(t testing.TB, n int) Job {
	t.Helper()
	srv, err := signaling.ListenLocal(signaling.Config{MaxJobSize: n})
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	id := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, t.Name())
	token, err := srv.Token(id, n, map[string]string{meshmpi.SettingNetwork: "loopback"}, time.Hour)
	require.NoError(t, err)
	return Job{Signal: srv.URL(), ID: id, Token: token, JoinTimeout: time.Minute}
}

// logWriter sends a guest's output to the test log, line by line.
type logWriter struct {
	t      *testing.T
	prefix string
	mu     sync.Mutex
	buf    bytes.Buffer
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for {
		line, err := w.buf.ReadString('\n')
		if err != nil {
			w.buf.WriteString(line)
			return len(p), nil
		}
		w.t.Log(w.prefix + strings.TrimSuffix(line, "\n"))
	}
}

// outcome is how one rank of a test job ended.
type outcome struct {
	status   int // wazero ranks: exit status
	err      error
	finalize error // native ranks: what Finalize returned
}

// runJob runs a job whose ranks in wasi run as wazero guests with their
// arguments and the others as native ranks (goroutines of the test)
// running native; it returns every rank's outcome.
func runJob(t *testing.T, p *Program, n int, wasi map[int][]string, native func(*meshmpi.Comm) error) []outcome {
	t.Helper()
	job := testJob(t, n)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out := make([]outcome, n)
	var wg sync.WaitGroup
	for r := range n {
		if args, ok := wasi[r]; ok {
			wg.Go(func() {
				j := job
				j.Rank = r
				w := &logWriter{t: t, prefix: "[" + strconv.Itoa(r) + "] "}
				out[r].status, out[r].err = p.Run(ctx, Rank{Job: j, Name: "rank", Args: args, Stdout: w, Stderr: w})
				t.Logf("rank %d ended: %d %v", r, out[r].status, out[r].err)
			})
			continue
		}
		wg.Go(func() {
			s, err := meshmpi.Join(ctx, meshmpi.JobSpec{Signal: job.Signal, Job: job.ID, Token: job.Token, Rank: r})
			if err != nil {
				out[r].err = err
				return
			}
			if err := native(s.World()); err != nil {
				s.Abort(err)
				out[r].err = err
				return
			}
			out[r].finalize = s.Finalize()
			t.Logf("rank %d ended: %v", r, out[r].finalize)
		})
	}
	wg.Wait()
	return out
}

func TestMixedJob(t *testing.T) {
	leaktest.Check(t)
	p := program(t)
	suite := []string{"-mode", "suite"}
	out := runJob(t, p, 4, map[int][]string{0: suite, 2: suite}, ranktest.Suite)
	for r, o := range out {
		require.NoError(t, o.err, "rank %d", r)
		require.NoError(t, o.finalize, "rank %d's Finalize", r)
		require.Zero(t, o.status, "rank %d's exit status", r)
	}
}

func TestTrappingGuest(t *testing.T) {
	leaktest.Check(t)
	p := program(t)
	// rank 0 traps after a barrier; the other wazero rank and the native
	// ones must see ErrProcFailed for a receive from it
	out := runJob(t, p, 4, map[int][]string{0: {"-mode", "trap"}, 1: {"-mode", "peerfail"}}, func(w *meshmpi.Comm) error {
		return ranktest.PeerFails(w, 0)
	})
	require.Equal(t, ExitTrap, out[0].status, "the trapping rank's status")
	require.ErrorContains(t, out[0].err, "trapped")
	for r := 1; r < 4; r++ {
		require.NoError(t, out[r].err, "rank %d", r)
		require.Zero(t, out[r].status, "rank %d's exit status", r)
		if err := out[r].finalize; err != nil { // its barrier may meet the dead rank
			require.ErrorIs(t, err, meshmpi.ErrProcFailed, "rank %d's Finalize", r)
		}
	}
}
