//go:build !js

package signaling

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var _ transport = wsTransport{}

// After Close, Messages ends with Err ErrClosed and the client refuses
// further use; the other rank sees it leave. (TestJSJoinRelayLeave checks
// the same in a browser.)
func TestClientClose(t *testing.T) {
	_, url := startServer(t, nil)
	tok := mint(t, "close", 2)
	a, b := dial(t, url, "close", tok, nil), dial(t, url, "close", tok, nil)
	recvAs[*Ready](t, a)
	recvAs[*Ready](t, b)
	require.NoError(t, a.Close())
	for range a.Messages() {
	}
	require.ErrorIs(t, a.Err(), ErrClosed)
	require.ErrorIs(t, a.Close(), ErrClosed)
	require.ErrorIs(t, a.Send(context.Background(), &Ping{}), ErrClosed)
	require.Equal(t, a.Rank(), recvAs[*Left](t, b).Rank)
}

// A send whose context ends while its message is being written does not
// cost the rank its connection: coder/websocket closes a connection whose
// write's context ends mid-frame, so the caller's context bounds only the
// wait for the write's turn. Contexts of a few microseconds on messages
// of 60 KiB end in every phase of the send; afterwards the connection
// still carries messages, and the peer got exactly the sends that said
// they went.
func TestSendDeadlineKeepsConnection(t *testing.T) {
	_, url := startServer(t, func(c *Config) { c.MessageRate, c.MessageBurst = 1e6, 1e6 })
	tok := mint(t, "deadline", 2)
	a, b := dial(t, url, "deadline", tok, nil), dial(t, url, "deadline", tok, nil)
	recvAs[*Ready](t, a)
	recvAs[*Ready](t, b)
	payload := EncodeString(strings.Repeat("x", 60<<10))
	last := EncodeString("last")
	got := make(chan int, 1)
	go func() { // b reads as it comes, or the server drops it as slow
		n := 0
		for m := range b.Messages() {
			if s, ok := m.(*Signal); ok {
				if string(s.Payload) == string(last) {
					break
				}
				n++
			}
		}
		got <- n
	}()
	sent := 0
	for i := range 300 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i%60)*time.Microsecond)
		err := a.Signal(ctx, b.Rank(), SignalCandidate, payload)
		cancel()
		if err == nil {
			sent++
			continue
		}
		require.ErrorIs(t, err, context.DeadlineExceeded, "send %d", i)
	}
	require.NoError(t, a.Signal(context.Background(), b.Rank(), SignalCandidate, last))
	select {
	case n := <-got:
		require.Equal(t, sent, n, "signals received")
	case <-time.After(hangGuard):
		t.Fatal("the last signal never came")
	}
	require.NoError(t, a.Err())
	t.Logf("%d of 300 short-deadline sends went", sent)
}
