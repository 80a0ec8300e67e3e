//go:build js

package meshmpi

import (
	"runtime"
	"sync"
	"syscall/js"
)

// yieldNow is Yield in the browser: a MessageChannel round trip, or
// runtime.Gosched where the JavaScript host has none.
func yieldNow() {
	if !browserYield.init() {
		runtime.Gosched()
		return
	}
	browserYield.roundTrip()
}

// browserYield is the MessageChannel Yield posts to: a message posted on
// one port arrives on the other as a new task, after the browser has run
// the tasks queued before it (unlike a promise, which runs before them,
// and setTimeout, which browsers clamp to 4 ms when nested).
var browserYield yielder

type yielder struct {
	once  sync.Once
	ok    bool
	port  js.Value // the port Yield posts on
	onMsg js.Func  // kept for the program's life

	mu      sync.Mutex
	waiters []chan struct{} // one per posted message, in posting order
	free    []chan struct{}
}

// init creates the channel on first use; it reports false where the
// JavaScript host has no MessageChannel.
func (y *yielder) init() bool {
	y.once.Do(func() {
		ctor := js.Global().Get("MessageChannel")
		if ctor.Type() != js.TypeFunction {
			return
		}
		ch := ctor.New()
		y.onMsg = js.FuncOf(func(js.Value, []js.Value) any {
			y.mu.Lock()
			w := y.waiters[0]
			y.waiters[0] = nil
			y.waiters = y.waiters[1:]
			y.mu.Unlock()
			w <- struct{}{} // cap 1, one message per waiter: never blocks
			return nil
		})
		ch.Get("port1").Set("onmessage", y.onMsg)
		y.port = ch.Get("port2")
		y.ok = true
	})
	return y.ok
}

func (y *yielder) roundTrip() {
	y.mu.Lock()
	var w chan struct{}
	if k := len(y.free); k > 0 {
		w, y.free = y.free[k-1], y.free[:k-1]
	} else {
		w = make(chan struct{}, 1)
	}
	y.waiters = append(y.waiters, w)
	y.mu.Unlock()
	y.port.Call("postMessage", js.Null())
	<-w
	y.mu.Lock()
	y.free = append(y.free, w)
	y.mu.Unlock()
}
