//go:build !js && !wasip1

package meshmpi

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshmpi/meshmpi/internal/leaktest"
	"github.com/meshmpi/meshmpi/signaling"
	"github.com/stretchr/testify/require"
)

// telemetryServer starts a signaling server and returns it with a maker
// of jobs on it whose settings add to the loopback network.
func telemetryServer(t *testing.T) (*signaling.Local, func(t *testing.T, n int, settings map[string]string) JobSpec) {
	t.Helper()
	srv, err := signaling.ListenLocal(signaling.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	seq := 0
	return srv, func(t *testing.T, n int, settings map[string]string) JobSpec {
		seq++
		job := sanitizeJob(fmt.Sprintf("%s-%d", t.Name(), seq))
		// in-process ranks would link in memory: these tests are of WebRTC
		s := map[string]string{SettingNetwork: "loopback", SettingLink: "webrtc"}
		for k, v := range settings {
			s[k] = v
		}
		tok, err := srv.Token(job, n, s, time.Hour)
		require.NoError(t, err)
		return JobSpec{Signal: srv.URL(), Job: job, Token: tok, Rank: AnyRank}
	}
}

// telemetryProgram is what the telemetry tests' ranks do: an Allreduce,
// a ring of sends over world, and a line on each console stream.
func telemetryProgram(w *Comm) error {
	if err := Allreduce(w, []float64{1}, make([]float64, 1), Sum); err != nil {
		return err
	}
	n, r := w.Size(), w.Rank()
	got := make([]int64, 2)
	req, err := Irecv(w, got, (r+n-1)%n, 3)
	if err != nil {
		return err
	}
	if err := Send(w, []int64{int64(r), 7}, (r+1)%n, 3); err != nil {
		return err
	}
	if _, err := req.Wait(context.Background()); err != nil {
		return err
	}
	fmt.Printf("hello from rank %d\n", r)
	fmt.Fprintf(os.Stderr, "rank %d: a line on stderr\n", r)
	return nil
}

// allEvents reads every event of job so far.
func allEvents(t *testing.T, srv *signaling.Local, job string) []signaling.Event {
	t.Helper()
	var all []signaling.Event
	buf := make([]signaling.Event, 1024)
	after := uint64(0)
	for {
		evs, next, _, ok := srv.Events(job, after, buf)
		require.True(t, ok, "the server knows job %s", job)
		if len(evs) == 0 {
			return all
		}
		all = append(all, evs...)
		after = next
	}
}

// waitView waits until the server's view of job satisfies done, and
// returns it (the test's deadline bounds the wait).
func waitView(t *testing.T, srv *signaling.Local, job string, done func(v signaling.JobView) bool) signaling.JobView {
	t.Helper()
	for {
		v, ok := srv.View(job)
		if ok && done(v) {
			return v
		}
		_, _, wake, ok := srv.Events(job, v.Seq, make([]signaling.Event, 1))
		if !ok {
			time.Sleep(10 * time.Millisecond) // no rank joined yet
			continue
		}
		select {
		case <-wake:
		case <-time.After(time.Second): // a view that changed without an event: look again
		}
	}
}

// opsOf lists a rank's op events as "op comm peer bytes".
func opsOf(evs []signaling.Event, rank int) []string {
	var ops []string
	for _, e := range evs {
		if e.Kind == signaling.EventOp && e.Rank == rank {
			peer := -1
			if e.Op.Peer != nil {
				peer = *e.Op.Peer
			}
			ops = append(ops, fmt.Sprintf("%s %s %d %d", e.Op.Op, e.Op.Comm, peer, e.Op.Bytes))
		}
	}
	return ops
}

// A job run with telemetry=1 over a real signaling server: the server's
// events hold each rank's operations (the last of them sent before the
// rank's leaving), and its view each rank's links with their path types
// and bytes; a job with telemetry off sends none of it.
func TestTelemetryOverSignaling(t *testing.T) {
	if testing.Short() {
		t.Skip("WebRTC jobs in -short mode")
	}
	leaktest.Check(t)
	srv, jobs := telemetryServer(t)
	const n = 3

	on := jobs(t, n, map[string]string{SettingTelemetry: "1", SettingTelemetryInterval: "100"})
	require.NoError(t, Run(n, telemetryProgram, WithJob(on)))
	v := waitView(t, srv, on.Job, func(v signaling.JobView) bool { return v.State == signaling.JobOver })
	evs := allEvents(t, srv, on.Job)
	for r := range n {
		want := []string{"allreduce world -1 8", fmt.Sprintf("send world %d 16", (r+1)%n), fmt.Sprintf("recv world %d 16", (r+n-1)%n)}
		require.Equal(t, want, opsOf(evs, r), "rank %d's operations", r)
		require.Equal(t, signaling.RankFinalized, v.Ranks[r].State, "rank %d", r)
		require.Contains(t, v.Ranks[r].Agent, "meshmpi go", "rank %d's agent", r)
	}
	// every rank reported its links to its ring neighbours (the
	// Allreduce may have linked more), over loopback host candidates
	for r := range n {
		for _, to := range []int{(r + 1) % n, (r + n - 1) % n} {
			i := slices.IndexFunc(v.Links, func(l signaling.LinkView) bool { return l.From == r && l.To == to })
			require.GreaterOrEqual(t, i, 0, "rank %d's link to %d in %+v", r, to, v.Links)
			l := v.Links[i]
			require.Equal(t, "host", l.Local, "%+v", l)
			require.Equal(t, "host", l.Remote, "%+v", l)
			if to == (r+1)%n {
				require.Positive(t, l.Sent, "rank %d sent to %d: %+v", r, to, l)
			} else {
				require.Positive(t, l.Received, "rank %d received from %d: %+v", r, to, l)
			}
		}
	}

	off := jobs(t, n, map[string]string{SettingTelemetry: "0"})
	require.NoError(t, Run(n, telemetryProgram, WithJob(off)))
	waitView(t, srv, off.Job, func(v signaling.JobView) bool { return v.State == signaling.JobOver })
	for _, e := range allEvents(t, srv, off.Job) {
		require.Contains(t, []string{signaling.EventRank, signaling.EventJob}, e.Kind, "telemetry off: %+v", e)
	}
	v, _ = srv.View(off.Job)
	require.Empty(t, v.Links)
}

// Rank processes (Init, Finalize) with telemetry on report their console
// lines too, and a rank's last report (its last operation, its last
// lines) comes before it leaves. (Whether the server counts a rank's
// departure as a clean Finalize is the server's business: the process
// may exit before its websocket's closing handshake ends.)
func TestTelemetryProcessConsole(t *testing.T) {
	if testing.Short() {
		t.Skip("WebRTC jobs in -short mode")
	}
	srv, jobs := telemetryServer(t)
	const n = 3
	spec := jobs(t, n, map[string]string{SettingTelemetry: "1", SettingTelemetryInterval: "10000"})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // hang guard
	defer cancel()
	cmds := make([]*exec.Cmd, n)
	outs := make([]*strings.Builder, n)
	for r := range n {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), rankMainEnv+"=telemetry",
			EnvSignal+"="+spec.Signal, EnvJob+"="+spec.Job, EnvToken+"="+spec.Token, fmt.Sprintf("%s=%d", EnvRank, r))
		outs[r] = new(strings.Builder)
		cmd.Stdout, cmd.Stderr = outs[r], outs[r]
		require.NoError(t, cmd.Start())
		cmds[r] = cmd
	}
	for r, cmd := range cmds {
		require.NoError(t, cmd.Wait(), "rank %d:\n%s", r, outs[r])
		// the tee passed everything on to the real files
		require.Contains(t, outs[r].String(), fmt.Sprintf("hello from rank %d\n", r))
		require.Contains(t, outs[r].String(), fmt.Sprintf("rank %d: a line on stderr\n", r))
	}
	v := waitView(t, srv, spec.Job, func(v signaling.JobView) bool { return v.State == signaling.JobOver })
	evs := allEvents(t, srv, spec.Job)
	for r := range n {
		// (each stream in order; the two pipes' readers race each other)
		require.ElementsMatch(t, []signaling.ConsoleLine{
			{Stream: signaling.StreamOut, Text: fmt.Sprintf("hello from rank %d", r)},
			{Stream: signaling.StreamErr, Text: fmt.Sprintf("rank %d: a line on stderr", r)},
		}, v.Ranks[r].Console, "rank %d's console", r)
		// with a 10 s interval, everything came in the report sent
		// before the rank left
		require.Len(t, opsOf(evs, r), 3, "rank %d", r)
		last, left := -1, -1
		for i, e := range evs {
			switch {
			case e.Rank != r:
			case e.Kind == signaling.EventOp || e.Kind == signaling.EventConsole:
				last = i
			case e.Kind == signaling.EventRank && e.RankView.Left != 0 && left < 0:
				left = i
			}
		}
		require.Positive(t, left, "rank %d left", r)
		require.Less(t, last, left, "rank %d's last report came before it left", r)
	}
}

// telemetryRank is the rank process of TestTelemetryProcessConsole.
func telemetryRank(w *Comm) int {
	if err := telemetryProgram(w); err != nil {
		fmt.Fprintln(os.Stderr, "rank error:", err)
		return 1
	}
	if err := Finalize(); err != nil {
		fmt.Fprintln(os.Stderr, "finalize:", err)
		return 1
	}
	return 0
}
