//go:build !js && !wasip1

package meshmpi

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meshmpi/meshmpi/signaling"
	"github.com/stretchr/testify/require"
)

// localJobs starts a signaling server on loopback for the test and returns
// a maker of fresh jobs on it (loopback ICE mode, plus settings).
func localJobs(t *testing.T, settings map[string]string) func(t *testing.T, n int) JobSpec {
	t.Helper()
	srv, err := signaling.ListenLocal(signaling.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	s := map[string]string{SettingNetwork: "loopback"}
	for k, v := range settings {
		s[k] = v
	}
	var seq atomic.Int64
	return func(t *testing.T, n int) JobSpec {
		job := fmt.Sprintf("%s-%d", t.Name(), seq.Add(1))
		job = sanitizeJob(job)
		tok, err := srv.Token(job, n, s, time.Hour)
		require.NoError(t, err)
		return JobSpec{Signal: srv.URL(), Job: job, Token: tok, Rank: AnyRank}
	}
}

func sanitizeJob(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '_'
		}
	}
	return string(b)
}

// noLeaks fails the test if goroutines started during it are still running
// a few seconds after its other cleanups. Register it first.
func noLeaks(t *testing.T) {
	t.Helper()
	base := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(10 * time.Second)
		for runtime.NumGoroutine() > base {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				t.Errorf("goroutine leak: %d > %d\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// The point-to-point semantics tests, run again with every world a job
// whose ranks talk over real pion data channels on loopback, set up through
// a real signaling server.
func TestMeshPointToPoint(t *testing.T) {
	if testing.Short() {
		t.Skip("WebRTC jobs in -short mode")
	}
	noLeaks(t)
	worldJob = localJobs(t, nil)
	t.Cleanup(func() { worldJob = nil })
	for _, tc := range []struct {
		name string
		fn   func(*testing.T)
	}{
		{"SendRecvSizes", TestSendRecvSizes},
		{"Ordering", TestOrdering},
		{"Wildcards", TestWildcards},
		{"Truncation", TestTruncation},
		{"ZeroLength", TestZeroLength},
		{"SelfSend", TestSelfSend},
		{"SsendWaitsForMatch", TestSsendWaitsForMatch},
		{"Probe", TestProbe},
		{"CancelPostedReceive", TestCancelPostedReceive},
		{"PersistentPair", TestPersistentPair},
		{"SendrecvReplace", TestSendrecvReplace},
	} {
		t.Run(tc.name, tc.fn)
	}
}
