//go:build unix

package faultinject

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The short fault-injection run: 50 random runs (MESHMPI_FAULT_RUNS
// changes it) over native, WASI and mixed jobs, and 50 runs of the
// fault-tolerant workload (MESHMPI_FAULT_ULFM_RUNS; 3 rounds of Revoke,
// Agree and Shrink under meshrun --keep-going), 4 at a time, from a seed
// the log shows (MESHMPI_FAULT_SEED repeats it). No run may hang; in the
// first kind every survivor must end with an error of its own, in the
// ulfm runs every survivor must recover, all agreeing (Result.Verdict).
// The times from fault to last exit are logged, not asserted:
// cmd/meshfault's long run measures them.
func TestFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("meshrun jobs in -short mode")
	}
	runs := envInt(t, "MESHMPI_FAULT_RUNS", 50)
	ulfmRuns := envInt(t, "MESHMPI_FAULT_ULFM_RUNS", 50)
	seed := uint64(envInt(t, "MESHMPI_FAULT_SEED", int(time.Now().UnixNano()&(1<<62-1))))
	t.Logf("%d runs and %d ulfm runs, seed %d (MESHMPI_FAULT_SEED)", runs, ulfmRuns, seed)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	bin, err := Build(ctx, t.TempDir())
	require.NoError(t, err)
	rn := &Runner{Bin: bin}
	rng := rand.New(rand.NewPCG(seed, 0))
	modes := []Mode{Native, WASI, Mixed}
	plans := make(chan Plan, runs+ulfmRuns)
	for i := range runs + ulfmRuns {
		// interleaved, so that the slow freezes of both kinds spread
		// over the workers
		if i%2 == 1 && ulfmRuns > 0 || runs == 0 {
			plans <- RandomULFMPlan(rng, modes, ulfmTestRounds)
			ulfmRuns--
		} else {
			plans <- RandomPlan(rng, modes)
			runs--
		}
	}
	close(plans)

	var mu sync.Mutex
	var sum Summary
	var wg sync.WaitGroup
	for range 4 { // the runs mostly wait (ICE's consent checks take 6 s)
		wg.Go(func() {
			for p := range plans {
				r := rn.Run(ctx, p)
				mu.Lock()
				sum.Add(r)
				if f := r.Failed(); f != "" {
					t.Errorf("%s: %s\nreport: %q\noutput:\n%s", p, f, r.Report, strings.Join(r.Output, "\n"))
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	var b strings.Builder
	sum.WriteTo(&b)
	t.Log("\n" + b.String())
	require.Zero(t, sum.Errors, "runs that could not be made")
	require.Zero(t, sum.ULFM.Errors, "ulfm runs that could not be made")
}

// The short fault-injection run of the examples: 10 random runs
// (MESHMPI_FAULT_EXAMPLE_RUNS changes it) of examples/resilient and
// examples/farm over native, WASI and mixed jobs under meshrun
// --keep-going, 3 at a time, from a seed the log shows
// (MESHMPI_FAULT_SEED repeats it), each struck while it computes. Every
// run must pass the fault-tolerant contract (Result.ExampleVerdict): the
// survivors finish with the sequential run's answer. cmd/meshfault -ops
// examples is the long run.
func TestExampleFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("meshrun jobs in -short mode")
	}
	runs := envInt(t, "MESHMPI_FAULT_EXAMPLE_RUNS", 10)
	seed := uint64(envInt(t, "MESHMPI_FAULT_SEED", int(time.Now().UnixNano()&(1<<62-1))))
	t.Logf("%d example runs, seed %d (MESHMPI_FAULT_SEED)", runs, seed)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	bin, err := Build(ctx, dir)
	require.NoError(t, err)
	require.NoError(t, BuildExamples(ctx, dir, &bin))
	rn := &Runner{Bin: bin}
	rng := rand.New(rand.NewPCG(seed, 0))
	plans := make(chan Plan, runs)
	for range runs {
		plans <- RandomExamplePlan(rng, []Mode{Native, WASI, Mixed})
	}
	close(plans)

	var mu sync.Mutex
	var sum Summary
	var wg sync.WaitGroup
	for range 3 { // a freeze waits about 8 s for the server to find it
		wg.Go(func() {
			for p := range plans {
				r := rn.Run(ctx, p)
				mu.Lock()
				sum.Add(r)
				if f := r.Failed(); f != "" {
					t.Errorf("%s: %s\nreport: %q\noutput:\n%s", p, f, r.Report, strings.Join(r.Output, "\n"))
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	var b strings.Builder
	sum.WriteTo(&b)
	t.Log("\n" + b.String())
	require.Zero(t, sum.Examples.Errors, "example runs that could not be made")
}

// ulfmTestRounds is the rounds of TestFaults's ulfm runs: one revokes.
const ulfmTestRounds = 3

// envInt is the environment variable name as a number, or def.
func envInt(t *testing.T, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	require.NoError(t, err, name)
	return n
}
