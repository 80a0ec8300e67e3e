package ranksuite

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi"
)

// The suite passes on in-process worlds of several sizes (memory links),
// so a failure in a mixed job points at the links, not at the checks.
func TestSuite(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			require.NoError(t, meshmpi.Run(n, Suite))
		})
	}
}

// The checks fail when a collective's output is wrong: a case whose
// output is left as fill poisoned it, as a collective that did nothing
// would leave it, fails its check.
func TestChecksCatchMissingResults(t *testing.T) {
	require.NoError(t, meshmpi.Run(3, func(w *meshmpi.Comm) error {
		for _, c := range cases(w, 4, 0) {
			c.fill(0)
			if c.name == "barrier" || c.name == "reduce" && w.Rank() != 0 || c.name == "bcast" && w.Rank() == 0 {
				continue // nothing to check on this rank
			}
			if c.check(0) == nil {
				return fmt.Errorf("%s: an unwritten output passed the check", c.name)
			}
		}
		return nil
	}))
}

func TestMeasure(t *testing.T) {
	plan := Plan{LatSizes: []int{0, 8, 100 << 10}, BWSizes: []int{64 << 10, 1 << 20}, Iters: 20, StreamBytes: 4 << 20, Rounds: 2}
	var figs []Figure
	require.NoError(t, meshmpi.Run(2, func(w *meshmpi.Comm) error {
		if w.Rank() == 1 {
			return Echo(w, 0)
		}
		var err error
		if figs, err = Measure(w, 1, plan); err != nil {
			return err
		}
		return StopEcho(w, 1)
	}))
	require.Len(t, figs, 5)
	for i, f := range figs {
		require.Positive(t, f.Value, "%v", f)
		want := "latency"
		if i >= 3 {
			want = "bw"
		}
		require.Equal(t, want, f.Bench)
	}
	var out string
	for _, f := range figs {
		out += "noise\n" + f.String() + "\n"
	}
	parsed, err := ParseFigures(out)
	require.NoError(t, err)
	require.Len(t, parsed, len(figs))
	for i := range figs {
		require.Equal(t, figs[i].Bench, parsed[i].Bench)
		require.Equal(t, figs[i].Size, parsed[i].Size)
		require.InDelta(t, figs[i].Value, parsed[i].Value, 1e-3)
	}
}

func TestTaskArgs(t *testing.T) {
	for _, task := range []Task{
		{Mode: ModeSuite, Plan: Plan{Iters: 1000, StreamBytes: 16 << 20, Rounds: 1}},
		{Mode: ModeEcho, Peer: 3, Plan: Plan{Iters: 1000, StreamBytes: 16 << 20, Rounds: 1}},
		{Mode: ModeDrive, Peer: 1, Plan: Plan{LatSizes: []int{8}, BWSizes: []int{65536, 1 << 20}, Iters: 50, StreamBytes: 1 << 20, Rounds: 3}},
	} {
		got, err := ParseTask(task.Args())
		require.NoError(t, err)
		require.Equal(t, task, got)
	}
	for _, bad := range [][]string{{"-mode", "dance"}, {"-lat", "8,x"}, {"-bw", "-1"}, {"-nonsense"}} {
		_, err := ParseTask(bad)
		require.ErrorIs(t, err, meshmpi.ErrArg, "%q", bad)
	}
	_, _, _, err := streamHeader(make([]byte, 23))
	require.ErrorIs(t, err, meshmpi.ErrArg)
}
