//go:build unix

package main

import (
	"bytes"
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/internal/gobuild"
	"github.com/meshmpi/meshmpi/internal/testbin"
)

func TestMain(m *testing.M) { testbin.Main(m) }

var (
	meshchurnBinary = sync.OnceValues(func() (string, error) {
		out := filepath.Join(testbin.Dir(), "meshchurn")
		return out, gobuild.Go{}.Build(context.Background(), out, "github.com/meshmpi/meshmpi/cmd/meshchurn", raceFlags...)
	})
	farmBinary = testbin.Once(gobuild.Go{}, farmPkg, "farm")
)

// TestChurnSoak is the soak's CI version: two minutes (MESHCHURN_DURATION
// overrides) of a kill and a join every ~3 s, sampled every 10 s, in a
// process of its own, so that its resource figures are the signaling
// server's and not the test binary's. It ends by itself; the test only
// waits for it, and stops it (SIGTERM: it still reports) if it outlives
// its own bound on the farm's end by a minute. Under -race meshchurn is
// built with the race detector too (the farm is not: five ranks of it
// share the machine).
func TestChurnSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("a soak of minutes")
	}
	duration := 2 * time.Minute
	if d := os.Getenv("MESHCHURN_DURATION"); d != "" {
		var err error
		duration, err = time.ParseDuration(d)
		require.NoError(t, err, "MESHCHURN_DURATION")
	}
	exe, err := meshchurnBinary()
	require.NoError(t, err)
	farm, err := farmBinary()
	require.NoError(t, err)

	limit := formLimit + duration + (&result{cfg: config{duration: duration}}).drainLimit() + time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-duration", duration.String(), "-every", "3s", "-sample", "10s",
		"-workers", "4", "-farm", farm, "-seed", "1")
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = time.Minute
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	t.Logf("meshchurn ran %v:\n%s", time.Since(start).Round(time.Second), stdout.String())
	if err != nil {
		t.Logf("its standard error:\n%s", stderr.String())
	}
	require.NoError(t, ctx.Err(), "meshchurn did not end within %v", limit)
	require.NoError(t, err, "the soak failed: %s", lastLine(stdout.String()))
	require.Equal(t, "PASS", lastLine(stdout.String()))
	require.Contains(t, stdout.String(), "ok (no task lost)")
	require.NotContains(t, stdout.String(), "kills 0,")
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}

func TestFit(t *testing.T) {
	// y = 5 + 2t + 7l, l varying apart from t
	ts := []float64{0, 1, 2, 3, 4, 5, 6, 7}
	ls := []float64{4, 5, 4, 3, 4, 5, 3, 4}
	var ys []float64
	for i := range ts {
		ys = append(ys, 5+2*ts[i]+7*ls[i])
	}
	b, c := fit(ts, ls, ys)
	require.InDelta(t, 2, b, 1e-9)
	require.InDelta(t, 7, c, 1e-9)

	// constant l: the plain slope
	b, c = fit(ts, []float64{4, 4, 4, 4, 4, 4, 4, 4}, ys[:8])
	require.Zero(t, c)
	require.Greater(t, b, 0.0)

	// l following t: time alone, conservatively
	b, c = fit(ts, ts, []float64{0, 3, 6, 9, 12, 15, 18, 21})
	require.InDelta(t, 3, b, 1e-9)
	require.Zero(t, c)

	b, c = fit([]float64{1}, []float64{1}, []float64{1})
	require.Zero(t, b)
	require.Zero(t, c)
}

func TestDrift(t *testing.T) {
	// flat at the common live count, with transients (a link coming up)
	// and samples at other live counts
	l := []float64{4, 4, 4, 5, 4, 4, 4, 3, 4, 4, 4, 4}
	y := []float64{102, 126, 102, 130, 102, 102, 126, 90, 102, 102, 126, 102}
	require.Zero(t, drift(l, y))
	// a leak of 3 a sample: the thirds' floors are 8 samples apart
	for i := range y {
		y[i] = 100 + 3*float64(i)
	}
	require.InDelta(t, 24, drift(make([]float64, len(y)), y), 1e-9)
	// transients in more than half the samples of a third
	require.Equal(t, 2.0, drift(make([]float64, 9), []float64{102, 126, 102, 102, 130, 104, 128, 104, 132}))
	require.Zero(t, drift([]float64{1}, []float64{5}))
	first, _ := floors(nil, nil)
	require.True(t, math.IsNaN(first))
	first, last := floors([]float64{4, 4, 5, 4, 4, 4, 4, 4}, []float64{7, 6, 1, 9, 8, 8, 5, 9})
	require.Equal(t, []float64{6, 5}, []float64{first, last}, "the sample at 5 live ranks left out")
}

func TestParseFarm(t *testing.T) {
	f := parseFarm([]string{
		"64 tasks of 1000 hash steps for 4 workers",
		"adding tasks for 2m0s",
		"answer 0x051cdc4e66bb1744, sequential 0x051cdc4e66bb1744",
		"tasks done by manager 3, worker 1: 121 (failed), worker 2: 21, 10 late workers: 2026",
		"late workers failed 6",
		"failed workers [1 3], tasks reassigned 10, duplicate results ignored 2",
		"ok",
	})
	require.Equal(t, farmReport{answer: "0x051cdc4e66bb1744", sequential: "0x051cdc4e66bb1744", matched: true,
		tasks: 3 + 121 + 21 + 2026, lateJoined: 10, failed: "[1 3]", lateFailed: 6, reassigned: 10, duplicates: 2, found: true}, f)
	require.False(t, parseFarm([]string{"answer 0x1, sequential 0x2"}).matched)
}

func TestParseFlags(t *testing.T) {
	var errs bytes.Buffer
	c, err := parseFlags([]string{"-duration", "2m", "-every", "1s", "-workers", "2", "-sample", "5s", "-seed", "7", "-farm", filepath.Join("x", "farm")}, &errs)
	require.NoError(t, err)
	require.Equal(t, config{duration: 2 * time.Minute, every: time.Second, sample: 5 * time.Second, workers: 2, work: defaultWork, seed: 7, farm: filepath.Join("x", "farm")}, c)
	for _, bad := range [][]string{{"-workers", "0"}, {"-every", "0s"}, {"-work", "-1"}, {"extra"}, {"-nope"}} {
		_, err := parseFlags(bad, &errs)
		require.ErrorIs(t, err, errUsage, "%q", bad)
	}
}
