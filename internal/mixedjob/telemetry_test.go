//go:build !js && !wasip1

package mixedjob

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/internal/ranksuite"
	"github.com/meshmpi/meshmpi/signaling"
)

// TestBrowserTelemetry: a chromium rank and a native rank run the suite
// in a job with telemetry on. The browser rank reports its operations,
// its link (the page's getStats: candidate types, a round trip; the
// bytes it counted), the lines it printed (meshmpi.js's console queue)
// and the page's user agent.
func TestBrowserTelemetry(t *testing.T) {
	l := launcher(t, true, false)
	l.Server.Settings = map[string]string{meshmpi.SettingTelemetry: "1", meshmpi.SettingTelemetryInterval: "100"}
	res, err := l.Run(context.Background(), []Rank{
		{Kind: Browser, Task: ranksuite.Task{Mode: ranksuite.ModeSuite}},
		{Kind: Native, Task: ranksuite.Task{Mode: ranksuite.ModeSuite}},
	})
	require.NoError(t, err)
	for _, r := range res {
		require.NoError(t, r.Err, "%s rank %d:\n%s%s", r.Kind, r.Rank, r.Stdout, r.Stderr)
	}
	srv := l.Server.Signaling()
	jobs := srv.Jobs()
	require.Len(t, jobs, 1)
	job := jobs[0].Job
	var v signaling.JobView
	require.Eventually(t, func() bool {
		v, _ = srv.View(job)
		return v.State == signaling.JobOver
	}, time.Minute, 10*time.Millisecond)

	ops := map[string]int{}
	for after := uint64(0); ; {
		evs, next, _, ok := srv.Events(job, after, make([]signaling.Event, 1024))
		require.True(t, ok)
		if len(evs) == 0 {
			break
		}
		for _, e := range evs {
			if e.Kind == signaling.EventOp && e.Rank == 0 {
				ops[e.Op.Op]++
			}
		}
		after = next
	}
	t.Logf("the browser rank's operations: %v", ops)
	for _, op := range []string{"send", "recv", "allreduce", "bcast", "barrier"} {
		require.Positive(t, ops[op], "the browser rank's %s operations", op)
	}
	b := v.Ranks[0]
	require.Equal(t, signaling.KindBrowser, b.Kind)
	require.Contains(t, b.Agent, "Chrome", "the page's user agent")
	require.True(t, slices.ContainsFunc(b.Console, func(c signaling.ConsoleLine) bool {
		return c.Stream == signaling.StreamOut && strings.HasPrefix(c.Text, "ranksuite ok: rank 0 of 2")
	}), "the browser rank's console: %+v", b.Console)
	i := slices.IndexFunc(v.Links, func(l signaling.LinkView) bool { return l.From == 0 && l.To == 1 })
	require.GreaterOrEqual(t, i, 0, "the browser rank's link in %+v", v.Links)
	link := v.Links[i]
	t.Logf("the browser rank's link: %+v", link)
	require.NotEmpty(t, link.Local, "candidate types from getStats")
	require.NotEmpty(t, link.Remote, "candidate types from getStats")
	require.Positive(t, link.Sent)
	require.Positive(t, link.Received)
}
