//go:build !js

package signaling

import (
	"context"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/meshmpi/meshmpi/internal/leaktest"
	"github.com/stretchr/testify/require"
)

// startServer runs a Server on loopback; cleanup closes it.
func startServer(t *testing.T, mutate func(*Config)) (*Server, string) {
	t.Helper()
	return startServerOn(t, mutate, nil)
}

// startServerOn is startServer with the listener's accepted connections
// passed through wrap (if not nil).
func startServerOn(t *testing.T, mutate func(*Config), wrap func(net.Conn) net.Conn) (*Server, string) {
	t.Helper()
	leaktest.Check(t)
	cfg := Config{Secret: testSecret}
	if mutate != nil {
		mutate(&cfg)
	}
	srv, err := NewServer(cfg)
	require.NoError(t, err)
	hs := httptest.NewUnstartedServer(srv)
	if wrap != nil {
		hs.Listener = wrapListener{hs.Listener, wrap}
	}
	hs.Start()
	t.Cleanup(func() {
		require.NoError(t, srv.Close())
		hs.Close()
	})
	return srv, "ws" + strings.TrimPrefix(hs.URL, "http") + "/ws"
}

type wrapListener struct {
	net.Listener
	wrap func(net.Conn) net.Conn
}

func (l wrapListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return l.wrap(c), nil
}

func mint(t *testing.T, job string, size int) string {
	t.Helper()
	tok, err := MintToken(testSecret, job, size, time.Now().Add(time.Hour))
	require.NoError(t, err)
	return tok
}

// rawConn is a websocket that speaks bytes, for malformed input.
func rawDial(t *testing.T, url string) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, url, nil)
	require.NoError(t, err)
	ws.SetReadLimit(MaxMessageBytes)
	t.Cleanup(func() { _ = ws.CloseNow() })
	return ws
}

func rawSend(t *testing.T, ws *websocket.Conn, m Message) {
	t.Helper()
	data, err := Encode(m)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	require.NoError(t, ws.Write(ctx, websocket.MessageText, data))
}

// rawExpectError reads until the server's error message, then until the close.
func rawExpectError(t *testing.T, ws *websocket.Conn, code ErrorCode) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	var got *Error
	for {
		_, data, err := ws.Read(ctx)
		if err != nil {
			require.NoError(t, ctx.Err(), "hang guard")
			require.NotNil(t, got, "closed without an error message: %v", err)
			require.Equal(t, code, got.Code, got.Message)
			return
		}
		m, err := Decode(data)
		require.NoError(t, err)
		if e, ok := m.(*Error); ok && got == nil {
			got = e
		}
	}
}
