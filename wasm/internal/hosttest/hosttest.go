//go:build !js && !wasip1

// Package hosttest runs the WASI hosts' test jobs: a signaling server on
// loopback with a job of n ranks, some of them guests of a WASI runtime
// (any Runner: wasm/host's wazero Program, wasm/wasmtime's Program) and
// the others native ranks (goroutines of the test), every rank running
// wasm/host/testdata/rank's program or its native counterpart. The same
// job runs on every runtime, so their tests compare like with like.
//
// A test binary that uses it calls testbin.Main from its TestMain: the
// guest (Guest) and the runtimes' caches go in testbin.Dir.
package hosttest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/internal/gobuild"
	"github.com/meshmpi/meshmpi/internal/ranksuite"
	"github.com/meshmpi/meshmpi/internal/testbin"
	"github.com/meshmpi/meshmpi/signaling"
	"github.com/meshmpi/meshmpi/wasm/host"
)

// Runner runs one WASI rank to its end: a compiled program of some
// runtime.
type Runner interface {
	Run(ctx context.Context, r host.Rank) (status int, err error)
}

// Program is a compiled guest of one runtime.
type Program interface {
	Runner
	Close(context.Context) error
}

// JobLimit bounds a test job.
const JobLimit = 3 * time.Minute

// Guest returns wasm/host/testdata/rank built for wasip1 into
// testbin.Dir; it builds it once per test binary, whose TestMain calls
// testbin.Main.
func Guest() ([]byte, error) {
	path, err := guest()
	if err != nil {
		return nil, fmt.Errorf("build the guest: %w", err)
	}
	return os.ReadFile(path)
}

var guest = testbin.Once(gobuild.Go{GOOS: "wasip1", GOARCH: "wasm", Dir: guestSource()}, ".", "rank.wasm")

// guestSource is wasm/host/testdata/rank's directory, found from this
// file's: tests run in their own package's directory.
func guestSource() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "host", "testdata", "rank")
}

// Compile compiles the guest with the compile of the runtime called name,
// its cache in testbin.Dir under that name, and closes the program when
// the test ends. The caches make every compile after the first one quick.
func Compile[P Program](t testing.TB, name string, compile func(ctx context.Context, module []byte, cacheDir string) (P, error)) P {
	t.Helper()
	module, err := Guest()
	require.NoError(t, err)
	cache := filepath.Join(testbin.Dir(), "cache-"+name)
	if name == "wazero" && warmWazero != nil {
		warmWazero(cache)
	}
	p, err := compile(context.Background(), module, cache)
	require.NoError(t, err)
	t.Cleanup(func() { p.Close(context.Background()) })
	return p
}

// warmWazero, when set (race.go), fills the wazero compilation cache in
// dir with the guest's machine code before Compile compiles it.
var warmWazero func(dir string)

// Job starts a signaling server with a job of n ranks on loopback, for
// the length of the test.
func Job(t testing.TB, n int) host.Job {
	t.Helper()
	return JobWith(t, n, nil)
}

// JobWith is Job with job settings added to the loopback network's (say
// meshmpi.SettingLink).
func JobWith(t testing.TB, n int, settings map[string]string) host.Job {
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
	set := map[string]string{meshmpi.SettingNetwork: "loopback"}
	for k, v := range settings {
		set[k] = v
	}
	token, err := srv.Token(id, n, set, time.Hour)
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

// MixedJob runs the suite (point-to-point, progress while waiting, the
// collective subset, each checked against a sequential reference) in a
// job of two guests of p, ranks 0 and 2, and two native ranks, and checks
// that every rank passed.
func MixedJob(t *testing.T, p Runner) {
	t.Helper()
	suite := []string{"-mode", "suite"}
	out := RunJob(t, p, 4, map[int][]string{0: suite, 2: suite}, ranksuite.Suite)
	for r, o := range out {
		require.NoError(t, o.Err, "rank %d", r)
		require.NoError(t, o.Finalize, "rank %d's Finalize", r)
		require.Zero(t, o.Status, "rank %d's exit status", r)
	}
	require.Contains(t, out[0].Output, "rank 0 done")
}

// TrappingGuest runs a job of 4 in which rank 0, a guest of p, traps
// after a barrier, and checks that it ends with host.ExitTrap while the
// other guest (rank 1) and the native ranks see ErrProcFailed for a
// receive from it.
func TrappingGuest(t *testing.T, p Runner) {
	t.Helper()
	out := RunJob(t, p, 4, map[int][]string{0: {"-mode", "trap"}, 1: {"-mode", "peerfail"}}, func(w *meshmpi.Comm) error {
		return ranksuite.PeerFails(w, 0)
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

// Poller is a Runner that counts its guests' poll_oneoff calls (wasm/host's
// Program, in its tests).
type Poller interface {
	PollCalls() int64
}

// Links BenchPair measures over: "webrtc" (the job's SettingLink forces
// a data channel on loopback) or "memory" (the default choice for two
// ranks of one process: a memory link).
const (
	LinkWebRTC = "webrtc"
	LinkMemory = "memory"
)

// BenchPair measures what hosting a rank costs: rank 1 (native, the
// benchmark's goroutine) drives rank 0, a guest of p or, with p nil, a
// native rank for comparison, over a link of the kind named (LinkWebRTC,
// LinkMemory): 8-byte ping-pong round trips and 1 MiB one-way messages
// (ranksuite's echo protocol; the guest runs wasm/host/testdata/rank
// -mode echo). A p that is a Poller has its guest's poll_oneoff calls
// reported per operation too. The pair's link is checked after the
// warm-up: a benchmark whose mesh chose another kind (the memory link's
// choice can race in mesh today) is skipped, never measured as the wrong
// one.
func BenchPair(b *testing.B, p Runner, link string) {
	var settings map[string]string
	if link == LinkWebRTC {
		settings = map[string]string{meshmpi.SettingLink: "webrtc"}
	}
	job := JobWith(b, 2, settings)
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
			if err = ranksuite.Echo(s.World(), 1); err == nil {
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
	ping, big := make([]byte, 8), make([]byte, ranksuite.RendezvousBytes)
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	// connect and warm up
	must(meshmpi.Send(w, ping, 0, ranksuite.TagPing))
	_, err = meshmpi.Recv(w, ping, 0, ranksuite.TagPing)
	must(err)
	if li, err := w.LinkInfo(0); err != nil || li.Link != link {
		// the echo rank ends with the job: stop it as a run would
		must(meshmpi.Send(w, big[:0], 0, ranksuite.TagStop))
		must(s.Finalize())
		must(<-echoDone)
		b.Skipf("rank 1 reaches rank 0 by %q (%v), not by %q", li.Link, err, link)
	}
	// polls reports the guest's poll_oneoff calls per operation: a guest
	// that spins while it waits makes thousands per message
	polls := func(b *testing.B) func() {
		pp, ok := p.(Poller)
		if !ok {
			return func() {}
		}
		n := pp.PollCalls()
		return func() { b.ReportMetric(float64(pp.PollCalls()-n)/float64(b.N), "polls/op") }
	}
	b.Run("pingpong-8B", func(b *testing.B) {
		b.ReportAllocs()
		defer polls(b)()
		for b.Loop() {
			must(meshmpi.Send(w, ping, 0, ranksuite.TagPing))
			_, err := meshmpi.Recv(w, ping, 0, ranksuite.TagPing)
			must(err)
		}
	})
	b.Run("bandwidth-1MiB", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(big)))
		defer polls(b)()
		for b.Loop() {
			must(meshmpi.Send(w, big, 0, ranksuite.TagSink))
		}
		must(meshmpi.Send(w, big[:0], 0, ranksuite.TagSync))
		_, err := meshmpi.Recv(w, big, 0, ranksuite.TagSync)
		must(err)
	})
	must(meshmpi.Send(w, big[:0], 0, ranksuite.TagStop))
	must(s.Finalize())
	must(<-echoDone)
}
