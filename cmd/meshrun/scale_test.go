//go:build unix

package main

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

var scaleBinary = buildOnce("../../examples/scale")

// A 64-rank native job on one host completes Allreduce, Barrier and
// Alltoall, and finalizes: its final barrier is a tree, not 63 ranks
// dialing rank 0 at once. (256 ranks, run by hand, is the issue's
// figure; 64 is what the CI machine affords.)
func TestNativeScale(t *testing.T) {
	if testing.Short() {
		t.Skip("64 rank processes in -short mode")
	}
	exe := scaleBinary(t)
	m := start("-n", "64", "--grace", "30s", exe)
	require.Equal(t, 0, m.wait(t), "stderr:\n%s", m.stderr.String())
	require.Regexp(t, regexp.MustCompile(`(?m)^\[0\] 64 ranks: ready .*, allreduce 8 B .*, barrier .*, alltoall 8 B .*; peak RSS `), m.stdout.String())
}
