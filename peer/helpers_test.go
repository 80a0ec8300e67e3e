//go:build !wasip1

package peer

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// chanSignaler is one side of an in-memory signaling path.
type chanSignaler struct {
	in  <-chan sigMsg
	out chan<- sigMsg
}

func newChanSignalers() (*chanSignaler, *chanSignaler) {
	ab, ba := make(chan sigMsg, 64), make(chan sigMsg, 64)
	return &chanSignaler{in: ba, out: ab}, &chanSignaler{in: ab, out: ba}
}

func (s *chanSignaler) Send(ctx context.Context, kind string, payload []byte) error {
	select {
	case s.out <- sigMsg{kind: kind, payload: append([]byte(nil), payload...)}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *chanSignaler) Recv(ctx context.Context) (string, []byte, error) {
	select {
	case m := <-s.in:
		return m.kind, m.payload, nil
	case <-ctx.Done():
		return "", nil, ctx.Err()
	}
}

// pattern is n bytes that differ by seed and position.
func pattern(n, seed int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31 + seed*7 + i>>8)
	}
	return b
}

// connectLinks connects two links over the platform's WebRTC (pion, or
// the page's RTCPeerConnection) through an in-memory signaling path: the
// dialer's and the acceptor's.
func connectLinks(tb testing.TB, cfg WebRTCConfig) (Link, Link) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sa, sb := newChanSignalers()
	var (
		wg     sync.WaitGroup
		lb     Link
		errAcc error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		lb, errAcc = AcceptWebRTC(ctx, cfg, sb)
	}()
	la, err := DialWebRTC(ctx, cfg, sa)
	wg.Wait()
	if err != nil || errAcc != nil {
		for _, l := range []Link{la, lb} {
			if l != nil {
				l.Close()
			}
		}
		tb.Fatalf("connect: dial %v, accept %v", err, errAcc)
	}
	return la, lb
}

// exchange sends an n-byte message each way at once between a (rank 0)
// and b (rank 1) and checks both arrive intact.
func exchange(t *testing.T, a, b *Endpoint, tag int32, n int) {
	t.Helper()
	src := [2][]byte{pattern(n, int(tag)), pattern(n, int(tag)+100)}
	dst := [2][]byte{make([]byte, n), make([]byte, n)}
	sa, sb, ra, rb := a.GetOp(), b.GetOp(), a.GetOp(), b.GetOp()
	require.NoError(t, a.StartSend(sa, Standard, 1, 0, tag, src[0]))
	require.NoError(t, b.StartSend(sb, Standard, 0, 0, tag, src[1]))
	require.NoError(t, b.StartRecv(rb, 0, 0, tag, dst[0]))
	require.NoError(t, a.StartRecv(ra, 1, 0, tag, dst[1]))
	for _, op := range []*Op{sa, sb, ra, rb} {
		require.NoError(t, waitTimeout(t, op, 20*time.Second).Err, "%d bytes", n)
	}
	require.True(t, bytes.Equal(src[0], dst[0]), "%d bytes", n)
	require.True(t, bytes.Equal(src[1], dst[1]), "%d bytes back", n)
}

// waitTimeout waits for op, failing tb after d.
func waitTimeout(tb testing.TB, op *Op, d time.Duration) Result {
	tb.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for !op.Finished() {
		select {
		case <-op.Done():
		case <-timer.C:
			tb.Fatalf("operation did not complete in %v", d)
		}
	}
	return op.Result()
}
