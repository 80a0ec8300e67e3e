//go:build !js && !wasip1

package peer

import (
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"

	"github.com/stretchr/testify/require"
)

// gcFloorChild names the case a re-executed test binary runs for
// TestGCFloor: the floor is process state that only grows, so each case
// starts in a fresh process.
const gcFloorChild = "MESHMPI_TEST_GCFLOOR_CHILD"

// The first native WebRTC link raises the process's GC floor: the heap
// goal then stays above the ballast, which costs no resident memory; an
// environment of 0 turns it off, a config's own value comes before the
// environment's, and a negative one turns it off; a memory limit holds it
// to a quarter of the limit; a bad value fails the link, naming the
// variable.
func TestGCFloor(t *testing.T) {
	if c := os.Getenv(gcFloorChild); c != "" {
		gcFloorCase(t, c)
		return
	}
	if testing.Short() {
		// under an emulator (.ci/cross) the kernel cannot exec the test
		// binary again without binfmt_misc
		t.Skip("starts processes")
	}
	for _, c := range []struct{ name, env string }{
		{"default", ""},
		{"off", "0"},
		{"set", "24MiB"},
		{"limit", ""},
		{"bad", "16MB"},
		{"resident", ""},
		{"config", "24MiB"}, // WebRTCConfig.GCFloor comes before the environment
		{"configoff", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestGCFloor$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), gcFloorChild+"="+c.name, EnvGCFloor+"="+c.env)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			require.Contains(t, string(out), "--- PASS: TestGCFloor", "%s", out)
		})
	}
}

func gcFloorCase(t *testing.T, c string) {
	require.Zero(t, gcFloor(), "a fresh process has no floor")
	switch c {
	case "resident":
		// never written, the ballast takes address space, not memory
		rss0 := rssMiB()
		raiseGCFloor(256 << 20)
		runtime.GC()
		require.Equal(t, 256<<20, gcFloor())
		if rss0 > 0 {
			require.Less(t, rssMiB()-rss0, int64(16), "resident MiB grew by the ballast")
		}
		return
	case "bad":
		_, err := DialWebRTC(t.Context(), WebRTCConfig{Loopback: true}, nil)
		require.ErrorContains(t, err, EnvGCFloor+`="16MB": want a byte count`)
		require.Zero(t, gcFloor())
		return
	case "limit":
		debug.SetMemoryLimit(32 << 20)
		defer debug.SetMemoryLimit(-1)
	}
	cfg := WebRTCConfig{Loopback: true}
	switch c {
	case "config":
		cfg.GCFloor = 20 << 20
	case "configoff":
		cfg.GCFloor = -1
	}
	la, lb := connectLinks(t, cfg)
	defer la.Close()
	defer lb.Close()
	want := map[string]int{"default": DefaultGCFloor, "off": 0, "set": 24 << 20, "limit": 8 << 20, "config": 20 << 20, "configoff": 0}[c]
	require.Equal(t, want, gcFloor())
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	metrics.Read(s)
	require.GreaterOrEqual(t, s[0].Value.Uint64(), uint64(want), "the heap goal counts the ballast")
}

func TestParseBytes(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
		err  bool
	}{
		{"0", 0, false},
		{"4096", 4096, false},
		{"16MiB", 16 << 20, false},
		{"16 MiB", 16 << 20, false},
		{"2KiB", 2 << 10, false},
		{"1GiB", 1 << 30, false},
		{"16MB", 0, true},
		{"-1", 0, true},
		{"MiB", 0, true},
		{"1.5MiB", 0, true},
		{"99999999999GiB", 0, true},
	} {
		n, err := parseBytes(c.in)
		if c.err {
			require.Error(t, err, c.in)
			continue
		}
		require.NoError(t, err, c.in)
		require.Equal(t, c.want, n, c.in)
	}
}
