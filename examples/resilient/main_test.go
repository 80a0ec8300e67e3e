//go:build !js && !wasip1

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
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

// Eight ranks lose one (any rank; before, at and in the middle of a
// checkpoint, just after one, during the first iterations, during the
// last) or two that are not ring neighbors (at once, or one during the
// recovery from the other): the survivors finish with the failure-free
// answer, bit for bit (rank 0 of the survivors checks it against a
// sequential run and fails otherwise). Two ring neighbors lost together
// lose a block: every survivor reports it.
func TestResilient(t *testing.T) {
	const n = 8
	const ok, lost, either = "ok", "lost", "either"
	for _, tc := range []struct {
		name, fail string
		want       string
	}{
		{"none", "", ok},
		{"rank0_mid_interval", "0:47", ok},
		{"rank1_at_first_iteration", "1:0", ok},
		{"rank2_before_first_checkpoint", "2:9", ok},
		{"rank3_at_checkpoint", "3:40", ok},
		{"rank4_checkpoint_copy_sent", "4:60:sent", ok},
		{"rank5_just_after_checkpoint", "5:101", ok},
		{"rank6_at_checkpoint", "6:150", ok},
		{"rank7_last_iteration", "7:199", ok},
		{"rank7_checkpoint_copy_sent", "7:20:sent", ok},
		{"rank0_at_checkpoint", "0:10", ok},
		{"two_apart_at_once", "2:30,5:30", ok},
		{"two_apart_at_different_iterations", "1:33,6:120", ok},
		{"first_and_last", "0:55,7:recovery", lost}, // ring neighbors: 7's copy is at 0
		{"two_apart_one_in_recovery", "2:30,5:recovery", ok},
		// 4 may be told of 3's failure before it gets to iteration 30:
		// then it fails at 30 after the recovery, its block copied anew
		{"neighbors_at_once", "3:30,4:30", either},
		{"neighbors_one_in_recovery", "3:30,4:recovery", lost},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fails, err := parseFails(tc.fail)
			require.NoError(t, err)
			cfg := config{points: 400, iters: 200, every: 10, fails: fails}
			start := time.Now()
			err = meshmpi.Run(n, func(world *meshmpi.Comm) error { return resilient(world, cfg) },
				meshmpi.KeepGoing(), meshmpi.WithTimeout(hangGuard))
			t.Logf("%s: %v", tc.fail, time.Since(start))
			require.NotErrorIs(t, err, meshmpi.ErrTimeout)
			errs := rankErrors(t, err)
			want := tc.want
			if want == either {
				want = ok
				for _, e := range errs {
					if errors.Is(e, errLost) {
						want = lost
					}
				}
				t.Logf("outcome: %s", want)
			}
			for r := range n {
				_, failing := fails[r]
				switch e := errs[r]; {
				case failing:
					require.ErrorIs(t, e, errOnPurpose)
				case want == lost:
					require.ErrorIs(t, e, errLost)
					require.Contains(t, e.Error(), "held by no survivor")
				default:
					require.NoError(t, e)
				}
			}
		})
	}
}

// The program as a user runs it: the exit status is the survivors'
// result, the output says what failed and where the survivors went on.
func TestProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the program")
	}
	bin := filepath.Join(t.TempDir(), "resilient")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build:\n%s", out)
	for _, tc := range []struct {
		name   string
		args   []string
		status int
		stdout []string
		stderr []string
	}{
		{"no_failure", nil, 0, []string{"done on 8 ranks: ranks [] failed, 0 recoveries", "differ from the sequential run: 0", "\nok\n"}, nil},
		{"one_fails", []string{"-fail", "3:47"}, 0,
			[]string{"rank(s) [3] failed: 7 survivors roll back to iteration 40\n", "done on 7 ranks: ranks [3] failed, 1 recoveries", "\nok\n"},
			[]string{"resilient: rank 3: rank 3 at iteration 47: failing on purpose (-fail)"}},
		// which survivors see only [3 4] lost is timing: a survivor that
		// finishes the rebuild's Iallgather first exits with the loss, and
		// one still in it then sees that rank fail too (a collective with
		// a failed member fails where the failure is known) and reports a
		// larger loss; some survivor always reports the first one
		{"neighbors_fail", []string{"-fail", "3:30,4:recovery"}, 1, nil,
			[]string{": points 150 to 199 of iteration ", "are held by no survivor", "(ranks [3 4] failed): checkpoint data lost"}},
		{"bad_flag", []string{"-fail", "3:7:sent"}, 2, nil, []string{"not a checkpoint iteration"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin, append([]string{"-n", "8"}, tc.args...)...)
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
			if tc.status != 0 {
				require.NotContains(t, stdout.String(), "\nok\n")
			}
		})
	}
}

func TestParseFails(t *testing.T) {
	f, err := parseFails("1:0,3:20:sent,5:recovery")
	require.NoError(t, err)
	require.Equal(t, map[int]failPoint{1: {}, 3: {iter: 20, sent: true}, 5: {recovery: true}}, f)
	for _, bad := range []string{"1", "x:1", "1:x", "-1:2", "1:-2", "1:2:x", "1:recovery:sent", "1:2:sent:3"} {
		_, err := parseFails(bad)
		require.Error(t, err, bad)
	}
}

// Six ranks take two joiners at their first checkpoints while ranks fail
// before, during and after the admissions: the leader (rank 0, whose
// port the joiners wait at) as a joiner waits or just after one joined,
// a member and a joiner, the leader in the recovery. Every survivor
// finishes with the failure-free answer, and both joiners were admitted.
func TestResilientGrows(t *testing.T) {
	const n, late = 8, 2
	for _, tc := range []struct {
		name, fail string
		joined     int
		failed     []string
	}{
		{"none", "", 2, nil},
		{"member_after_admissions", "3:47", 2, []string{"3"}},
		{"leader_after_first_admission", "0:15", 2, []string{"0"}},
		{"leader_before_first_checkpoint", "0:10", 2, []string{"0"}},
		{"leader_after_copy_sent", "0:10:sent", 2, []string{"0"}},
		{"member_at_first_checkpoint", "1:10:sent", 2, []string{"1"}},
		{"joiner_after_admission", "6:40", 2, []string{"j"}}, // j1 or j2: the joiners race
		{"joiner_and_member", "7:33,2:60", 2, []string{"2", "j"}},
		{"leader_in_recovery", "0:recovery,3:25", 2, []string{"0", "3"}},
		{"last_member_with_first_joiner", "5:12", 2, []string{"5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fails, err := parseFails(tc.fail)
			require.NoError(t, err)
			var joined int
			var failed []string
			cfg := config{points: 400, iters: 200, every: 10, fails: fails, late: late, await: late, wait: hangGuard,
				done: func(j int, f []string) { joined, failed = j, f }}
			err = meshmpi.Run(n, func(world *meshmpi.Comm) error { return resilient(world, cfg) },
				meshmpi.KeepGoing(), meshmpi.WithTimeout(hangGuard))
			require.NotErrorIs(t, err, meshmpi.ErrTimeout)
			errs := rankErrors(t, err)
			for r := range n {
				if _, failing := fails[r]; failing {
					require.ErrorIs(t, errs[r], errOnPurpose)
				} else {
					require.NoError(t, errs[r], "rank %d", r)
				}
			}
			require.Equal(t, tc.joined, joined)
			got := []string{}
			for _, f := range failed {
				if strings.HasPrefix(f, "j") {
					f = "j"
				}
				got = append(got, f)
			}
			if tc.failed == nil {
				tc.failed = []string{}
			}
			require.Equal(t, tc.failed, got)
		})
	}
}
