//go:build js

package meshmpi

import (
	"syscall/js"
	"testing"
)

// In the browser, Yield lets the event loop run: a message posted to
// another MessageChannel before the Yield is delivered before it returns,
// which a busy loop with runtime.Gosched never allows.
func TestYieldRunsEventLoop(t *testing.T) {
	ch := js.Global().Get("MessageChannel").New()
	got := make(chan struct{}, 1)
	f := js.FuncOf(func(js.Value, []js.Value) any { got <- struct{}{}; return nil })
	defer f.Release()
	ch.Get("port1").Set("onmessage", f)
	defer ch.Get("port1").Set("onmessage", js.Null())
	ch.Get("port2").Call("postMessage", "hello")
	Yield()
	select {
	case <-got:
	default:
		t.Fatal("the message posted before Yield was not delivered during it")
	}
}
