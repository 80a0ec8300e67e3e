//go:build !js

package signaling

import (
	"context"
	"runtime"
	"time"

	"github.com/coder/websocket"
)

// wsTransport is the Client's transport on native and wasip1 builds.
type wsTransport struct{ c *websocket.Conn }

func dialTransport(ctx context.Context, url string) (transport, error) {
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(MaxMessageBytes)
	return wsTransport{c}, nil
}

func (t wsTransport) read(ctx context.Context) ([]byte, bool, error) {
	typ, data, err := t.c.Read(ctx)
	return data, typ == websocket.MessageText, err
}

func (t wsTransport) write(ctx context.Context, data []byte) error {
	return t.c.Write(ctx, websocket.MessageText, data)
}

func (t wsTransport) close() error    { return t.c.Close(websocket.StatusNormalClosure, "") }
func (t wsTransport) closeNow() error { return t.c.CloseNow() }

// heartbeatWrite bounds a heartbeat's write.
const heartbeatWrite = 30 * time.Second

// startHeartbeat starts the heartbeat the server asked for
// (Limits.HeartbeatMillis). Browser ranks send none (client_js.go).
func (c *Client) startHeartbeat(every time.Duration) { go c.heartbeat(every) }

// heartbeat sends a pong every period in which nothing else went, as the
// server asked (Limits.HeartbeatMillis): a server that hears from its
// ranks need not ping them.
func (c *Client) heartbeat(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-c.readEnd:
			return
		case <-t.C:
		}
		if time.Since(time.Unix(0, c.sentAt.Load())) < every/2 {
			continue
		}
		// not bounded by the period: a websocket write whose context
		// ends closes the connection, and a write slowed by a loaded
		// machine is no reason to lose the seat (a socket that stays
		// blocked is the server's to drop)
		ctx, cancel := context.WithTimeout(context.Background(), heartbeatWrite)
		_ = c.Send(ctx, &Pong{})
		cancel()
	}
}

// defaultAgent is Join.Agent natively and under wasip1.
func defaultAgent() string {
	return "meshmpi " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
}
