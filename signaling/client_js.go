package signaling

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall/js"
	"time"

	"github.com/meshmpi/meshmpi/internal/jsglue"
)

// A browser rank talks to the server through the page's own WebSocket
// rather than coder/websocket: coder's js build keeps net/http (and with it
// crypto/tls and crypto/x509) in the binary for its Dial signature, about
// 1.4 MB of a rank's 1.9 MB gzipped.

// closeWait bounds how long close waits for the server to answer its close
// frame, as coder/websocket does natively.
const closeWait = 5 * time.Second

// statusNormal is the websocket status of an orderly close (RFC 6455
// §7.4.1), the only code under 3000 a page may send.
const statusNormal = 1000

// jsTransport is the Client's transport in a browser or worker: the global
// WebSocket. Its handlers copy each message synchronously into an ordered
// queue and return, so no goroutine is started per message and none blocks
// in a JavaScript callback. A page cannot pause a WebSocket: messages the
// Client has not taken wait in that queue (the server's own rate limit
// bounds how fast it grows).
type jsTransport struct {
	ws                         js.Value
	onOpen, onMessage, onClose js.Func

	opened chan struct{} // closed by the open event
	closed chan struct{} // closed by the close event, after closeErr is set
	ready  chan struct{} // cap 1: the queue may hold a message

	mu    sync.Mutex // guards queue
	queue []jsMessage

	closeErr *closeError // read after closed is closed
}

// jsMessage is one received message, or why it was refused.
type jsMessage struct {
	data []byte
	text bool
	err  error
}

// closeError is how the browser reported the socket's end.
type closeError struct {
	code   int
	reason string
	clean  bool
}

func (e *closeError) Error() string {
	s := fmt.Sprintf("signaling: websocket closed with status %d", e.code)
	if e.reason != "" {
		s += " (" + e.reason + ")"
	}
	if !e.clean {
		s += " without a closing handshake"
	}
	return s
}

var errNotOpen = errors.New("signaling: websocket is closing")

// dialTransport opens a WebSocket to url and waits for it to open, to
// close, or for ctx to end (which abandons the connection).
func dialTransport(ctx context.Context, url string) (transport, error) {
	// coder/websocket accepts http(s) URLs; so does this transport.
	if rest, ok := strings.CutPrefix(url, "http"); ok {
		url = "ws" + rest
	}
	t := &jsTransport{
		opened: make(chan struct{}),
		closed: make(chan struct{}),
		ready:  make(chan struct{}, 1),
	}
	if err := jsglue.Try(func() { t.ws = js.Global().Get("WebSocket").New(url) }); err != nil {
		return nil, fmt.Errorf("signaling: websocket: %w", err)
	}
	t.ws.Set("binaryType", "arraybuffer")
	t.onOpen = js.FuncOf(func(js.Value, []js.Value) any { close(t.opened); return nil })
	t.onMessage = js.FuncOf(t.message)
	t.onClose = js.FuncOf(t.closeEvent)
	t.ws.Set("onopen", t.onOpen)
	t.ws.Set("onmessage", t.onMessage)
	t.ws.Set("onclose", t.onClose)
	// An error event is always followed by a close event, which says more.
	select {
	case <-t.opened:
		return t, nil
	case <-t.closed:
		return nil, t.closeErr
	case <-ctx.Done():
		_ = t.closeNow()
		return nil, context.Cause(ctx)
	}
}

// message is the onmessage handler: one synchronous copy into the queue.
func (t *jsTransport) message(_ js.Value, args []js.Value) any {
	d := args[0].Get("data")
	var m jsMessage
	if d.Type() == js.TypeString {
		// syscall/js cannot read a primitive string's length without
		// copying it; the server's messages are bounded anyway.
		if s := d.String(); len(s) > MaxMessageBytes {
			m.err = fmt.Errorf("%w: %d bytes > %d", ErrTooLarge, len(s), MaxMessageBytes)
		} else {
			m.data, m.text = []byte(s), true
		}
	} else {
		if n := d.Get("byteLength").Int(); n > MaxMessageBytes {
			m.err = fmt.Errorf("%w: %d bytes > %d", ErrTooLarge, n, MaxMessageBytes)
		} else {
			m.data = make([]byte, n)
			js.CopyBytesToGo(m.data, js.Global().Get("Uint8Array").New(d))
		}
	}
	t.mu.Lock()
	t.queue = append(t.queue, m)
	t.mu.Unlock()
	select {
	case t.ready <- struct{}{}:
	default:
	}
	return nil
}

// closeEvent is the onclose handler. No event follows it, so it releases
// the handlers.
func (t *jsTransport) closeEvent(_ js.Value, args []js.Value) any {
	e := args[0]
	t.closeErr = &closeError{code: e.Get("code").Int(), reason: e.Get("reason").String(), clean: e.Get("wasClean").Bool()}
	close(t.closed)
	for _, name := range []string{"onopen", "onmessage", "onclose"} {
		t.ws.Set(name, js.Null())
	}
	t.onOpen.Release()
	t.onMessage.Release()
	t.onClose.Release()
	return nil
}

func (t *jsTransport) pop() (jsMessage, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.queue) == 0 {
		return jsMessage{}, false
	}
	m := t.queue[0]
	t.queue[0] = jsMessage{}
	t.queue = t.queue[1:]
	return m, true
}

// read returns the queued messages in order; once the socket has closed
// and the queue is empty, it returns how the socket closed.
func (t *jsTransport) read(ctx context.Context) ([]byte, bool, error) {
	for {
		if m, ok := t.pop(); ok {
			return m.data, m.text, m.err
		}
		select {
		case <-t.ready:
		case <-t.closed:
			// Every message event came before the close event.
			if m, ok := t.pop(); ok {
				return m.data, m.text, m.err
			}
			return nil, false, t.closeErr
		case <-ctx.Done():
			return nil, false, context.Cause(ctx)
		}
	}
}

// write hands data to the browser, which queues it; it never blocks.
func (t *jsTransport) write(ctx context.Context, data []byte) error {
	if err := context.Cause(ctx); err != nil {
		return err
	}
	select {
	case <-t.closed:
		return t.closeErr
	default:
	}
	// A closing WebSocket drops what it is given without an error.
	if t.ws.Get("readyState").Int() != 1 { // OPEN
		return errNotOpen
	}
	if err := jsglue.Try(func() { t.ws.Call("send", string(data)) }); err != nil {
		return fmt.Errorf("signaling: websocket send: %w", err)
	}
	return nil
}

// close starts the closing handshake and waits, at most closeWait, for
// the close event. A socket already closed cleanly closes without error.
func (t *jsTransport) close() error {
	if err := t.closeNow(); err != nil {
		return err
	}
	timer := time.NewTimer(closeWait)
	defer timer.Stop()
	select {
	case <-t.closed:
		if !t.closeErr.clean {
			return t.closeErr
		}
		return nil
	case <-timer.C:
		return fmt.Errorf("signaling: websocket close: no answer from the server in %v", closeWait)
	}
}

// closeNow starts the closing handshake and returns: a page cannot drop a
// WebSocket without one. It does nothing on a closing or closed socket.
func (t *jsTransport) closeNow() error {
	if err := jsglue.Try(func() { t.ws.Call("close", statusNormal) }); err != nil {
		return fmt.Errorf("signaling: websocket close: %w", err)
	}
	return nil
}

// defaultAgent is Join.Agent in a browser or worker: its user agent.
func defaultAgent() string {
	nav := js.Global().Get("navigator")
	if nav.Type() != js.TypeObject {
		return "meshmpi js/wasm"
	}
	ua := nav.Get("userAgent")
	if ua.Type() != js.TypeString {
		return "meshmpi js/wasm"
	}
	return ua.String()
}

// startHeartbeat does nothing in a browser: a hidden tab's timers are
// throttled (to once a minute after a while), so its beats would come
// late; the server's websocket pings, which the browser itself answers,
// keep it alive instead.
func (c *Client) startHeartbeat(time.Duration) {}
