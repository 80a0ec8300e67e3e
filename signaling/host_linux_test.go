//go:build linux

package signaling

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The host identity is stable, valid on the wire, and does not carry the
// boot id it was derived from.
func TestLocalHostHidesBootID(t *testing.T) {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		t.Skip("no boot id:", err)
	}
	h := LocalHost()
	require.NotEmpty(t, h)
	require.Equal(t, h, LocalHost())
	require.NoError(t, validHost(h))
	id := strings.TrimSpace(string(boot))
	require.NotContains(t, h, id)
	require.NotContains(t, h, strings.ReplaceAll(id, "-", ""))
}
