//go:build unix

package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// The program's arguments reach every rank whether -- ends meshrun's
// command line after the target, before it (as with mpiexec), or not at
// all.
func TestProgramArguments(t *testing.T) {
	script := `echo "args: $*"`
	for _, args := range [][]string{
		{"-n", "2", "sh", "--", "-c", script, "sh", "-n", "5"},
		{"-n", "2", "--", "sh", "-c", script, "sh", "-n", "5"},
		{"-n", "2", "sh", "-c", script, "sh", "-n", "5"},
	} {
		m := start(args...)
		require.Equal(t, 0, m.wait(t), m.stderr.String())
		for r := range 2 {
			require.Contains(t, m.stdout.String(), fmt.Sprintf("[%d] args: -n 5\n", r))
		}
	}
}

// A package that is not a main package is named as such, for WASI and
// native ranks, instead of failing in the wasm loader or at exec.
func TestNotMainPackage(t *testing.T) {
	if testing.Short() {
		t.Skip("go build in -short mode")
	}
	for _, flags := range [][]string{nil, {"--native"}} {
		m := start(append(append([]string{"-n", "2"}, flags...), "../../signaling")...)
		require.Equal(t, exitUsage, m.wait(t))
		require.Equal(t, "meshrun: ../../signaling is not a main package: there is no program to run\n", m.stderr.String())
	}
}
