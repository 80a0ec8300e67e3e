//go:build unix

package main

import (
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// verdicts returns meshrun's hang report verdicts so far.
func verdicts(stderr string) []string {
	var v []string
	for _, line := range strings.Split(stderr, "\n") {
		if s, ok := strings.CutPrefix(line, "meshrun: hang report: "); ok {
			v = append(v, s)
		}
	}
	return v
}

// askUntil sends SIGQUIT to m until a hang report's verdict contains
// want, and returns meshrun's standard error then. Ranks that have not
// joined yet do not answer (the verdict says so), and the test asks
// again.
func askUntil(t *testing.T, m *meshrunRun, want string) string {
	t.Helper()
	for asked := 0; ; {
		v := verdicts(m.stderr.String())
		if len(v) > 0 && strings.Contains(v[len(v)-1], want) {
			return m.stderr.String()
		}
		if len(v) == asked {
			select {
			case m.reports <- syscall.SIGQUIT:
				asked++
			default:
			}
		}
		m.waitStderr(t, func(out string) bool { return len(verdicts(out)) >= asked })
	}
}

// SIGQUIT to meshrun while a job hangs: every rank says what it is
// blocked in and carries on, and meshrun calls it a deadlock: native
// ranks (a signal), WASI ranks (their host asks over the stream), and
// both in one job.
func TestHangReport(t *testing.T) {
	if testing.Short() {
		t.Skip("WebRTC jobs in -short mode")
	}
	for _, tc := range []struct {
		name string
		args func(t *testing.T) []string
	}{
		{"native", func(t *testing.T) []string { return []string{"-n", "3", "--grace", "1s", deadBinary(t)} }},
		{"wasi", func(*testing.T) []string { return []string{"-n", "3", "--grace", "1s", "./testdata/deadrank"} }},
		{"mixed", func(*testing.T) []string {
			return []string{"-n", "3", "--wasi", "1", "--grace", "1s", "./testdata/deadrank"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := start(tc.args(t)...)
			out := askUntil(t, m, "every rank is blocked in meshmpi: a deadlock")
			requireBlockedInRecv(t, out, 3)
			require.Contains(t, out, "meshrun: quit: asking every rank what it is blocked in\n")
			m.sigc <- syscall.SIGTERM
			require.Equal(t, 128+int(syscall.SIGTERM), m.wait(t))
		})
	}
}

// requireBlockedInRecv checks that each of deadrank's n ranks said it is
// blocked in its Recv from its left neighbour.
func requireBlockedInRecv(t *testing.T, out string, n int) {
	t.Helper()
	for r := range n {
		left := (r + n - 1) % n
		require.Contains(t, out, "["+itoa(r)+"] meshmpi: rank "+itoa(r)+" is blocked in Recv(from rank "+itoa(left)+", tag 7) on world: waiting for a message from rank "+itoa(left)+"\n")
	}
}

// --report-hang D asks by itself once no rank wrote a line for D, native
// and WASI ranks alike.
func TestReportHang(t *testing.T) {
	if testing.Short() {
		t.Skip("WebRTC jobs in -short mode")
	}
	for _, tc := range []struct {
		name   string
		target func(t *testing.T) string
	}{
		{"native", deadBinary},
		{"wasi", func(*testing.T) string { return "./testdata/deadrank" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := start("-n", "2", "--grace", "1s", "--report-hang", "2s", tc.target(t))
			m.waitStderr(t, func(out string) bool {
				v := verdicts(out)
				return len(v) > 0 && strings.Contains(v[len(v)-1], "every rank is blocked in meshmpi: a deadlock")
			})
			out := m.stderr.String()
			require.Contains(t, out, "(--report-hang): asking every rank what it is blocked in\n")
			requireBlockedInRecv(t, out, 2)
			m.sigc <- syscall.SIGTERM
			require.Equal(t, 128+int(syscall.SIGTERM), m.wait(t))
		})
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
