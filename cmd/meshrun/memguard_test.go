//go:build unix

package main

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseMemAvailable(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/meminfo is linux's")
	}
	got, ok := parseMemAvailable([]byte("MemTotal:       24731708 kB\nMemFree:        13229680 kB\nMemAvailable:   23668016 kB\n"))
	require.True(t, ok)
	require.Equal(t, uint64(23668016)<<10, got)
	_, ok = parseMemAvailable([]byte("MemTotal: 1 kB\n"))
	require.False(t, ok, "an old kernel without MemAvailable: no guard")
	avail, ok := availableMemory()
	require.True(t, ok)
	require.Positive(t, avail)
}

// meshrun -n 5000 fails at once, before it builds or starts anything,
// naming its estimate and the override, on a host that does not have
// the memory (this one, unless it has 100 GB free).
func TestMemoryGuard(t *testing.T) {
	avail, ok := memAvailable()
	if !ok {
		t.Skip("no MemAvailable here: the guard is skipped")
	}
	if need, _ := jobMemory(5000, 0); need <= avail {
		t.Skipf("this host has %s available, enough for 5,000 native ranks", bytesIEC(avail))
	}
	m := start("-n", "5000", "sleep", "100")
	require.Equal(t, exitUsage, m.wait(t))
	require.Regexp(t, `^meshrun: -n 5000: the job needs about 97\.7 GiB \(5000 native rank\(s\) × 20 MiB\), more than the [0-9.]+ [GM]iB this host has available: run fewer ranks, or --mem-check=false to start it anyway\n$`, m.stderr.String())
	require.Empty(t, m.stdout.String())
}

// With a host of 64 MiB: 4 native ranks do not fit; a WASI job counts
// meshrun's runtime; --mem-check=false starts the job anyway.
func TestMemoryGuardOverride(t *testing.T) {
	old := memAvailable
	t.Cleanup(func() { memAvailable = old })
	memAvailable = func() (uint64, bool) { return 64 << 20, true }

	m := start("-n", "4", "sh", "-c", "echo up")
	require.Equal(t, exitUsage, m.wait(t))
	require.Contains(t, m.stderr.String(), "the job needs about 80 MiB (4 native rank(s) × 20 MiB), more than the 64 MiB")

	m = start("-n", "1", "--wasi", "1", "../../examples/pi")
	require.Equal(t, exitUsage, m.wait(t))
	require.Contains(t, m.stderr.String(), "about 125 MiB (1 WASI rank(s) × 25 MiB + 100 MiB for the WASI runtime)")

	m = start("-n", "4", "--mem-check=false", "sh", "-c", "echo up")
	require.Equal(t, 0, m.wait(t))
	require.Contains(t, m.stdout.String(), "[3] up\n")

	memAvailable = func() (uint64, bool) { return 0, false }
	m = start("-n", "4", "sh", "-c", "echo up")
	require.Equal(t, 0, m.wait(t), "where the memory is unknown, no guard")
}
