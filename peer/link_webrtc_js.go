//go:build js && wasm

package peer

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall/js"
	"time"

	"github.com/meshmpi/meshmpi/internal/jsglue"
)

// The browser link: a thin syscall/js layer over the page's
// RTCPeerConnection and one negotiated RTCDataChannel. pion's js build is
// not used: it starts a goroutine per incoming message (so order is lost,
// pion issue 747), cannot run without window.RTCPeerConnection and adds
// about 2 MB to every rank.
//
// Inbound, the channel's onmessage copies each message synchronously
// (binaryType "arraybuffer", js.CopyBytesToGo) into a recycled buffer at
// the tail of an ordered queue and returns; one goroutine, the pump,
// drains the queue into HandleFrame. Outbound, WriteFrame copies the frame
// into one JS Uint8Array the link owns and calls send(), then compares the
// channel's bufferedAmount with the high-water mark; the
// bufferedamountlow event (threshold: the low-water mark) wakes the pump
// for HandleWritable.
//
// The queue needs no bound of its own: the Go runtime runs every runnable
// goroutine, the pump included, before it returns control to the browser
// after a callback (runtime handleEvent), so the queue only grows while
// HandleFrame itself is stalled.

// jsLink is a Link over one browser RTCDataChannel.
type jsLink struct {
	pc, dc   js.Value
	sendBuf  js.Value // Uint8Array(maxFrame) the frames are staged in for send()
	sendTail js.Value // sendBuf from HeaderLen: a large payload is copied there directly
	maxFrame int
	high     int // WriteFrame reports not ready at or above this bufferedAmount
	low      int // bufferedamountlow fires when it falls to this

	funcs []js.Func // every callback the link installed; released at teardown

	wmu  sync.Mutex // guards wbuf, the views and queued
	wbuf []byte
	// view is sendBuf's first viewLen bytes: frames of one length (a
	// ping-pong's, a stream's full frames) reuse it rather than ask for
	// a subarray per send
	view    js.Value
	viewLen int
	// queued bounds the channel's bufferedAmount from above: the amount
	// last read plus what was sent since (it only falls meanwhile), so
	// it is read only when the bound reaches the high-water mark
	queued int

	qmu   sync.Mutex
	queue [][]byte // frames received and not yet delivered, in order
	free  [][]byte // delivered frames' buffers, reused
	qerr  error    // a frame that could not be queued (too large)

	mu      sync.Mutex
	h       LinkHandler
	started bool
	closed  atomic.Bool

	wake      chan struct{} // cap 1: frames queued
	writable  chan struct{} // cap 1: bufferedAmount fell to low water
	lost      chan struct{} // closed once the peer is lost
	lostOnce  sync.Once
	lostErr   error
	closing   chan struct{}
	closeOnce sync.Once
	downOnce  sync.Once
	pumpDone  chan struct{}
	inHandler atomic.Bool // the pump is inside a handler call

	pathMu sync.Mutex
	path   Path // the ICE pair the link took, read once it opened (Path) and at each RefreshPath

	// sent and received count the frames' bytes (Counts)
	sent, received atomic.Int64

	setup *rtcSetup // the link's signaling, from the first offer to close
}

// Path implements PathReporter: the candidate pair the page's ICE agent
// selected, and its round trip, as getStats() gave them when the link
// opened (getStats is asynchronous; a link's path rarely changes).
func (l *jsLink) Path() Path {
	l.pathMu.Lock()
	p := l.path
	l.pathMu.Unlock()
	p.Restarts = l.setup.restartCount()
	return p
}

// RefreshPath implements PathRefresher: it asks getStats() again (for
// the round trip now, or a path that changed) and returns the new path;
// a query that fails keeps the last one.
func (l *jsLink) RefreshPath(ctx context.Context) Path {
	if p := l.readPath(ctx); p.Local != "" {
		l.pathMu.Lock()
		l.path = p
		l.pathMu.Unlock()
	}
	return l.Path()
}

// Counts implements Counter.
func (l *jsLink) Counts() (sent, received int64, closed bool) {
	select {
	case <-l.lost:
		closed = true
	default:
		closed = l.closed.Load()
	}
	return l.sent.Load(), l.received.Load(), closed
}

// readPath reads the selected candidate pair from getStats(): the
// transport's selectedCandidatePairId, or else the nominated succeeded
// pair (browsers that do not name it).
func (l *jsLink) readPath(ctx context.Context) Path {
	p := Path{Link: "webrtc"}
	var promise js.Value
	if jsglue.Try(func() { promise = l.pc.Call("getStats") }) != nil {
		return p
	}
	report, err := await(ctx, promise)
	if err != nil {
		return p
	}
	stats := map[string]js.Value{}
	var selected string
	forEach := js.FuncOf(func(_ js.Value, args []js.Value) any {
		st := args[0]
		id := st.Get("id").String()
		stats[id] = st
		switch st.Get("type").String() {
		case "transport":
			if v := st.Get("selectedCandidatePairId"); v.Type() == js.TypeString {
				selected = v.String()
			}
		case "candidate-pair":
			if selected == "" && st.Get("nominated").Truthy() && st.Get("state").String() == "succeeded" {
				selected = id
			}
		}
		return nil
	})
	defer forEach.Release()
	if jsglue.Try(func() { report.Call("forEach", forEach) }) != nil {
		return p
	}
	pair, ok := stats[selected]
	if !ok {
		return p
	}
	cand := func(id js.Value) (typ, addr string) {
		c, ok := stats[id.String()]
		if !ok {
			return "", ""
		}
		ip := c.Get("address")
		if ip.Type() != js.TypeString {
			ip = c.Get("ip")
		}
		if ip.Type() == js.TypeString && c.Get("port").Type() == js.TypeNumber {
			// net.JoinHostPort, without linking package net into the page
			host := ip.String()
			if strings.Contains(host, ":") {
				host = "[" + host + "]"
			}
			addr = host + ":" + strconv.Itoa(c.Get("port").Int())
		}
		return c.Get("candidateType").String(), addr
	}
	p.Local, p.LocalAddr = cand(pair.Get("localCandidateId"))
	p.Remote, p.RemoteAddr = cand(pair.Get("remoteCandidateId"))
	if rtt := pair.Get("currentRoundTripTime"); rtt.Type() == js.TypeNumber {
		p.RTT = time.Duration(rtt.Float() * float64(time.Second))
	}
	return p
}

// connect builds the page's RTCPeerConnection and its negotiated data
// channel, and runs negotiate on them; cfg is valid, defaults applied.
func connect(ctx context.Context, cfg WebRTCConfig, sig Signaler, offerer bool) (_ Link, err error) {
	ctor := js.Global().Get("RTCPeerConnection")
	if ctor.Type() != js.TypeFunction {
		return nil, fmt.Errorf("this JavaScript context has no RTCPeerConnection (a worker or Node): %w", ErrNotSupported)
	}

	l := &jsLink{
		high:     cfg.HighWater,
		low:      cfg.LowWater,
		wake:     make(chan struct{}, 1),
		writable: make(chan struct{}, 1),
		lost:     make(chan struct{}),
		closing:  make(chan struct{}),
		pumpDone: make(chan struct{}),
		setup:    newRTCSetup(),
	}
	defer func() {
		if err != nil {
			l.teardown()
		}
	}()
	if err := jsglue.Try(func() { l.pc = ctor.New(rtcConfig(cfg)) }); err != nil {
		return nil, fmt.Errorf("new RTCPeerConnection: %w", err)
	}
	init := js.Global().Get("Object").New()
	init.Set("negotiated", true)
	init.Set("id", 0)
	init.Set("ordered", true)
	if err := jsglue.Try(func() { l.dc = l.pc.Call("createDataChannel", "meshmpi", init) }); err != nil {
		return nil, fmt.Errorf("createDataChannel: %w", err)
	}
	l.dc.Set("binaryType", "arraybuffer")

	setup := l.setup
	l.on(l.pc, "onicecandidate", func(ev js.Value) {
		c := ev.Get("candidate")
		if c.IsNull() || c.IsUndefined() || c.Get("candidate").String() == "" {
			return // end of candidates
		}
		setup.localCandidate([]byte(js.Global().Get("JSON").Call("stringify", c).String()))
	})
	l.on(l.pc, "oniceconnectionstatechange", func(js.Value) {
		setup.iceState(l.pc.Get("iceConnectionState").String())
	})
	l.on(l.pc, "onconnectionstatechange", func(js.Value) {
		switch s := l.pc.Get("connectionState").String(); s {
		case "failed", "closed":
			l.lose(fmt.Errorf("peer connection %s", s))
		}
	})
	l.on(l.dc, "onopen", func(js.Value) { setup.open() })
	l.on(l.dc, "onclose", func(js.Value) { l.lose(errors.New("data channel closed")) })
	l.on(l.dc, "onerror", func(ev js.Value) {
		msg := "data channel error"
		if e := ev.Get("error"); e.Truthy() {
			msg += ": " + e.Get("message").String()
		}
		l.lose(errors.New(msg))
	})
	// installed before the channel opens: a message that arrives before a
	// handler exists would be lost
	l.on(l.dc, "onmessage", l.onMessage)
	l.on(l.dc, "onbufferedamountlow", func(js.Value) { poke(l.writable) })

	if err := setup.negotiate(ctx, sig, offerer, l, cfg.RemoteFingerprint); err != nil {
		return nil, err
	}
	l.opened()
	p := l.readPath(ctx)
	l.pathMu.Lock()
	l.path = p
	l.pathMu.Unlock()
	setup.keep(sig, offerer, l, cfg.RemoteFingerprint)
	return l, nil
}

// createLocal implements rtcPeer.
func (l *jsLink) createLocal(ctx context.Context, typ string) (string, error) {
	create, opts := "createAnswer", js.Undefined()
	switch typ {
	case "offer":
		create = "createOffer"
	case "restart":
		create, opts = "createOffer", js.Global().Get("Object").New()
		opts.Set("iceRestart", true)
	}
	d, err := await(ctx, l.pc.Call(create, opts))
	if err != nil {
		return "", fmt.Errorf("%s: %w", create, err)
	}
	if _, err := await(ctx, l.pc.Call("setLocalDescription", d)); err != nil {
		return "", fmt.Errorf("setLocalDescription: %w", err)
	}
	return d.Get("sdp").String(), nil
}

// setRemote implements rtcPeer.
func (l *jsLink) setRemote(ctx context.Context, typ, sdp string) error {
	d := js.Global().Get("Object").New()
	d.Set("type", typ)
	d.Set("sdp", sdp)
	_, err := await(ctx, l.pc.Call("setRemoteDescription", d))
	return err
}

// addCandidate implements rtcPeer.
func (l *jsLink) addCandidate(ctx context.Context, init []byte) error {
	var c js.Value
	if err := jsglue.Try(func() { c = js.Global().Get("JSON").Call("parse", string(init)) }); err != nil || c.Type() != js.TypeObject {
		return fmt.Errorf("%q is not a JSON object", init)
	}
	_, err := await(ctx, l.pc.Call("addIceCandidate", c))
	return err
}

// failed and failure implement rtcPeer.
func (l *jsLink) failed() <-chan struct{} { return l.lost }
func (l *jsLink) failure() error          { return l.lostErr }

// rtcConfig is the RTCConfiguration of cfg.
func rtcConfig(cfg WebRTCConfig) js.Value {
	servers := js.Global().Get("Array").New()
	for _, s := range cfg.ICEServers {
		o := js.Global().Get("Object").New()
		urls := js.Global().Get("Array").New()
		for _, u := range s.URLs {
			urls.Call("push", u)
		}
		o.Set("urls", urls)
		if s.Username != "" {
			o.Set("username", s.Username)
			o.Set("credential", s.Credential)
		}
		servers.Call("push", o)
	}
	c := js.Global().Get("Object").New()
	c.Set("iceServers", servers)
	if cfg.Identity != nil {
		certs := js.Global().Get("Array").New()
		certs.Call("push", cfg.Identity.cert)
		c.Set("certificates", certs)
	}
	return c
}

// opened finishes the link once its data channel is open: the frame limit
// from the remote's max-message-size (RTCSctpTransport.maxMessageSize),
// the send staging buffer and the low-water threshold.
func (l *jsLink) opened() {
	l.maxFrame = MaxWebRTCFrame
	if s := l.pc.Get("sctp"); s.Truthy() {
		if m := s.Get("maxMessageSize"); m.Type() == js.TypeNumber && m.Int() > 0 {
			l.maxFrame = min(m.Int(), MaxWebRTCFrame)
		}
	}
	l.sendBuf = uint8Array.New(l.maxFrame)
	l.sendTail = l.sendBuf.Call("subarray", HeaderLen)
	l.wbuf = make([]byte, 0, l.maxFrame)
	l.dc.Set("bufferedAmountLowThreshold", l.low)
}

// on installs fn as obj's event handler property name (onmessage …) and
// keeps the js.Func for teardown.
func (l *jsLink) on(obj js.Value, name string, fn func(ev js.Value)) {
	f := js.FuncOf(func(_ js.Value, args []js.Value) any {
		ev := js.Undefined()
		if len(args) > 0 {
			ev = args[0]
		}
		fn(ev)
		return nil
	})
	l.funcs = append(l.funcs, f)
	obj.Set(name, f)
}

// onMessage is the channel's onmessage: one synchronous copy into the
// queue, in arrival order; it never blocks and starts no goroutine.
func (l *jsLink) onMessage(ev js.Value) {
	data := ev.Get("data")
	if data.Type() == js.TypeString {
		l.lose(fmt.Errorf("%w: text message on the data channel", ErrFrame))
		return
	}
	view := uint8Array.New(data)
	n := view.Length()
	if n > MaxWebRTCFrame {
		l.lose(fmt.Errorf("%w: %d-byte message exceeds %d", ErrFrame, n, MaxWebRTCFrame))
		return
	}
	l.qmu.Lock()
	var b []byte
	if k := len(l.free); k > 0 {
		b, l.free = l.free[k-1], l.free[:k-1]
	} else {
		b = make([]byte, MaxWebRTCFrame)
	}
	b = b[:n]
	js.CopyBytesToGo(b, view)
	l.queue = append(l.queue, b)
	l.qmu.Unlock()
	poke(l.wake)
}

// uint8Array is the page's Uint8Array constructor, looked up once.
var uint8Array = js.Global().Get("Uint8Array")

// Bind implements Link: it starts the pump.
func (l *jsLink) Bind(h LinkHandler) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.started || l.closed.Load() {
		return
	}
	l.h, l.started = h, true
	go l.pump()
}

// MaxFrame implements Link.
func (l *jsLink) MaxFrame() int { return l.maxFrame }

// WriteFrame implements Link. send() copies the bytes it is given, so one
// staging array serves every frame. Each call into JavaScript costs more
// than a small copy, so a frame crosses in as few as it can: a small one
// is assembled in Go and copied over once, a large one's payload is
// copied straight from the caller's buffer; the view sent is reused
// while frames keep their length; bufferedAmount is read only near the
// high-water mark.
func (l *jsLink) WriteFrame(hdr, payload []byte) (bool, error) {
	n := len(hdr) + len(payload)
	if n > l.maxFrame {
		return false, fmt.Errorf("webrtc link: %d-byte frame exceeds %d", n, l.maxFrame)
	}
	if l.closed.Load() {
		return false, ErrClosed
	}
	l.wmu.Lock()
	if len(hdr) == HeaderLen && len(payload) >= directPayload {
		js.CopyBytesToJS(l.sendBuf, hdr)
		js.CopyBytesToJS(l.sendTail, payload)
	} else {
		l.wbuf = append(append(l.wbuf[:0], hdr...), payload...)
		js.CopyBytesToJS(l.sendBuf, l.wbuf)
	}
	if n != l.viewLen {
		l.view, l.viewLen = l.sendBuf, n
		if n != l.maxFrame {
			l.view = l.sendBuf.Call("subarray", 0, n)
		}
	}
	err := jsglue.Try(func() { l.dc.Call("send", l.view) })
	ready := true
	if err == nil {
		if l.queued += n; l.queued >= l.high {
			l.queued = l.dc.Get("bufferedAmount").Int()
			ready = l.queued < l.high
		}
	}
	l.wmu.Unlock()
	if err != nil {
		err = fmt.Errorf("webrtc link: send: %w", err)
		l.lose(err)
		return false, err
	}
	l.sent.Add(int64(n))
	return ready, nil
}

// directPayload is the payload size from which WriteFrame copies the
// payload into the staging array itself (a second call into JavaScript)
// rather than after the header in Go (a copy of the payload).
const directPayload = 4 << 10

// pump delivers queued frames in order, then the writable and close
// events, and tears the link down at the end.
func (l *jsLink) pump() {
	defer close(l.pumpDone)
	for {
		for l.deliver() {
		}
		select {
		case <-l.wake:
		case <-l.writable:
			l.call(func() { l.h.HandleWritable() })
		case <-l.lost:
			for l.deliver() { // what arrived before the loss is still the remote's
			}
			if !l.closed.Load() {
				l.call(func() { l.h.HandleClose(fmt.Errorf("webrtc link: %w: %w", ErrProcFailed, l.lostErr)) })
			}
			l.teardown()
			return
		case <-l.closing:
			l.teardown()
			return
		}
	}
}

// deliver hands the oldest queued frame to the handler and reports
// whether there was one.
func (l *jsLink) deliver() bool {
	if l.closed.Load() {
		return false
	}
	l.qmu.Lock()
	if len(l.queue) == 0 {
		l.qmu.Unlock()
		return false
	}
	f := l.queue[0]
	l.queue[0] = nil
	l.queue = l.queue[1:]
	if len(l.queue) == 0 {
		l.queue = l.queue[:0:0] // let the backing array be reused from the start
	}
	l.qmu.Unlock()
	l.received.Add(int64(len(f)))
	hdr, payload := f, []byte(nil)
	if len(f) > HeaderLen {
		hdr, payload = f[:HeaderLen], f[HeaderLen:]
	}
	l.call(func() { l.h.HandleFrame(hdr, payload) })
	l.qmu.Lock()
	l.free = append(l.free, f[:cap(f)])
	l.qmu.Unlock()
	return true
}

func (l *jsLink) call(fn func()) {
	l.inHandler.Store(true)
	fn()
	l.inHandler.Store(false)
}

// lose records the first reason the link failed.
func (l *jsLink) lose(err error) {
	l.lostOnce.Do(func() {
		l.lostErr = err
		close(l.lost)
	})
}

// teardown detaches every handler from the page's objects before it
// releases the js.Funcs (an event that reached a released Func would
// crash the program), then closes the channel and the connection.
func (l *jsLink) teardown() {
	l.downOnce.Do(func() {
		l.setup.close() // before the connection it restarts goes
		for _, o := range []struct {
			v     js.Value
			names []string
		}{
			{l.dc, []string{"onopen", "onclose", "onerror", "onmessage", "onbufferedamountlow"}},
			{l.pc, []string{"onicecandidate", "oniceconnectionstatechange", "onconnectionstatechange"}},
		} {
			if o.v.Truthy() {
				for _, n := range o.names {
					o.v.Set(n, js.Null())
				}
			}
		}
		if l.dc.Truthy() {
			_ = jsglue.Try(func() { l.dc.Call("close") })
		}
		if l.pc.Truthy() {
			_ = jsglue.Try(func() { l.pc.Call("close") })
		}
		for _, f := range l.funcs {
			f.Release()
		}
		l.funcs = nil
		l.qmu.Lock()
		l.queue, l.free = nil, nil
		l.qmu.Unlock()
	})
}

// Close implements Link. It returns once the peer connection is closed and
// the pump has ended, unless called from inside a handler call (the pump
// ends as soon as that call returns). The remote side sees HandleClose;
// this side does not.
func (l *jsLink) Close() error {
	l.closeOnce.Do(func() {
		l.mu.Lock()
		l.closed.Store(true)
		started := l.started
		l.mu.Unlock()
		close(l.closing)
		if !started {
			l.teardown()
			close(l.pumpDone)
		}
	})
	if !l.inHandler.Load() {
		<-l.pumpDone
	}
	return nil
}

// await waits for promise p to settle. Its callbacks release themselves
// when it settles, so a wait abandoned when ctx ends never leaves a
// released js.Func for the promise to call.
func await(ctx context.Context, p js.Value) (js.Value, error) {
	type result struct {
		v   js.Value
		err error
	}
	done := make(chan result, 1)
	var then, catch js.Func
	release := func() { then.Release(); catch.Release() }
	then = js.FuncOf(func(_ js.Value, args []js.Value) any {
		release()
		v := js.Undefined()
		if len(args) > 0 {
			v = args[0]
		}
		done <- result{v: v}
		return nil
	})
	catch = js.FuncOf(func(_ js.Value, args []js.Value) any {
		release()
		msg := "promise rejected"
		if len(args) > 0 && args[0].Truthy() {
			if m := args[0].Get("message"); m.Type() == js.TypeString {
				msg = m.String()
			} else {
				msg = args[0].Call("toString").String()
			}
		}
		done <- result{err: errors.New(msg)}
		return nil
	})
	p.Call("then", then, catch)
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		return js.Undefined(), context.Cause(ctx)
	}
}
