//go:build !js && !wasip1

package host_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/internal/leaktest"
	"github.com/meshmpi/meshmpi/internal/ranksuite"
	"github.com/meshmpi/meshmpi/signaling"
	"github.com/meshmpi/meshmpi/wasm/host"
	"github.com/meshmpi/meshmpi/wasm/internal/hosttest"
)

// TestGuestTelemetry: in a job with telemetry on, a wazero guest's
// operations reach its host over the stream and the host reports them
// to the signaling server with the guest's links (the host's) and the
// lines the guest printed, under the agent of a WASI rank.
func TestGuestTelemetry(t *testing.T) {
	leaktest.Check(t)
	p := hosttest.Compile(t, "wazero", host.Compile)
	srv, err := signaling.ListenLocal(signaling.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	const job = "guest-telemetry"
	// link=webrtc: the test's two ranks share a process and a host,
	// whose own links report no ICE path
	token, err := srv.Token(job, 2, map[string]string{meshmpi.SettingNetwork: "loopback", meshmpi.SettingLink: "webrtc",
		meshmpi.SettingTelemetry: "1", meshmpi.SettingTelemetryInterval: "100"}, time.Hour)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), hosttest.JobLimit)
	defer cancel()

	guest := make(chan error, 1)
	go func() {
		w := &hosttest.LogWriter{T: t, Prefix: "[0] "}
		status, err := p.Run(ctx, host.Rank{Job: host.Job{Signal: srv.URL(), ID: job, Token: token, Rank: 0},
			Name: "rank", Args: []string{"-mode", "echo"}, Stdout: w, Stderr: w})
		if err == nil && status != 0 {
			err = fmt.Errorf("exit status %d", status)
		}
		guest <- err
	}()
	s, err := meshmpi.Join(ctx, meshmpi.JobSpec{Signal: srv.URL(), Job: job, Token: token, Rank: 1})
	require.NoError(t, err)
	w := s.World()
	buf := make([]byte, 8)
	require.NoError(t, meshmpi.Send(w, buf, 0, ranksuite.TagPing))
	_, err = meshmpi.Recv(w, buf, 0, ranksuite.TagPing)
	require.NoError(t, err)
	require.NoError(t, meshmpi.Send(w, buf[:0], 0, ranksuite.TagStop))
	require.NoError(t, s.Finalize())
	require.NoError(t, <-guest)

	var v signaling.JobView
	require.Eventually(t, func() bool {
		var ok bool
		v, ok = srv.View(job)
		return ok && v.State == signaling.JobOver
	}, time.Minute, 10*time.Millisecond)
	var ops []string
	for after := uint64(0); ; {
		evs, next, _, ok := srv.Events(job, after, make([]signaling.Event, 256))
		require.True(t, ok)
		if len(evs) == 0 {
			break
		}
		for _, e := range evs {
			if e.Kind == signaling.EventOp && e.Rank == 0 {
				ops = append(ops, fmt.Sprintf("%s %s %d %d", e.Op.Op, e.Op.Comm, *e.Op.Peer, e.Op.Bytes))
			}
		}
		after = next
	}
	require.Equal(t, []string{"recv world 1 8", "send world 1 8", "recv world 1 0"}, ops, "the guest's operations")
	r0 := v.Ranks[0]
	require.Equal(t, signaling.KindWASI, r0.Kind)
	require.Equal(t, "meshmpi wasip1 (wazero)", r0.Agent)
	require.Contains(t, r0.Console, signaling.ConsoleLine{Stream: signaling.StreamOut, Text: "rank 0 echoes rank 1"})
	i := slices.IndexFunc(v.Links, func(l signaling.LinkView) bool { return l.From == 0 && l.To == 1 })
	require.GreaterOrEqual(t, i, 0, "the guest's link in %+v", v.Links)
	require.Equal(t, "host", v.Links[i].Local)
	require.Positive(t, v.Links[i].Sent)
	require.Positive(t, v.Links[i].Received)
}
