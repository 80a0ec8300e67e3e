//go:build unix && cgo

package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The pi example as 4 WASI ranks under wasmtime inside meshrun, each its
// own member of the WebRTC mesh.
func TestRunPiWasmtime(t *testing.T) {
	if testing.Short() {
		t.Skip("go build, wasmtime and a WebRTC job in -short mode")
	}
	t.Chdir("../..")
	m := start("--runtime", "wasmtime", "-n", "4", "./examples/pi", "-steps", "1000000")
	require.Equal(t, 0, m.wait(t))
	require.Contains(t, m.stdout.String(), "[0] pi ≈")
	require.Contains(t, m.stdout.String(), "on 4 ranks")
	require.Empty(t, m.stderr.String())
}

// A mixed job under wasmtime: ranks 0 and 1 WASI guests, 2 and 3 native
// processes.
func TestRunPiMixedWasmtime(t *testing.T) {
	if testing.Short() {
		t.Skip("go build, wasmtime and a WebRTC job in -short mode")
	}
	t.Chdir("../..")
	m := start("--runtime", "wasmtime", "-n", "4", "--wasi", "2", "./examples/allreduce")
	require.Equal(t, 0, m.wait(t))
	require.Empty(t, m.stderr.String())
}

// failrank with every rank under wasmtime: the guest's exit status is
// the rank's, and the other guests fail by themselves.
func TestFailingRankWasmtime(t *testing.T) {
	if testing.Short() {
		t.Skip("go build, wasmtime and a WebRTC job in -short mode")
	}
	m := start("--runtime", "wasmtime", "-n", "4", "--grace", "30s", "./testdata/failrank")
	require.Equal(t, 3, m.wait(t))
	stderr := m.stderr.String()
	require.Contains(t, stderr, "meshrun: rank 2 exited with status 3\n")
	for _, r := range []string{"[0] failrank: a peer failed:", "[1] failrank: a peer failed:", "[3] failrank: a peer failed:"} {
		require.Contains(t, stderr, r)
	}
}
