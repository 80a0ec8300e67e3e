//go:build !js

package signaling

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"
)

// A client may send its first frame with its upgrade request, before it
// reads the 101: net/http has read it into its buffer by the hijack, and
// the connection's own smaller buffer (acceptBuffers) must still hold it.
func TestAcceptKeepsPipelinedFrame(t *testing.T) {
	_, url := startServer(t, nil)
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "ws://"), "/ws")
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	require.NoError(t, err)
	defer nc.Close()
	stop := context.AfterFunc(ctx, func() { _ = nc.Close() })
	defer stop()

	join, err := Encode(&Join{Job: "piped", Token: mint(t, "piped", 2), Kind: KindNative})
	require.NoError(t, err)
	req := "GET /ws HTTP/1.1\r\nHost: " + addr + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
	_, err = nc.Write(append([]byte(req), maskedText(t, join)...)) // one write: request and frame
	require.NoError(t, err)

	br := bufio.NewReader(nc)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusSwitchingProtocols, resp.StatusCode)
	m, err := Decode(readServerFrame(t, br))
	require.NoError(t, err)
	w, ok := m.(*Welcome)
	require.True(t, ok, "got %T", m)
	require.Equal(t, "piped", w.Job)
}

// maskedText is payload as one masked text frame, as a client sends it.
func maskedText(t *testing.T, payload []byte) []byte {
	t.Helper()
	frame := []byte{0x81}
	switch n := len(payload); {
	case n < 126:
		frame = append(frame, 0x80|byte(n))
	case n <= 0xffff:
		frame = append(frame, 0x80|126)
		frame = binary.BigEndian.AppendUint16(frame, uint16(n))
	default:
		t.Fatalf("payload of %d bytes", n)
	}
	var key [4]byte
	_, _ = rand.Read(key[:])
	frame = append(frame, key[:]...)
	for i, b := range payload {
		frame = append(frame, b^key[i%4])
	}
	return frame
}

// readServerFrame reads one unmasked, unfragmented text frame.
func readServerFrame(t *testing.T, br *bufio.Reader) []byte {
	t.Helper()
	var h [2]byte
	_, err := io.ReadFull(br, h[:])
	require.NoError(t, err)
	require.Equal(t, byte(0x81), h[0], "a final text frame")
	n := int(h[1] & 0x7f)
	switch n {
	case 126:
		var l [2]byte
		_, err = io.ReadFull(br, l[:])
		n = int(binary.BigEndian.Uint16(l[:]))
	case 127:
		var l [8]byte
		_, err = io.ReadFull(br, l[:])
		n = int(binary.BigEndian.Uint64(l[:]))
	}
	require.NoError(t, err)
	payload := make([]byte, n)
	_, err = io.ReadFull(br, payload)
	require.NoError(t, err)
	return payload
}

// The heartbeat keeps pinging: each pong re-arms it for the next ping,
// and a joined rank that answers stays, however many intervals pass.
func TestHeartbeatKeepsPinging(t *testing.T) {
	srv, url := startServer(t, func(c *Config) {
		c.PingInterval = 10 * time.Millisecond
		c.PingTimeout = hangGuard // a slow pong on a loaded machine is no failure here
	})
	const want = 5
	pinged := make(chan struct{}, want)
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{OnPingReceived: func(context.Context, []byte) bool {
		select {
		case pinged <- struct{}{}:
		default:
		}
		return true
	}})
	require.NoError(t, err)
	defer ws.CloseNow()
	rawSend(t, ws, &Join{Job: "beat", Token: mint(t, "beat", 2), Kind: KindNative})
	_, data, err := ws.Read(ctx)
	require.NoError(t, err)
	m, err := Decode(data)
	require.NoError(t, err)
	require.IsType(t, &Welcome{}, m)
	ws.CloseRead(ctx) // pings are answered while it reads
	for range want {
		select {
		case <-pinged:
		case <-ctx.Done():
			t.Fatal("the heartbeat stopped")
		}
	}
	st := srv.Stats()
	require.Equal(t, 1, st.Ranks)
	require.Zero(t, st.Departures)
}
