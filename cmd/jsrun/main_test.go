//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/internal/browsertest"
)

// TestRun runs a GOOS=js program through jsrun in Chromium: arguments,
// environment, both output streams, files relative to the working
// directory, temporary files and the exit status reach their places.
func TestRun(t *testing.T) {
	browsertest.Require(t)
	prog := filepath.Join(t.TempDir(), "probe.wasm")
	cmd := exec.Command("go", "build", "-o", prog, "./testdata/probe")
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	t.Setenv("MESHMPI_PROBE", "here")
	var stdout, stderr bytes.Buffer
	code, err := run([]string{prog, "-a", "b c"}, &stdout, &stderr)
	require.NoError(t, err, stderr.String())
	require.Equal(t, 3, code, "stdout: %s\nstderr: %s", stdout.String(), stderr.String())
	require.Equal(t, "args: -a b c\nseed: seed data\ntemp: temp ok\n", stdout.String())
	require.Equal(t, "env: here\n", stderr.String())
}
