//go:build linux

package examples_test

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/internal/browsertest"
	"github.com/meshmpi/meshmpi/internal/gobuild"
)

// The course examples (issue 18, item 9) as jobs of separate ranks: under
// meshrun as native rank processes and as WASI ranks, and as browser
// builds in headless Chromium (cmd/jsrun; there the ranks are in-process,
// one page). Each must end with status 0 and rank 0's "ok", which it
// prints only when its result equals its own sequential computation.
//
//	go test -v -run Course ./examples

// courseExample is one example's job: its flags (a small problem) and a
// line rank 0 prints for a 3-rank job.
type courseExample struct {
	name string
	args []string
	line string
}

var courseExamples = []courseExample{
	{"matvec", []string{"-size", "50", "-iters", "10"}, "50×50 matrix on 3 ranks, 10 products: largest eigenvalue ≈ "},
	{"oddeven", []string{"-size", "500"}, "500 keys on 3 ranks sorted in "},
	{"mandelbrot", []string{"-width", "120", "-height", "60", "-iter", "300"}, "120×60 image, 300 iterations at most, on 3 ranks: rows by rank [0 "},
	{"jacobi", []string{"-size", "20", "-tol", "1e-2"}, "20×20 plate on 3 ranks (3×1 process grid): "},
	{"kmeans", []string{"-points", "3000", "-k", "4"}, "3000 points, 4 clusters, on 3 ranks: "},
}

// courseLimit stops a job that hangs, so the test fails with its output
// instead of the test binary's timeout; no job comes near it.
const courseLimit = 3 * time.Minute

// courseRun runs a command to its end and returns its exit status and
// output.
func courseRun(t *testing.T, name string, args ...string) (status int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), courseLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	start := time.Now()
	err := cmd.Run()
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		status = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	t.Logf("%s %s: status %d in %v\n%s%s", filepath.Base(name), strings.Join(args, " "), status, time.Since(start), out.String(), errs.String())
	return status, out.String(), errs.String()
}

func TestCourseUnderMeshrun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds meshrun and the examples, runs 3-rank jobs")
	}
	meshrun := built(t, "meshrun", gobuild.Go{}, "../cmd/meshrun")
	for _, ex := range courseExamples {
		t.Run(ex.name, func(t *testing.T) {
			t.Run("native", func(t *testing.T) {
				// an executable: meshrun runs its ranks as native processes
				bin := built(t, ex.name, gobuild.Go{}, ex.name)
				status, out, _ := courseRun(t, meshrun, append([]string{"-n", "3", bin}, ex.args...)...)
				require.Equal(t, 0, status)
				require.Contains(t, out, "[0] "+ex.line)
				require.Contains(t, out, "[0] ok\n")
			})
			t.Run("wasi", func(t *testing.T) {
				// a package: meshrun builds it for wasip1 and runs its
				// ranks under wazero
				status, out, _ := courseRun(t, meshrun, append([]string{"-n", "3", "./" + ex.name}, ex.args...)...)
				require.Equal(t, 0, status)
				require.Contains(t, out, "[0] "+ex.line)
				require.Contains(t, out, "[0] ok\n")
			})
		})
	}
}

// TestCourseInBrowser runs each example's browser build (GOOS=js, built
// as cmd/signal serves it: jsBuild) in headless Chromium with cmd/jsrun,
// as a world of 3 in-process ranks in one page. (A job of one tab a rank
// needs cmd/signal's lab, which its own browser test drives with
// examples/pi.)
func TestCourseInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the examples for js and starts chromium")
	}
	browsertest.Require(t)
	jsrun := built(t, "jsrun", gobuild.Go{}, "../cmd/jsrun")
	for _, ex := range courseExamples {
		t.Run(ex.name, func(t *testing.T) {
			wasm := jsBuild(t, ex.name)
			status, out, _ := courseRun(t, jsrun, append([]string{"-timeout", "2m", wasm, "-n", "3"}, ex.args...)...)
			require.Equal(t, 0, status)
			require.Contains(t, out, ex.line)
			require.Contains(t, out, "\nok\n")
		})
	}
}
