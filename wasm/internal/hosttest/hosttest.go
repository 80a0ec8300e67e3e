//go:build !js && !wasip1

// Package hosttest runs the WASI hosts' test jobs: a signaling server on
// loopback with a job of n ranks, some of them guests of a WASI runtime
// (any Runner: wasm/host's wazero Program, wasm/wasmtime's Program) and
// the others native ranks (goroutines of the test), every rank running
// wasm/host/testdata/rank's program or its native counterpart. The same
// job runs on every runtime, so their tests compare like with like.
package hosttest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/signaling"
	"github.com/meshmpi/meshmpi/wasm/host"
	"github.com/meshmpi/meshmpi/wasm/internal/ranktest"
)

// Runner runs one WASI rank to its end: a compiled program of some
// runtime.
type Runner interface {
	Run(ctx context.Context, r host.Rank) (status int, err error)
}

// JobLimit bounds a test job.
const JobLimit = 3 * time.Minute

// BuildGuest builds wasm/host/testdata/rank for wasip1 into dir and
// returns the module.
func BuildGuest(dir string) ([]byte, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return nil, fmt.Errorf("hosttest: cannot find the rank program's source")
	}
	src := filepath.Join(filepath.Dir(file), "..", "..", "host", "testdata", "rank")
	out := filepath.Join(dir, "rank.wasm")
	cmd := exec.Command("go", "build", "-o", out, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build the guest: %v\n%s", err, b)
	}
	return os.ReadFile(out)
}

// Job starts a signaling server with a job of n ranks on loopback, for
// the length of the test.
func Job(t testing.TB, n int) host.Job {
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
	return host.Job{Signal: srv.URL(), ID: id, Token: token, JoinTimeout: time.Minute}
}

// LogWriter sends a guest's output to the test log, line by line, and
// keeps it for the test to check.
type LogWriter struct {
	T      testing.TB
	Prefix string
	mu     sync.Mutex
	buf    bytes.Buffer
	all    strings.Builder
}

func (w *LogWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	w.all.Write(p)
	for {
		line, err := w.buf.ReadString('\n')
		if err != nil {
			w.buf.WriteString(line)
			return len(p), nil
		}
		w.T.Log(w.Prefix + strings.TrimSuffix(line, "\n"))
	}
}

// String is everything written so far.
func (w *LogWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.all.String()
}

// Outcome is how one rank of a test job ended.
type Outcome struct {
	Status   int    // WASI ranks: exit status
	Err      error  // WASI ranks: Run's error; native ranks: join or program failure
	Finalize error  // native ranks: what Finalize returned
	Output   string // WASI ranks: stdout and stderr
}

// RunJob runs a job of n ranks: those in wasi run as guests of p with
// the given arguments, the others as native ranks running native. It
// returns every rank's outcome.
func RunJob(t *testing.T, p Runner, n int, wasi map[int][]string, native func(*meshmpi.Comm) error) []Outcome {
	t.Helper()
	job := Job(t, n)
	ctx, cancel := context.WithTimeout(context.Background(), JobLimit)
	defer cancel()
	out := make([]Outcome, n)
	var wg sync.WaitGroup
	for r := range n {
		if args, ok := wasi[r]; ok {
			wg.Go(func() {
				j := job
				j.Rank = r
				w := &LogWriter{T: t, Prefix: "[" + strconv.Itoa(r) + "] "}
				out[r].Status, out[r].Err = p.Run(ctx, host.Rank{Job: j, Name: "rank", Args: args, Stdout: w, Stderr: w})
				out[r].Output = w.String()
				t.Logf("rank %d ended: %d %v", r, out[r].Status, out[r].Err)
			})
			continue
		}
		wg.Go(func() {
			s, err := meshmpi.Join(ctx, meshmpi.JobSpec{Signal: job.Signal, Job: job.ID, Token: job.Token, Rank: r})
			if err != nil {
				out[r].Err = err
				return
			}
			if err := native(s.World()); err != nil {
				s.Abort(err)
				out[r].Err = err
				return
			}
			out[r].Finalize = s.Finalize()
			t.Logf("rank %d ended: %v", r, out[r].Finalize)
		})
	}
	wg.Wait()
	return out
}

// BenchPair measures what hosting a rank costs: rank 1 (native, the
// benchmark's goroutine) drives rank 0, a guest of p or, with p nil, a
// native rank for comparison, over the same WebRTC mesh on loopback:
// 8-byte ping-pong round trips and 1 MiB one-way messages (ranktest's
// echo protocol; the guest runs wasm/host/testdata/rank -mode echo).
func BenchPair(b *testing.B, p Runner) {
	job := Job(b, 2)
	echoDone := make(chan error, 1)
	go func() {
		j := job
		j.Rank = 0
		if p != nil {
			status, err := p.Run(b.Context(), host.Rank{Job: j, Name: "rank", Args: []string{"-mode", "echo"}})
			if err == nil && status != 0 {
				err = fmt.Errorf("the echo guest exited with status %d", status)
			}
			echoDone <- err
			return
		}
		s, err := meshmpi.Join(b.Context(), meshmpi.JobSpec{Signal: j.Signal, Job: j.ID, Token: j.Token, Rank: 0})
		if err == nil {
			if err = ranktest.Echo(s.World(), 1); err == nil {
				err = s.Finalize()
			}
		}
		echoDone <- err
	}()
	s, err := meshmpi.Join(b.Context(), meshmpi.JobSpec{Signal: job.Signal, Job: job.ID, Token: job.Token, Rank: 1})
	if err != nil {
		b.Fatal(err)
	}
	w := s.World()
	ping, big := make([]byte, 8), make([]byte, ranktest.RendezvousBytes)
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	// connect and warm up
	must(meshmpi.Send(w, ping, 0, ranktest.TagPing))
	_, err = meshmpi.Recv(w, ping, 0, ranktest.TagPing)
	must(err)
	b.Run("pingpong-8B", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			must(meshmpi.Send(w, ping, 0, ranktest.TagPing))
			_, err := meshmpi.Recv(w, ping, 0, ranktest.TagPing)
			must(err)
		}
	})
	b.Run("bandwidth-1MiB", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(big)))
		for b.Loop() {
			must(meshmpi.Send(w, big, 0, ranktest.TagSink))
		}
		must(meshmpi.Send(w, big[:0], 0, ranktest.TagSync))
		_, err := meshmpi.Recv(w, big, 0, ranktest.TagSync)
		must(err)
	})
	must(meshmpi.Send(w, big[:0], 0, ranktest.TagStop))
	must(s.Finalize())
	must(<-echoDone)
}
