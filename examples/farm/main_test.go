//go:build !js && !wasip1

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/meshmpi/meshmpi"
	"github.com/stretchr/testify/require"
)

// hangGuard ends a run that hangs with a report of what every rank is
// blocked in, instead of the test binary's timeout; no run comes near it.
const hangGuard = 2 * time.Minute

// rankErrors splits Run's error into each rank's.
func rankErrors(t *testing.T, err error) map[int]error {
	t.Helper()
	out := map[int]error{}
	if err == nil {
		return out
	}
	j, ok := err.(interface{ Unwrap() []error })
	require.True(t, ok, "not one error a rank: %v", err)
	for _, e := range j.Unwrap() {
		var r int
		_, serr := fmt.Sscanf(e.Error(), "rank %d:", &r)
		require.NoError(t, serr, "an error without its rank: %v", e)
		out[r] = e
	}
	return out
}

// Workers fail holding a task, one or several, early or late, every one
// of them: each failed worker's task is reassigned, every task is done
// once and its result is the sequential one, and only the failed workers
// end in error.
func TestWorkersFail(t *testing.T) {
	const n, tasks, work = 4, 300, 20000
	for _, tc := range []struct {
		name, fail string
		failed     []int
	}{
		{"none", "", nil},
		{"one_at_its_first_task", "2:0", []int{2}},
		{"one_later", "3:8", []int{3}},
		{"two_at_different_points", "1:1,3:6", []int{1, 3}},
		{"two_at_once", "1:0,2:0", []int{1, 2}},
		{"every_worker", "1:2,2:0,3:4", []int{1, 2, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fails, err := parseFails(tc.fail)
			require.NoError(t, err)
			var got *tally
			start := time.Now()
			err = meshmpi.Run(n, func(world *meshmpi.Comm) error {
				k, ok := fails[world.Rank()]
				if !ok {
					k = -1
				}
				if world.Rank() != manager {
					return serve(world, work, k)
				}
				tl, err := manage(world, tasks, work, k)
				if err == nil {
					got = tl
				}
				return err
			}, meshmpi.KeepGoing(), meshmpi.WithTimeout(hangGuard))
			t.Logf("%d tasks on %d workers, %s failing: %v", tasks, n-1, tc.fail, time.Since(start))
			errs := rankErrors(t, err)
			require.Equal(t, len(tc.failed), len(errs), "%v", err)
			for _, w := range tc.failed {
				require.ErrorIs(t, errs[w], errOnPurpose)
			}
			require.NotNil(t, got)
			for task, r := range got.results {
				require.Equal(t, hash(task, work), r, "task %d", task)
			}
			total := 0
			for _, d := range got.by {
				total += d
			}
			require.Equal(t, tasks, total, "tasks recorded: %v", got.by)
			require.Equal(t, tc.failed, got.failed)
			require.Equal(t, len(tc.failed), got.reassigned, "each failed worker held one task")
			require.Zero(t, got.duplicates)
			t.Logf("tasks by rank %v, reassigned %d", got.by, got.reassigned)
		})
	}
}

// The manager fails: every worker ends, saying so, and none hangs.
func TestManagerFails(t *testing.T) {
	for _, k := range []int{0, 1, 25} {
		t.Run(fmt.Sprintf("after_%d_results", k), func(t *testing.T) {
			err := meshmpi.Run(4, func(world *meshmpi.Comm) error {
				return farm(world, 100, 20000, map[int]int{manager: k}, 0, time.Second, 0)
			}, meshmpi.KeepGoing(), meshmpi.WithTimeout(hangGuard))
			require.NotErrorIs(t, err, meshmpi.ErrTimeout)
			errs := rankErrors(t, err)
			require.Len(t, errs, 4, "%v", err)
			require.ErrorIs(t, errs[manager], errOnPurpose)
			for w := 1; w < 4; w++ {
				require.ErrorIs(t, errs[w], meshmpi.ErrProcFailed)
				require.Contains(t, errs[w].Error(), fmt.Sprintf("rank %d: the manager (rank 0) failed: ", w))
			}
		})
	}
}

// build builds the program for the subprocess tests.
func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "farm")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build:\n%s", out)
	return bin
}

// The program as a user runs it: the exit status is the survivors'
// result, the output says what failed.
func TestProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the program")
	}
	bin := build(t)
	for _, tc := range []struct {
		name   string
		args   []string
		status int
		stdout []string
		stderr []string
	}{
		{"no_failure", nil, 0, []string{"\nok\n", "failed workers [], tasks reassigned 0"}, nil},
		{"two_workers_fail", []string{"-fail", "1:2,3:0"}, 0,
			[]string{"\nok\n", "failed workers [1 3], tasks reassigned 2, duplicate results ignored 0"},
			[]string{"farm: rank 1: worker 1 holding task", "farm: rank 3: worker 3 holding task"}},
		{"the_manager_fails", []string{"-fail", "0:5"}, 1, nil,
			[]string{"farm: rank 0: the manager after 5 results: failing on purpose", "farm: rank 1: the manager (rank 0) failed: ",
				"farm: rank 2: the manager (rank 0) failed: ", "farm: rank 3: the manager (rank 0) failed: "}},
		{"bad_flag", []string{"-fail", "x"}, 2, nil, []string{"-fail is rank:k"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin, append([]string{"-n", "4", "-tasks", "300", "-work", "20000"}, tc.args...)...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			start := time.Now()
			err := cmd.Run()
			t.Logf("%v in %v\n%s%s", tc.args, time.Since(start), stdout.String(), stderr.String())
			status := 0
			if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
				status = ee.ExitCode()
			} else {
				require.NoError(t, err)
			}
			require.Equal(t, tc.status, status)
			for _, s := range tc.stdout {
				require.Contains(t, stdout.String(), s)
			}
			for _, s := range tc.stderr {
				require.Contains(t, stderr.String(), s)
			}
			if tc.status == 1 {
				require.NotContains(t, stdout.String(), "\nok\n")
			}
		})
	}
}

func TestParseFails(t *testing.T) {
	f, err := parseFails("1:0,3:12")
	require.NoError(t, err)
	require.Equal(t, map[int]int{1: 0, 3: 12}, f)
	for _, bad := range []string{"1", "x:1", "1:x", "-1:2", "1:-2"} {
		_, err := parseFails(bad)
		require.Error(t, err, bad)
	}
}

// Workers join the running farm (in process, the last ranks play late
// ranks: they connect through the published port), and one of them fails
// holding a task: every task is done once, the answer is the sequential
// one, and the late workers are counted. The world's workers start only
// once the late ones are in, so the farm cannot end before they join.
func TestLateWorkers(t *testing.T) {
	const n, late, tasks, work = 5, 2, 300, 20000
	var got *tally
	err := meshmpi.Run(n, func(world *meshmpi.Comm) error {
		r := world.Rank()
		switch {
		case r >= n-late:
			inter, err := connect(world, time.Minute)
			if err != nil || inter == nil {
				return fmt.Errorf("a late worker did not join: %v", err)
			}
			if err := meshmpi.Send(world, []byte{1}, r-late, 9); err != nil { // world worker r-2 may start
				return err
			}
			failAfter := -1
			if r == n-1 {
				failAfter = 3 // fails holding its fourth task
			}
			if err := serveOn(inter, 0, work, failAfter); err != nil {
				return err
			}
			return inter.Disconnect()
		case r != manager:
			if _, err := meshmpi.Recv(world, make([]byte, 1), r+late, 9); err != nil {
				return err
			}
			return serve(world, work, -1)
		}
		tl, err := manageWith(world, tasks, work, -1, late, time.Time{})
		got = tl
		return err
	}, meshmpi.KeepGoing(), meshmpi.WithTimeout(hangGuard))
	errs := rankErrors(t, err)
	require.Len(t, errs, 1, "%v", err)
	require.ErrorIs(t, errs[n-1], errOnPurpose)
	require.NotNil(t, got)
	require.Equal(t, 2, got.late)
	require.Equal(t, 1, got.lateFailed)
	require.Empty(t, got.failed)
	require.GreaterOrEqual(t, got.byLate, 3)
	for task, r := range got.results {
		require.Equal(t, hash(task, work), r, "task %d", task)
	}
	require.NoError(t, got.report(work))
}
