//go:build !js && !wasip1

package gobuild

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// module writes a one-package module with main.go's body into a fresh
// directory.
func module(t *testing.T, main string) string {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n"+main), 0o644))
	return dir
}

func TestBuild(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	good := module(t, "func main() {}\n")
	bad := module(t, "func main() { undefined() }\n")
	for _, tc := range []struct {
		name  string
		g     Go
		dir   string // the module go runs in
		magic string // the output's first bytes
		err   string // a substring of the error; "" for success
	}{
		{"wasip1", Go{GOOS: "wasip1", GOARCH: "wasm"}, good, "\x00asm", ""},
		{"js", Go{GOOS: "js", GOARCH: "wasm"}, good, "\x00asm", ""},
		{"fails", Go{GOOS: "wasip1", GOARCH: "wasm"}, bad, "", "GOOS=wasip1 GOARCH=wasm go build .: exit status 1\n"},
		{"go's messages", Go{}, bad, "", "undefined: undefined"},
		{"no go", Go{Cmd: filepath.Join(t.TempDir(), "nogo")}, good, "", "nogo build"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "prog")
			g := tc.g
			g.Dir = tc.dir
			err := g.Build(ctx, out, ".", "-trimpath")
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			b, err := os.ReadFile(out)
			require.NoError(t, err)
			require.Equal(t, tc.magic, string(b[:4]))
		})
	}
}

// Output is go's standard output, trimmed, in the target's environment.
func TestOutput(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := Go{GOOS: "js", GOARCH: "wasm"}.Output(ctx, "env", "GOOS")
	require.NoError(t, err)
	require.Equal(t, "js", out)
}
