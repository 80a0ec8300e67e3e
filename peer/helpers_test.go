//go:build !wasip1

package peer

import (
	"context"
	"sync"
	"testing"
	"time"
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
