//go:build race && !js && !wasip1

package examples_test

import (
	"errors"
	"fmt"
	"os/exec"
	"testing"

	"github.com/meshmpi/meshmpi/internal/gobuild"
)

// Under the race detector compress/gzip takes some ten times the CPU:
// TestBrowserBuildSize's two compressions of each of the 13 browser
// builds (6 MB each) took about 120 CPU-seconds of the test binary.
// testdata/gzipsize, built without it, measures the same (compress/gzip,
// the same levels) in about 12.
func init() { gzipSizes = gzipSizesHelper }

func gzipSizesHelper(t *testing.T, path string, _ []byte) (best, def int) {
	t.Helper()
	exe := built(t, "gzipsize", gobuild.Go{}, "testdata/gzipsize")
	out, err := exec.Command(exe, path).Output()
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		t.Fatalf("gzipsize %s: %v\n%s", path, err, ee.Stderr)
	}
	if err != nil {
		t.Fatalf("gzipsize %s: %v", path, err)
	}
	if _, err := fmt.Sscan(string(out), &best, &def); err != nil {
		t.Fatalf("gzipsize %s: %q: %v", path, out, err)
	}
	return best, def
}
