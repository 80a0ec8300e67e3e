//go:build !js

package signaling

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/meshmpi/meshmpi/internal/leaktest"
	"github.com/stretchr/testify/require"
)

// hangGuard bounds every wait in these tests; reaching it is a failure, not a
// timing assertion.
const hangGuard = 10 * time.Second

// startServer runs a Server on loopback; cleanup closes it.
func startServer(t *testing.T, mutate func(*Config)) (*Server, string) {
	t.Helper()
	leaktest.Check(t)
	cfg := Config{Secret: testSecret}
	if mutate != nil {
		mutate(&cfg)
	}
	srv, err := NewServer(cfg)
	require.NoError(t, err)
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		require.NoError(t, srv.Close())
		hs.Close()
	})
	return srv, "ws" + strings.TrimPrefix(hs.URL, "http") + "/ws"
}

func mint(t *testing.T, job string, size int) string {
	t.Helper()
	tok, err := MintToken(testSecret, job, size, time.Now().Add(time.Hour))
	require.NoError(t, err)
	return tok
}

func dial(t *testing.T, url, job, tok string, opts *DialOptions) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	c, err := Dial(ctx, url, job, tok, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// recv returns the next message, failing on a closed channel or the guard.
func recv(t *testing.T, c *Client) Message {
	t.Helper()
	select {
	case m, ok := <-c.Messages():
		require.True(t, ok, "connection ended: %v", c.Err())
		return m
	case <-time.After(hangGuard):
		t.Fatal("no message before the hang guard")
		return nil
	}
}

func recvAs[T Message](t *testing.T, c *Client) T {
	t.Helper()
	m := recv(t, c)
	v, ok := m.(T)
	require.True(t, ok, "got %T %+v", m, m)
	return v
}

// expectClosedWith drains c until its channel closes and checks that the last
// error message had the code.
func expectClosedWith(t *testing.T, c *Client, code ErrorCode) {
	t.Helper()
	var last *Error
	timer := time.NewTimer(hangGuard)
	defer timer.Stop()
	for {
		select {
		case m, ok := <-c.Messages():
			if !ok {
				require.NotNil(t, last, "closed without an error message: %v", c.Err())
				require.Equal(t, code, last.Code, last.Message)
				var re *RemoteError
				require.ErrorAs(t, c.Err(), &re)
				require.Equal(t, code, re.Code)
				return
			}
			if e, ok := m.(*Error); ok {
				last = e
			}
		case <-timer.C:
			t.Fatal("connection not closed before the hang guard")
		}
	}
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
