//go:build !js && !wasip1

package mesh

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/internal/leaktest"
	"github.com/meshmpi/meshmpi/peer"
	"github.com/meshmpi/meshmpi/signaling"
)

// fixedSource gives a reporter what it was filled with, once.
type fixedSource struct {
	mu      sync.Mutex
	ops     []signaling.OpEvent
	console []signaling.ConsoleLine
	dropped int
}

func (s *fixedSource) TakeOps(dst []signaling.OpEvent) ([]signaling.OpEvent, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	dst, d := append(dst, s.ops...), s.dropped
	s.ops, s.dropped = nil, 0
	return dst, d
}

func (s *fixedSource) TakeConsole(dst []signaling.ConsoleLine) []signaling.ConsoleLine {
	s.mu.Lock()
	defer s.mu.Unlock()
	dst = append(dst, s.console...)
	s.console = nil
	return dst
}

// A report larger than the server's message size goes out in several
// messages that the server takes, every operation and line in order,
// before the rank's word that it leaves; and it goes out at Leave even
// when the interval has not come.
func TestTelemetryReportSplits(t *testing.T) {
	leaktest.Check(t)
	srv, err := signaling.ListenLocal(signaling.Config{MaxMessageBytes: 8 << 10})
	require.NoError(t, err)
	defer srv.Close()
	tok, err := srv.Token("split", 1, nil, time.Hour)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := signaling.Dial(ctx, srv.URL(), "split", tok, nil)
	require.NoError(t, err)
	m := New(c, Net{Loopback: true})
	ep, err := peer.NewEndpoint(peer.Config{Rank: 0, Size: 1, Dialer: m})
	require.NoError(t, err)
	src := &fixedSource{dropped: 3}
	long := strings.Repeat("x", 900)
	for i := range 1500 {
		src.ops = append(src.ops, signaling.OpEvent{Op: "send", Comm: "world", Bytes: int64(i), Start: 1, End: 2, Err: long[:i%3*300]})
	}
	for i := range 300 {
		src.console = append(src.console, signaling.ConsoleLine{Stream: signaling.StreamOut, Text: fmt.Sprintf("%d %s", i, long)})
	}
	m.StartTelemetry(Telemetry{Interval: time.Hour, Source: src})
	m.Start(ep)
	require.NoError(t, m.WaitReady(ctx))
	m.Leave()
	ep.Close(nil)
	m.Close()

	var v signaling.JobView
	require.Eventually(t, func() bool {
		v, _ = srv.View("split")
		return v.State == signaling.JobOver
	}, time.Minute, 10*time.Millisecond)
	require.EqualValues(t, 3, v.Dropped, "the dropped count")
	var bytes []int64
	lines, left := 0, false
	for after := uint64(0); ; {
		evs, next, _, ok := srv.Events("split", after, make([]signaling.Event, 1024))
		require.True(t, ok)
		if len(evs) == 0 {
			break
		}
		for _, e := range evs {
			switch e.Kind {
			case signaling.EventOp:
				require.False(t, left, "an operation after the rank left")
				bytes = append(bytes, e.Op.Bytes)
			case signaling.EventConsole:
				require.False(t, left, "a line after the rank left")
				require.True(t, strings.HasPrefix(e.Console.Text, fmt.Sprintf("%d ", lines)), "line %d: %.10q", lines, e.Console.Text)
				lines++
			case signaling.EventRank:
				left = left || e.RankView.Left != 0
			}
		}
		after = next
	}
	require.Len(t, bytes, 1500)
	for i, b := range bytes {
		require.EqualValues(t, i, b, "operation %d", i)
	}
	require.Equal(t, 300, lines)
}
