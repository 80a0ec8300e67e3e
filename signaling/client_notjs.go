//go:build !js

package signaling

import (
	"context"
	"runtime"

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

// defaultAgent is Join.Agent natively and under wasip1.
func defaultAgent() string {
	return "meshmpi " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
}
