//go:build unix

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/internal/gobuild"
	"github.com/meshmpi/meshmpi/internal/testbin"
)

// meshrunBinary is meshrun as a user installs it: an executable that may
// run in any directory.
var meshrunBinary = testbin.Once(gobuild.Go{}, ".", "meshrun")

// userModule writes a module of a user's, example.com/user, that requires
// meshmpi (replaced by this repository) and holds the program cmd/hello,
// and returns its directory. go mod tidy runs offline: every module it
// needs is meshmpi's own, already in the module cache.
func userModule(t *testing.T) string {
	t.Helper()
	repo, err := filepath.Abs("../..")
	require.NoError(t, err)
	dir := t.TempDir()
	gomod := "module example.com/user\n\ngo 1.26.0\n\nrequire github.com/meshmpi/meshmpi v0.0.0\n\n" +
		"replace github.com/meshmpi/meshmpi => " + repo + "\n"
	sum, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	require.NoError(t, err)
	hello := `package main

import (
	"fmt"
	"os"

	"github.com/meshmpi/meshmpi"
)

func main() {
	err := meshmpi.Main(2, func(w *meshmpi.Comm) error {
		sum := []int{0}
		if err := meshmpi.Allreduce(w, []int{w.Rank()}, sum, meshmpi.Sum); err != nil {
			return err
		}
		fmt.Printf("hello from %d of %d, sum %d\n", w.Rank(), w.Size(), sum[0])
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
`
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "cmd", "hello"), 0o755))
	for name, body := range map[string]string{"go.mod": gomod, "go.sum": string(sum), "cmd/hello/main.go": hello} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	ctx, cancel := context.WithTimeout(context.Background(), hangLimit())
	defer cancel()
	tidy := exec.CommandContext(ctx, "go", "mod", "tidy")
	tidy.Dir = dir
	tidy.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=mod")
	out, err := tidy.CombinedOutput()
	require.NoError(t, err, "go mod tidy: %s", out)
	return dir
}

// A user's program lives in the user's module: meshrun builds it there,
// with that module's go.mod, whether meshrun runs from the repository
// (go run ./cmd/meshrun … /path/into/the/module), as an installed binary
// from the module's directory (meshrun -n 2 .), or from anywhere else
// with a path into the module; natively and under WASI.
func TestPackageOfAnotherModule(t *testing.T) {
	if testing.Short() {
		t.Skip("go build and WebRTC jobs in -short mode")
	}
	mod := userModule(t)
	hello := filepath.Join(mod, "cmd", "hello")
	want := []string{"[0] hello from 0 of 2, sum 1\n", "[1] hello from 1 of 2, sum 1\n"}

	// In the test process, natively: WASI ranks would be compiled by the
	// test binary's wazero, minutes under the race detector; the
	// installed meshrun below runs them.
	t.Run("from meshrun's module", func(t *testing.T) {
		m := start("-n", "2", "--native", hello)
		require.Equal(t, 0, m.wait(t))
		for _, line := range want {
			require.Contains(t, m.stdout.String(), line)
		}
	})

	exe, err := meshrunBinary()
	require.NoError(t, err)
	elsewhere := t.TempDir()
	for _, tc := range []struct {
		name, dir, target string
		mode              []string
	}{
		{"installed, in the package, native", hello, ".", []string{"--native"}},
		{"installed, in the package, wasi", hello, ".", nil},
		{"installed, in the module's root", mod, "./cmd/hello", []string{"--native"}},
		{"installed, elsewhere, wasi", elsewhere, hello, nil},
		{"installed, elsewhere, mixed", elsewhere, hello, []string{"--wasi", "1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), hangLimit())
			defer cancel()
			cmd := exec.CommandContext(ctx, exe, append(append([]string{"-n", "2"}, tc.mode...), tc.target)...)
			cmd.Dir = tc.dir
			cmd.WaitDelay = time.Second
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			for _, line := range want {
				require.Contains(t, string(out), line)
			}
		})
	}
}
