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
// blocked in and carries on, and meshrun calls it a deadlock; a WASI
// rank cannot be asked, and meshrun says so.
func TestHangReport(t *testing.T) {
	if testing.Short() {
		t.Skip("WebRTC jobs in -short mode")
	}
	t.Run("native", func(t *testing.T) {
		m := start("-n", "3", "--grace", "1s", deadBinary(t))
		out := askUntil(t, m, "every rank is blocked in meshmpi: a deadlock")
		for r := range 3 {
			left := (r + 2) % 3
			require.Contains(t, out, "["+itoa(r)+"] meshmpi: rank "+itoa(r)+" is blocked in Recv(from rank "+itoa(left)+", tag 7) on world: waiting for a message from rank "+itoa(left)+"\n")
		}
		require.Contains(t, out, "meshrun: quit: asking every rank what it is blocked in\n")
		m.sigc <- syscall.SIGTERM
		require.Equal(t, 128+int(syscall.SIGTERM), m.wait(t))
	})
	t.Run("mixed", func(t *testing.T) {
		m := start("-n", "3", "--wasi", "1", "--grace", "1s", "./testdata/deadrank")
		askUntil(t, m, "every rank asked is blocked in meshmpi: a deadlock, unless rank 0 (not asked) is not")
		m.sigc <- syscall.SIGTERM
		require.Equal(t, 128+int(syscall.SIGTERM), m.wait(t))
	})
}

// --report-hang D asks by itself once no rank wrote a line for D.
func TestReportHang(t *testing.T) {
	if testing.Short() {
		t.Skip("WebRTC jobs in -short mode")
	}
	m := start("-n", "2", "--grace", "1s", "--report-hang", "2s", deadBinary(t))
	m.waitStderr(t, func(out string) bool {
		v := verdicts(out)
		return len(v) > 0 && strings.Contains(v[len(v)-1], "every rank is blocked in meshmpi: a deadlock")
	})
	require.Contains(t, m.stderr.String(), "(--report-hang): asking every rank what it is blocked in\n")
	m.sigc <- syscall.SIGTERM
	require.Equal(t, 128+int(syscall.SIGTERM), m.wait(t))
}

func itoa(i int) string { return strconv.Itoa(i) }
