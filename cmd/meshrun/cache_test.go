//go:build linux

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCacheDir: the compilation cache is made under the user's cache
// directory; a user whose home cannot hold one (absent, a file, unset)
// gets none and why, so the run goes on, cold.
func TestCacheDir(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	cases := []struct {
		name, home, xdg string
		want            string // "" for no cache
	}{
		{"XDG_CACHE_HOME", "", filepath.Join(tmp, "xdg"), filepath.Join(tmp, "xdg", "meshmpi", "wazero")},
		{"fresh home", filepath.Join(tmp, "home"), "", filepath.Join(tmp, "home", ".cache", "meshmpi", "wazero")},
		{"home is a file", file, "", ""},
		{"home under a file", filepath.Join(file, "home"), "", ""},
		{"no home", "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("HOME", c.home)
			t.Setenv("XDG_CACHE_HOME", c.xdg)
			dir, err := cacheDir(runtimeWazero)
			require.Equal(t, c.want, dir)
			if c.want == "" {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.DirExists(t, dir)
		})
	}
}
