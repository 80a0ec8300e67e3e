//go:build !js && !wasip1

package testbin

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/internal/gobuild"
)

func TestMain(m *testing.M) { Main(m) }

// Once builds into Dir the first time only; a failed build's error comes
// back every time.
func TestOnce(t *testing.T) {
	src := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(src, "go.mod"), []byte("module x\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\nfunc main() {}\n"), 0o644))
	build := Once(gobuild.Go{Dir: src}, ".", "prog")
	path, err := build()
	require.NoError(t, err)
	require.Equal(t, filepath.Join(Dir(), "prog"), path)
	require.NoError(t, os.Remove(path))
	again, err := build()
	require.NoError(t, err)
	require.Equal(t, path, again)
	require.NoFileExists(t, path, "built a second time")

	broken := Once(gobuild.Go{Dir: src}, "./missing", "broken")
	_, err = broken()
	require.ErrorContains(t, err, "go build")
	_, err2 := broken()
	require.Equal(t, err, err2)
}
