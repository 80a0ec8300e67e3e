//go:build unix

package faultinject

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRandomExamplePlan(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	where := map[string]int{}
	for range 2000 {
		p := RandomExamplePlan(rng, []Mode{Native, WASI, Mixed})
		require.True(t, p.Example())
		require.False(t, p.ULFM())
		require.Equal(t, Op, p.Phase)
		require.GreaterOrEqual(t, p.Ranks, 4)
		require.LessOrEqual(t, p.Ranks, 6)
		require.Less(t, p.Victim, p.Ranks)
		if p.Op == Farm {
			require.GreaterOrEqual(t, p.Victim, 1, "%s: farm's manager is not a victim", p)
		}
		est := p.Estimate()
		require.GreaterOrEqual(t, est, 500*time.Millisecond, "%s", p)
		require.LessOrEqual(t, est, 2500*time.Millisecond, "%s", p)
		require.Less(t, p.Delay, est)
		switch p.Mode {
		case Native:
			require.Zero(t, p.WASI)
		case WASI:
			require.Equal(t, p.Ranks, p.WASI)
		case Mixed:
			require.Less(t, p.WASI, p.Ranks)
			require.Positive(t, p.WASI)
		}
		where[string(p.Mode)+" "+string(p.Kind)+" "+p.Op]++
	}
	require.Len(t, where, 3*2*2, "every mode, fault and example: %v", where)

	p := Plan{Mode: WASI, Kind: Freeze, Ranks: 5, Victim: 2, Op: Farm, Phase: Op, Tasks: 50, Work: 200000, Delay: time.Second}
	require.Equal(t, []string{"-tasks", "50", "-work", "200000"}, p.ExampleArgs())
	require.Equal(t, "wasi freeze of rank 2/5 during farm (-tasks 50 -work 200000) +1s", p.String())
	p = Plan{Mode: Native, Kind: Kill, Ranks: 4, Op: Resilient, Phase: Op, Iters: 3000, Points: 2000, Every: 100}
	require.Equal(t, []string{"-iters", "3000", "-points", "2000", "-every", "100"}, p.ExampleArgs())
}

// exampleResult is a 4-rank native kill of rank 2 (a worker of the farm)
// whose survivors exited with status, whose ranks printed output (the
// meshrun prefix included) and whose meshrun exited 0 and reported
// report.
func exampleResult(op string, status map[int]int, output []string, report ...string) Result {
	r := Result{
		Plan:      Plan{Mode: Native, Kind: Kill, Phase: Op, Ranks: 4, Victim: 2, Op: op},
		Faulted:   true,
		Struck:    Op,
		Survivors: map[int]Exit{},
		Output:    append(slices.Clone(output), report...),
		Report:    report,
		Meshruns:  []MeshrunExit{{Status: 0}},
	}
	for rank, s := range status {
		r.Survivors[rank] = Exit{Status: s}
	}
	return r
}

func TestExampleVerdict(t *testing.T) {
	ok := map[int]int{0: 0, 1: 0, 3: 0}
	listed := "meshrun: rank 2 failed: was killed by signal 9 (killed)"
	resilientGood := []string{
		"[0] 2000 points, 3000 iterations, a checkpoint every 100, on 4 ranks",
		"[0] rank(s) [2] failed: 3 survivors roll back to iteration 1200",
		"[0] done on 3 ranks: ranks [2] failed, 1 recoveries",
		"[0] points that differ from the sequential run: 0 (largest difference 0)",
		"[0] ok",
	}
	farmGood := []string{
		"[0] 200 tasks of 1000000 hash steps for 3 workers",
		"[0] answer 0x161ee0e23cb0991e, sequential 0x161ee0e23cb0991e",
		"[0] tasks done by manager 0, worker 1: 80, worker 2: 20 (failed), worker 3: 100",
		"[0] failed workers [2], tasks reassigned 1, duplicate results ignored 0",
		"[0] ok",
	}
	for _, c := range []struct {
		name   string
		result func() Result
		// want is what Failed says ("" for a pass); recovered is the
		// verdict's Recovered
		want      []string
		recovered bool
	}{
		{name: "resilient recovered",
			result:    func() Result { return exampleResult(Resilient, ok, resilientGood, listed) },
			recovered: true},
		{name: "farm recovered",
			result:    func() Result { return exampleResult(Farm, ok, farmGood, listed) },
			recovered: true},
		{name: "rank 0 of the survivors prints ok after rank 0's loss",
			result: func() Result {
				r := exampleResult(Resilient, map[int]int{1: 0, 2: 0, 3: 0}, []string{
					"[0] 2000 points, 3000 iterations, a checkpoint every 100, on 4 ranks",
					"[1] rank(s) [0] failed: 3 survivors roll back to iteration 1200",
					"[1] done on 3 ranks: ranks [0] failed, 1 recoveries",
					"[1] points that differ from the sequential run: 0 (largest difference 0)",
					"[1] ok",
				}, "meshrun: rank 0 failed: was killed by signal 9 (killed)")
				r.Victim = 0
				return r
			},
			recovered: true},
		{name: "a victim struck past its last exchange: the example need not list it",
			result: func() Result {
				return exampleResult(Resilient, ok, []string{
					"[0] done on 4 ranks: ranks [] failed, 0 recoveries",
					"[0] points that differ from the sequential run: 0 (largest difference 0)",
					"[0] ok",
				}, listed)
			}},
		{name: "missed: the job was over, meshrun lists nobody",
			result: func() Result {
				r := exampleResult(Farm, ok, []string{
					"[0] answer 0x1, sequential 0x1",
					"[0] failed workers [], tasks reassigned 0, duplicate results ignored 0",
					"[0] ok",
				})
				r.Missed = true
				return r
			}},
		{name: "a WASI victim's meshrun is the one struck: nobody lists it",
			result: func() Result {
				r := exampleResult(Farm, ok, farmGood)
				r.Mode, r.WASI = WASI, 4
				r.Meshruns = []MeshrunExit{{Ranks: []int{0}}, {Ranks: []int{1}}, {Ranks: []int{2}, Status: -1}, {Ranks: []int{3}}}
				return r
			},
			recovered: true},
		{name: "wrong answer: resilient",
			result: func() Result {
				return exampleResult(Resilient, map[int]int{0: 1, 1: 0, 3: 0}, []string{
					"[0] done on 3 ranks: ranks [2] failed, 1 recoveries",
					"[0] points that differ from the sequential run: 7 (largest difference 0.5)",
				}, listed)
			},
			want:      []string{"wrong answer: rank 0: 7 points differ from the sequential run", "rank 0 exited with status 1", `no rank printed "ok"`},
			recovered: true},
		{name: "wrong answer: farm",
			result: func() Result {
				return exampleResult(Farm, map[int]int{0: 1, 1: 0, 3: 0}, []string{
					"[0] answer 0x2, sequential 0x1",
					"[0] failed workers [2], tasks reassigned 1, duplicate results ignored 0",
				}, listed)
			},
			want:      []string{"wrong answer: rank 0: the answer 0x2, the sequential 0x1", "rank 0 exited with status 1"},
			recovered: true},
		{name: "survivors that failed too",
			result: func() Result {
				return exampleResult(Resilient, map[int]int{0: 1, 1: 1, 3: 1}, []string{
					"[3] resilient: rank 3: agree on comm 2 (rank 3 of 4): the ranks called different agreements",
				}, listed)
			},
			want: []string{"rank 0 exited with status 1", "rank 1 exited with status 1", "rank 3 exited with status 1",
				"no rank printed the check against the sequential run", `no rank printed "ok"`}},
		{name: "a survivor meshrun had to stop",
			result: func() Result {
				r := exampleResult(Farm, ok, farmGood, listed)
				r.Survivors[3] = Exit{Status: 137, Stopped: true}
				return r
			},
			want:      []string{"rank 3 was stopped by meshrun (status 137)"},
			recovered: true},
		{name: "a survivor listed as failed",
			result: func() Result {
				return exampleResult(Farm, ok, []string{
					"[0] answer 0x1, sequential 0x1",
					"[0] failed workers [2 3], tasks reassigned 2, duplicate results ignored 0",
					"[0] ok",
				}, listed)
			},
			want:      []string{"failed ranks misreported: rank 3 listed as failed, rank 2 was struck"},
			recovered: true},
		{name: "meshrun does not list the native victim",
			result: func() Result {
				return exampleResult(Resilient, ok, resilientGood, "meshrun: rank 2 was killed by signal 9 (killed)")
			},
			want:      []string{"meshrun: no meshrun lists rank 2 as failed"},
			recovered: true},
		{name: "meshrun's status is not the survivors'",
			result: func() Result {
				r := exampleResult(Resilient, ok, resilientGood, listed)
				r.Meshruns[0].Status = 137
				return r
			},
			want:      []string{"the meshrun of rank(s) all exited with status 137, want 0"},
			recovered: true},
		{name: "a hang is a hang",
			result: func() Result {
				r := exampleResult(Farm, map[int]int{0: 0, 3: 0}, nil, listed)
				r.Hung, r.LastExit = true, time.Minute
				return r
			},
			want: []string{"hang: rank(s) [1] still running 1m0s after the fault"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := c.result()
			f := r.Failed()
			if len(c.want) == 0 {
				require.Empty(t, f)
			}
			for _, w := range c.want {
				require.Contains(t, f, w)
			}
			if !r.Hung {
				require.Equal(t, c.recovered, r.ExampleVerdict().Recovered)
			}
		})
	}

	var sum Summary
	sum.Add(exampleResult(Resilient, ok, resilientGood, listed))
	bad := exampleResult(Farm, map[int]int{0: 1, 1: 0, 3: 0}, []string{"[0] answer 0x2, sequential 0x1"}, listed)
	sum.Add(bad)
	missed := exampleResult(Farm, ok, farmGood)
	missed.Missed, missed.Job = true, 1500*time.Millisecond
	sum.Add(missed)
	hung := exampleResult(Farm, map[int]int{0: 0, 3: 0}, nil, listed)
	hung.Hung = true
	sum.Add(hung)
	e := sum.Examples
	require.Equal(t, 4, e.Runs)
	require.Equal(t, 2, e.Passed)
	require.Equal(t, 2, e.Failed())
	require.Equal(t, 1, e.WrongAnswers)
	require.Equal(t, 1, e.Unrecovered)
	require.Equal(t, 1, e.Hangs)
	require.Equal(t, 1, e.Missed)
	require.Equal(t, 3, e.Where["native kill farm"])
	require.Equal(t, []time.Duration{1500 * time.Millisecond}, e.Jobs["farm native"])
	require.Len(t, sum.Failures, 2)
	var b strings.Builder
	_, err := sum.WriteTo(&b)
	require.NoError(t, err)
	require.NotContains(t, b.String(), "runs 4: hangs", "example runs are not classic runs")
	require.Contains(t, b.String(), "example runs 4: passed 2, failed 2 (hangs 1, wrong answers 1, survivors not recovered 1, ")
	require.Contains(t, b.String(), "  native kill farm             3\n")
	require.Contains(t, b.String(), "FAILED native kill of rank 2/4 during farm")
}
