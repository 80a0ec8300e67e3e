//go:build !js

package signaling

import (
	"context"
	"testing"

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
