//go:build !js

package signaling

import (
	"context"
	"runtime"
	"time"

	"github.com/coder/websocket"
)

// wsTransport is the Client's transport on native and wasip1 builds.
type wsTransport struct {
	c *websocket.Conn
	// turn is the right to write, one writer at a time: a sender waits
	// for it as long as its context allows, then writes under a context
	// of the transport's own (see write)
	turn chan struct{}
}

func dialTransport(ctx context.Context, url string) (transport, error) {
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(MaxMessageBytes)
	return wsTransport{c, make(chan struct{}, 1)}, nil
}

func (t wsTransport) read(ctx context.Context) ([]byte, bool, error) {
	typ, data, err := t.c.Read(ctx)
	return data, typ == websocket.MessageText, err
}

// write sends one message. coder/websocket closes the connection when a
// write's context ends in the middle of the frame, so a sender whose
// deadline ran out while it queued behind others (many links forming at
// once, a starved machine) would cost the rank its seat. The caller's
// context bounds only the wait for its turn; the frame itself is written
// under frameWrite, which only a socket that stays blocked exhausts.
func (t wsTransport) write(ctx context.Context, data []byte) error {
	select {
	case t.turn <- struct{}{}:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	defer func() { <-t.turn }()
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), frameWrite)
	defer cancel()
	return t.c.Write(wctx, websocket.MessageText, data)
}

func (t wsTransport) close() error    { return t.c.Close(websocket.StatusNormalClosure, "") }
func (t wsTransport) closeNow() error { return t.c.CloseNow() }

// frameWrite bounds the write of one message once it has its turn: a
// socket blocked that long is gone (the server drops a reader that slow).
const frameWrite = 30 * time.Second

// heartbeatWrite bounds a heartbeat's wait for its turn.
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
		// not bounded by the period: a heartbeat queued behind a slow
		// write on a loaded machine still goes, and no reason to lose the
		// seat (a socket that stays blocked is the server's to drop)
		ctx, cancel := context.WithTimeout(context.Background(), heartbeatWrite)
		_ = c.Send(ctx, &Pong{})
		cancel()
	}
}

// defaultAgent is Join.Agent natively and under wasip1.
func defaultAgent() string {
	return "meshmpi " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
}
