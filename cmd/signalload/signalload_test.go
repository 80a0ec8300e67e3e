//go:build unix

package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMain lets the test binary serve as a child server (startChild
// runs os.Executable, which is the test binary here).
func TestMain(m *testing.M) {
	if os.Getenv(envChild) != "" {
		if err := serveChild(os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// hangGuard bounds a whole run: the modes bound their own waits, this
// only keeps a broken one from hanging the test.
const hangGuard = 2 * time.Minute

func parse(t *testing.T, args ...string) config {
	t.Helper()
	cfg, err := parseFlags(args[0], args[1:], io.Discard)
	require.NoError(t, err)
	return cfg
}

// idle at small scale: every rank joins, its jobs form, and every rank is
// still joined after being held through several of the server's pings.
func TestIdle(t *testing.T) {
	// the embedded server pings its ranks through the run; the child's
	// ranks are counted between pings, so no ping waits for its pong.
	// The pong wait is long: what is checked is that idle ranks are
	// kept and their pings answered, and under -race beside other
	// packages' tests a client's reader has been starved past the
	// default 3 s (3 of 200 dropped in one CI run).
	ping := map[string]string{serverEmbedded: "50ms", serverChild: "1m"}
	for _, server := range []string{serverEmbedded, serverChild} {
		t.Run(server, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
			defer cancel()
			cfg := parse(t, "idle", "-n", "200", "-job-size", "64", "-duration", "300ms", "-ping-interval", ping[server], "-ping-timeout", "1m", "-server", server)
			rep, err := runIdle(ctx, cfg, io.Discard)
			require.NoError(t, err)
			require.Equal(t, 4, rep.jobs) // 64, 64, 64 and 8
			require.Equal(t, 200, rep.joined)
			require.Equal(t, 200, rep.ready)
			require.Equal(t, 200, rep.after.ranks)
			require.Zero(t, rep.dropped)
			require.Zero(t, rep.departures)
			require.Equal(t, server == serverChild, rep.after.memOK, "memory is measured in a separate process only")
			if server == serverChild {
				require.True(t, rep.after.gcd)
				require.Greater(t, rep.after.heap, rep.before.heap)
				// one goroutine per idle rank: its reader
				require.InDelta(t, 200, rep.after.goroutines-rep.before.goroutines, 10)
			}
			require.Contains(t, rep.String(), "joined 200, ready 200")
		})
	}
}

// churn at small scale: every join is followed by its leave, and the
// server counts each.
func TestChurn(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cfg := parse(t, "churn", "-rate", "50", "-duration", "2s", "-server", serverEmbedded, "-servers", "2")
	rep, err := runChurn(ctx, cfg, io.Discard)
	require.NoError(t, err)
	require.Equal(t, 100, rep.planned)
	require.Equal(t, 100, rep.ok)
	require.Equal(t, "none", rep.errs)
	require.Equal(t, uint64(100), rep.joins)
	require.Equal(t, uint64(100), rep.left)
	require.Equal(t, 2, rep.servers)
}

// form at small scale: one job of 100 ranks forms on one server with
// O(N) messages: a Welcome and a Ready each, and its departures cost a
// few notices per rank, not one per pair.
func TestForm(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	const n = 100
	cfg := parse(t, "form", "-n", "100", "-server", serverEmbedded)
	rep, err := runForm(ctx, cfg, io.Discard)
	require.NoError(t, err)
	require.Equal(t, n, rep.joined)
	require.Equal(t, n, rep.ready)
	require.Equal(t, uint64(2*n), rep.formSent, "a Welcome and a Ready per rank")
	require.Equal(t, uint64(n), rep.departures)
	require.Less(t, rep.leaveSent, uint64(10*n), "departure notices are batched: O(N), not O(N²)")
}

// The command line: loopback only, and the modes' bounds.
func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"idle", "-url", "ws://10.1.2.3:8080/ws", "-secret", "0123456789abcdef"}, "loopback"},
		{[]string{"churn", "-url", "ws://example.com/ws", "-secret", "0123456789abcdef"}, "loopback"},
		{[]string{"form", "-url", "ws://127.0.0.1:8080/ws"}, "secret"},
		{[]string{"form", "-n", "2000"}, "above -max-job-size"},
		{[]string{"idle", "-n", "0"}, "positive"},
		{[]string{"stampede"}, "unknown mode"},
		{[]string{"churn", "-server", "remote"}, "want child, signal or embedded"},
		{[]string{"churn", "-url", "ws://127.0.0.1:1/ws,ws://[::1]:2/ws", "-metrics", "http://127.0.0.1:1/metrics"}, "names 1 URLs for 2 servers"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Setenv("MESHMPI_SIGNAL_SECRET", "")
			_, err := parseFlags(tc.args[0], tc.args[1:], io.Discard)
			require.ErrorIs(t, err, errUsage)
			require.ErrorContains(t, err, tc.err)
		})
	}
	cfg := parse(t, "form", "-url", "ws://127.0.0.1:1/ws,ws://localhost:2/ws", "-secret", "0123456789abcdef")
	require.Len(t, cfg.urls, 2)
	m, err := metricsURL(cfg.urls[1])
	require.NoError(t, err)
	require.Equal(t, "http://localhost:2/metrics", m)
}

// A `signal serve`'s /metrics gives the figures: unlabelled samples only.
func TestParseMetrics(t *testing.T) {
	m, err := parseMetrics(strings.NewReader(`# HELP go_goroutines Number of goroutines.
# TYPE go_goroutines gauge
go_goroutines 12
go_memstats_heap_inuse_bytes 1.2e+06
meshmpi_signal_errors_total{code="bad-token"} 3
process_cpu_seconds_total 0.25
`))
	require.NoError(t, err)
	require.Equal(t, map[string]float64{"go_goroutines": 12, "go_memstats_heap_inuse_bytes": 1.2e6, "process_cpu_seconds_total": 0.25}, m)
}

// idle against `signal serve` itself (-server signal): signalload finds
// its address in its log and samples its /metrics.
func TestIdleSignalServe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/signal")
	}
	bin := filepath.Join(t.TempDir(), "signal")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/meshmpi/meshmpi/cmd/signal").CombinedOutput()
	require.NoError(t, err, "%s", out)
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cfg := parse(t, "idle", "-n", "50", "-duration", "100ms", "-server", "signal", "-signal", bin)
	rep, err := runIdle(ctx, cfg, io.Discard)
	require.NoError(t, err)
	require.Equal(t, 50, rep.ready)
	require.Equal(t, 50, rep.after.ranks)
	require.True(t, rep.after.memOK, "/metrics gives the Go runtime's memory")
	require.True(t, rep.after.cpuOK, "/metrics gives the process's CPU time")
	require.False(t, rep.after.gcd)
}
