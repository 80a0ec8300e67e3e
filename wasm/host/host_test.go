//go:build !js && !wasip1

package host_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/internal/leaktest"
	"github.com/meshmpi/meshmpi/internal/testbin"
	"github.com/meshmpi/meshmpi/wasm/host"
	"github.com/meshmpi/meshmpi/wasm/internal/hosttest"
)

func TestMain(m *testing.M) { testbin.Main(m) }

// TestMixedJob: two wazero guests and two native ranks run the suite.
func TestMixedJob(t *testing.T) {
	leaktest.Check(t)
	hosttest.MixedJob(t, hosttest.Compile(t, "wazero", host.Compile))
}

// TestTrappingGuest: a wazero guest that traps fails its job's receives
// from it with ErrProcFailed.
func TestTrappingGuest(t *testing.T) {
	leaktest.Check(t)
	hosttest.TrappingGuest(t, hosttest.Compile(t, "wazero", host.Compile))
}

// TestStop: a guest stops, trapping, when its run's context ends, though
// its machine code has no termination checks (poll.go): waiting for a
// job that never fills (in poll_oneoff, on its stream) and sleeping
// before it joins one (poll_oneoff with a clock alone).
func TestStop(t *testing.T) {
	leaktest.Check(t)
	p := hosttest.Compile(t, "wazero", host.Compile)
	require.True(t, p.Budgeted(), "a Go guest's loops count down a budget (loopbudget.go)")
	for _, mode := range []string{"suite", "sleep", "spin"} {
		t.Run(mode, func(t *testing.T) {
			job := hosttest.Job(t, 2) // the second rank never comes
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			stopped := fmt.Errorf("the test stopped the rank")
			w := &hosttest.LogWriter{T: t}
			// stop it once it waits (its poll_oneoff calls say so) or
			// spins (it says so): a spinning guest calls its host no
			// more, and only the machine code's checks can stop it
			polls := p.PollCalls()
			go func() {
				for ctx.Err() == nil {
					if mode == "spin" && strings.Contains(w.String(), "spinning") || mode != "spin" && p.PollCalls() != polls {
						break
					}
					time.Sleep(time.Millisecond)
				}
				cancel(stopped)
			}()
			status, err := p.Run(ctx, host.Rank{Job: job, Name: "rank", Args: []string{"-mode", mode}, Stdout: w, Stderr: w})
			require.Equal(t, host.ExitTrap, status, "%v", err)
			require.ErrorIs(t, err, stopped)
			require.NotContains(t, w.String(), "slept")
			require.NotContains(t, w.String(), "spun")
		})
	}
}

// TestWASIPairExchange: two wazero guests of this process, linked by a
// memory link between their hosts (frames of wasm.MaxFrame), send each
// other messages of 1 B, 64 KiB, 1 MiB and 8 MiB+1 both directions at
// once; each guest checks what it received byte for byte and by CRC-32
// (testdata/rank's -mode exchange).
func TestWASIPairExchange(t *testing.T) {
	leaktest.Check(t)
	p := hosttest.Compile(t, "wazero", host.Compile)
	exchangePair(t, p)
}

// exchangePair runs two guests of p in -mode exchange and checks that
// each received every message intact.
func exchangePair(t *testing.T, p *host.Program) {
	t.Helper()
	exchange := []string{"-mode", "exchange"}
	out := hosttest.RunJob(t, p, 2, map[int][]string{0: exchange, 1: exchange}, nil)
	for r, o := range out {
		require.NoError(t, o.Err, "rank %d", r)
		require.Zero(t, o.Status, "rank %d's exit status: %s", r, o.Output)
		require.Contains(t, o.Output, fmt.Sprintf("rank %d exchanged 4 messages intact", r))
	}
}

// TestGuestParkedBeforePull: a guest that waits for its welcome, asleep
// in poll_oneoff, before its relay sets up the queue it pulls its
// messages from, is woken and reads it. The relays here set their queue
// only once a guest slept after they joined; when the welcome went to
// the socket and the queue came after it, such a guest read the welcome,
// parked, and was never told of the queue (mixed jobs hung in their first
// collective, about one in twelve).
func TestGuestParkedBeforePull(t *testing.T) {
	leaktest.Check(t)
	p := hosttest.Compile(t, "wazero", host.Compile)
	host.SetBeforePull(func() {
		// the guest sleeps again every 2 ms while it waits; the limit
		// only keeps a guest that never waits from hanging the test
		limit := time.Now().Add(hosttest.JobLimit)
		for s := p.PollSleeps(); p.PollSleeps() == s && time.Now().Before(limit); {
			time.Sleep(time.Millisecond)
		}
	})
	t.Cleanup(func() { host.SetBeforePull(nil) })
	exchangePair(t, p)
}

// TestGuestStreamEnds: a guest that finalizes and exits ends its stream,
// and the relay reads the end at once instead of waiting out its drain
// (guestDrain, 5 s): wazero v1.12 shuts nothing down when it closes a
// guest's socket, so the guest shuts down its writing half itself.
// Every job of WASI ranks took 5 s longer to end without it.
func TestGuestStreamEnds(t *testing.T) {
	leaktest.Check(t)
	status, out, logged := runLogged(t, "suite")
	require.Zero(t, status, out)
	end, ok := logged.find("guest stream ended")
	require.True(t, ok, "the relay saw no end of the stream before its drain timed out: %v", logged.all())
	require.NotContains(t, end, "timeout", "the stream ended by the drain's deadline, not by the guest")
}

// TestGuestExitEndsStream: a guest that exits in the job without
// finalizing (os.Exit on an error) leaves a stream that wazero never
// closes; the relay handles what it wrote and ends the stream at its
// exit, instead of waiting out its drain (guestDrain, 5 s) before the
// job hears the rank left.
func TestGuestExitEndsStream(t *testing.T) {
	leaktest.Check(t)
	status, out, logged := runLogged(t, "exitjoined")
	require.Equal(t, 3, status, out)
	require.Contains(t, out, "exiting with 3 in the job")
	_, ok := logged.find("guest stream ended after its exit")
	require.True(t, ok, "the relay did not end the stream at the guest's exit: %v", logged.all())
	for _, l := range logged.all() {
		require.NotContains(t, l, "timeout", "the stream ended by the drain's deadline")
	}
}

// runLogged runs testdata/rank in mode as the one rank of a job under
// wazero, keeping the host's log: its exit status, its output and the
// log records.
func runLogged(t *testing.T, mode string) (int, string, *logRecords) {
	t.Helper()
	p := hosttest.Compile(t, "wazero", host.Compile)
	logged := new(logRecords)
	w := &hosttest.LogWriter{T: t}
	status, err := p.Run(context.Background(), host.Rank{Job: hosttest.Job(t, 1), Name: "rank", Args: []string{"-mode", mode}, Stdout: w, Stderr: w,
		Logger: slog.New(logged)})
	require.NoError(t, err)
	return status, w.String(), logged
}

// logRecords is a slog.Handler that keeps every record as a line.
type logRecords struct {
	mu    sync.Mutex
	lines []string
}

func (l *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecords) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logRecords) WithGroup(string) slog.Handler            { return l }
func (l *logRecords) Handle(_ context.Context, r slog.Record) error {
	line := r.Message
	r.Attrs(func(a slog.Attr) bool {
		line += " " + a.String()
		return true
	})
	l.mu.Lock()
	l.lines = append(l.lines, line)
	l.mu.Unlock()
	return nil
}

func (l *logRecords) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// find returns the first line that starts with msg.
func (l *logRecords) find(msg string) (string, bool) {
	for _, line := range l.all() {
		if strings.HasPrefix(line, msg) {
			return line, true
		}
	}
	return "", false
}

// TestGuestPullsWithoutSyscalls: once a guest pulls its messages from
// its relay's queue, its socket carries nothing to it until the host
// closes its end, so a read or a poll that finds the queue empty answers
// without a syscall (bell.hostClosed); 2 ranks of the suite (thousands
// of messages, each a read that then finds the queue empty and a poll)
// look at their sockets only at the stream's end, if at all.
func TestGuestPullsWithoutSyscalls(t *testing.T) {
	leaktest.Check(t)
	p := hosttest.Compile(t, "wazero", host.Compile)
	suite := []string{"-mode", "suite"}
	out := hosttest.RunJob(t, p, 2, map[int][]string{0: suite, 1: suite}, nil)
	for r, o := range out {
		require.NoError(t, o.Err, "rank %d", r)
		require.Zero(t, o.Status, "rank %d's exit status: %s", r, o.Output)
	}
	t.Logf("stream socket reads and peeks: %d; poll_oneoff calls: %d", p.StreamLooks(), p.PollCalls())
	require.Greater(t, p.PollCalls(), int64(100), "the guests waited for their messages")
	require.LessOrEqual(t, p.StreamLooks(), int64(2*4), "syscalls on the stream sockets while the hosts' ends were open")
}
