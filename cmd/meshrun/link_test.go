//go:build linux

package main

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/internal/gobuild"
	"github.com/meshmpi/meshmpi/internal/testbin"
	"github.com/meshmpi/meshmpi/signaling"
)

var (
	linkBinary = buildOnce("testdata/linkrank")
	linkWASM   = func() func(t *testing.T) string {
		abs, err := filepath.Abs("testdata/linkrank")
		build := testbin.Once(gobuild.Go{GOOS: "wasip1", GOARCH: "wasm"}, abs, "linkrank.wasm")
		return func(t *testing.T) string {
			t.Helper()
			require.NoError(t, err)
			exe, err := build()
			require.NoError(t, err)
			return exe
		}
	}()
)

// linkLines is what linkrank's ranks printed: the link kind by "r→p".
func linkLines(out string) map[string]string {
	got := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		var label, r, p int
		var kind string
		if _, err := fmt.Sscanf(line, "[%d] rank %d link to %d: %s", &label, &r, &p, &kind); err == nil {
			got[fmt.Sprintf("%d→%d", r, p)] = kind
		}
	}
	return got
}

// Native rank processes of one host link over shared memory; --link
// webrtc makes them use WebRTC; a 3 MiB message crosses either intact.
func TestNativeRanksLinkOnTheHost(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a job")
	}
	for _, tc := range []struct {
		flags []string
		want  string
	}{{nil, "shm"}, {[]string{"--link", "auto"}, "shm"}, {[]string{"--link", "webrtc"}, "webrtc"}} {
		t.Run(strings.Join(append([]string{"link"}, tc.flags...), " "), func(t *testing.T) {
			args := append(append([]string{"--native", "-n", "3"}, tc.flags...), linkBinary(t))
			m := start(args...)
			require.Equal(t, 0, m.wait(t), "stderr:\n%s", m.stderr.String())
			got := linkLines(m.stdout.String())
			require.Len(t, got, 6, "stdout:\n%s", m.stdout.String())
			for pair, kind := range got {
				require.Equal(t, tc.want, kind, pair)
			}
		})
	}
	m := start("--native", "-n", "2", "--link", "tcp", linkBinary(t))
	require.Equal(t, 2, m.wait(t))
	require.Contains(t, m.stderr.String(), `--link "tcp": want auto or webrtc`)
}

// The WASI ranks one meshrun hosts hold no WebRTC connection to each
// other: their hosts, in one process, link by memory links (the
// server's path view counts "memory" links, no direct or relayed ones),
// and a WASI host and a native process of one host link over shared
// memory (--wasi 2 of 4: the two guests' pair by memory, the other five
// pairs by shm; each pair counted at both ends).
func TestWASIRanksLinkOnTheHost(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a job")
	}
	for _, tc := range []struct {
		name  string
		flags []string
		want  map[string]uint64
	}{
		{"wasi", []string{"-n", "4"}, map[string]uint64{"memory": 12, "shm": 0}},
		{"mixed", []string{"-n", "4", "--wasi", "2"}, map[string]uint64{"memory": 2, "shm": 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := signaling.ListenLocal(signaling.Config{})
			require.NoError(t, err)
			defer srv.Close()
			job := "links-" + strconv.FormatInt(time.Now().UnixNano(), 36)
			tok, err := srv.Token(job, 4, map[string]string{meshmpi.SettingNetwork: "loopback"}, time.Hour)
			require.NoError(t, err)
			target := linkWASM(t)
			if tc.name == "mixed" {
				target = "./testdata/linkrank"
			}
			args := append(append([]string{}, tc.flags...), "--signal", srv.URL(), "--job", job, "--token", tok, target)
			m := start(args...)
			require.Equal(t, 0, m.wait(t), "stderr:\n%s", m.stderr.String())
			paths := srv.Stats().Paths
			for k, v := range tc.want {
				require.Equal(t, v, paths[k], "%s links in %v", k, paths)
			}
			require.Zero(t, paths["direct"], "WebRTC links in %v", paths)
			require.Zero(t, paths["relay"], "relayed links in %v", paths)
		})
	}
}
