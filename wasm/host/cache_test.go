//go:build !js && !wasip1

package host_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/wasm/host"
	"github.com/meshmpi/meshmpi/wasm/internal/hosttest"
)

// TestPruneCache: the newest entries of every wazero version directory
// stay, older ones go, and what is not an entry (a run's file being
// written, another directory's files) is left alone.
func TestPruneCache(t *testing.T) {
	key := func(i int) string {
		h := sha256.Sum256([]byte(strconv.Itoa(i)))
		return hex.EncodeToString(h[:])
	}
	cases := []struct {
		name        string
		entries     int
		keep        int
		wantEntries int
	}{
		{"none", 0, 2, 0},
		{"fewer than keep", 2, 3, 2},
		{"as many as keep", 3, 3, 3},
		{"more than keep", 7, 3, 3},
		{"keep nothing", 4, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			ver := filepath.Join(root, "wazero-v1.12.0-amd64-linux")
			other := filepath.Join(root, "other")
			require.NoError(t, os.MkdirAll(ver, 0o700))
			require.NoError(t, os.MkdirAll(other, 0o700))
			now := time.Now()
			for i := range c.entries {
				p := filepath.Join(ver, key(i))
				require.NoError(t, os.WriteFile(p, []byte("x"), 0o600))
				at := now.Add(time.Duration(i-c.entries) * time.Minute) // entry i is the i-th oldest
				require.NoError(t, os.Chtimes(p, at, at))
			}
			tmp := filepath.Join(ver, key(99)+".123.tmp")
			require.NoError(t, os.WriteFile(tmp, nil, 0o600))
			foreign := filepath.Join(other, key(98))
			require.NoError(t, os.WriteFile(foreign, nil, 0o600))

			require.NoError(t, host.PruneCache(root, c.keep))

			for i := range c.entries {
				_, err := os.Stat(filepath.Join(ver, key(i)))
				if i >= c.entries-c.wantEntries {
					require.NoError(t, err, "entry %d of %d (newest kept)", i, c.entries)
				} else {
					require.ErrorIs(t, err, os.ErrNotExist, "entry %d of %d (oldest go)", i, c.entries)
				}
			}
			require.FileExists(t, tmp)
			require.FileExists(t, foreign)
		})
	}
	t.Run("no cache yet", func(t *testing.T) {
		require.NoError(t, host.PruneCache(filepath.Join(t.TempDir(), "absent"), 1))
	})
}

// TestCompileUnusableCache: a cache directory that cannot be made (its
// parent is a file, as for a user whose home is read-only or absent)
// costs the cache, not the compile.
func TestCompileUnusableCache(t *testing.T) {
	file := filepath.Join(t.TempDir(), "home")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	blocked := filepath.Join(file, ".cache", "meshmpi", "wazero")
	p := hosttest.Compile(t, "unusable", func(ctx context.Context, module []byte, _ string) (*host.Program, error) {
		return host.Compile(ctx, module, blocked)
	})
	require.NotNil(t, p)
	require.NoFileExists(t, blocked)
}
