//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// --output-dir: every rank's output also goes to DIR/rank.N.stdout and
// .stderr, as the rank wrote it, and meshrun creates DIR.
func TestOutputDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "out")
	m := start("-n", "3", "--output-dir", dir, "sh", "-c", `echo "out $MESHMPI_RANK"; echo "err $MESHMPI_RANK" >&2; printf "last $MESHMPI_RANK"`)
	require.Equal(t, 0, m.wait(t))
	for r := range 3 {
		require.Contains(t, m.stdout.String(), fmt.Sprintf("[%d] out %d\n", r, r), "the terminal's copy is as before")
		require.Contains(t, m.stdout.String(), fmt.Sprintf("[%d] last %d\n", r, r))
		checkFile(t, filepath.Join(dir, fmt.Sprintf("rank.%d.stdout", r)), fmt.Sprintf("out %d\nlast %d\n", r, r))
		checkFile(t, filepath.Join(dir, fmt.Sprintf("rank.%d.stderr", r)), fmt.Sprintf("err %d\n", r))
	}

	// processes whose rank the server assigns are named by their place
	job := []string{"--signal", "ws://127.0.0.1:1/ws", "--job", "j", "--token", "t"}
	m = start(append(append([]string{"-n", "2", "--output-dir", dir}, job...), "sh", "-c", `echo hello`)...)
	require.Equal(t, 0, m.wait(t))
	for i := range 2 {
		checkFile(t, filepath.Join(dir, fmt.Sprintf("join.%d.stdout", i)), "hello\n")
	}

	// a DIR that cannot be made is a usage error
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	m = start("-n", "1", "--output-dir", filepath.Join(file, "out"), "true")
	require.Equal(t, exitUsage, m.wait(t))
	require.Contains(t, m.stderr.String(), "meshrun: --output-dir: ")
}

// The same for a mixed job: rank 0 a WASI guest, rank 1 a native process.
func TestOutputDirWASI(t *testing.T) {
	if testing.Short() {
		t.Skip("go build, a WASI runtime and a WebRTC job in -short mode")
	}
	dir := filepath.Join(t.TempDir(), "out")
	out := runInModule(t, "-n", "2", "--wasi", "1", "--output-dir", dir, "./examples/pi", "-steps", "1000")
	line, _, _ := strings.Cut(strings.TrimPrefix(out, "[0] "), "\n")
	require.Contains(t, line, "pi ≈")
	checkFile(t, filepath.Join(dir, "rank.0.stdout"), line+"\n")
	for _, name := range []string{"rank.0.stderr", "rank.1.stdout", "rank.1.stderr"} {
		checkFile(t, filepath.Join(dir, name), "")
	}
}

func checkFile(t *testing.T, path, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, want, string(b), path)
}
