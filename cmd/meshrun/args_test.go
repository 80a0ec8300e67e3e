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
