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
// A message's way through the link costs what it crosses between Go and
// JavaScript: each call from Go into JavaScript, and each js.Value of an
// object (Go gives it a finalizer), costs more than copying a frame, and
// a call from JavaScript into Go (a js.Func) costs most of all. So the
// data path runs through a small JavaScript helper (linkShim, built once
// per page with the Function constructor):
//
//   - Inbound, the channel's onmessage is the helper's plain JavaScript
//     function: it appends the message (binaryType "arraybuffer") to an
//     ordered queue and calls into Go (the wake js.Func, no arguments)
//     only when the pump is not already draining the queue. The pump, one
//     goroutine, takes the messages in order: next() copies the oldest
//     into a staging array and returns its length, js.CopyBytesToGo
//     copies it into the link's one frame buffer, and HandleFrame gets
//     it. No js.Value is made per message.
//   - Outbound, WriteFrame copies the header and the payload into the
//     helper's staging array (js.CopyBytesToJS; a small frame assembled in
//     Go first, one copy) and calls send(n), which sends the array's first
//     n bytes and returns the channel's bufferedAmount: WriteFrame reports
//     not ready at the high-water mark, and the bufferedamountlow event
//     (threshold: the low-water mark) wakes the pump for HandleWritable.
//
// The queue needs no bound of its own: the Go runtime runs every runnable
// goroutine, the pump included, before it returns control to the browser
// after a callback (runtime handleEvent), so the queue only grows while
// HandleFrame itself is stalled.

// jsLink is a Link over one browser RTCDataChannel.
type jsLink struct {
	pc, dc   js.Value
	maxFrame int
	high     int // WriteFrame reports not ready at or above this bufferedAmount
	low      int // bufferedamountlow fires when it falls to this

	funcs []js.Func // every callback the link installed; released at teardown

	// shim is the link's linkShim object: the channel's onmessage and
	// queue, next and send (its staging arrays are sendBuf and recvBuf)
	shim, next, send js.Value
	sendBuf, recvBuf js.Value // Uint8Array(MaxWebRTCFrame) each: frames out and in
	sendTail         js.Value // sendBuf from HeaderLen: a large payload is copied there directly

	wmu  sync.Mutex // guards wbuf
	wbuf []byte

	rbuf []byte // the frame being delivered (the pump's only)
	rerr error  // the first malformed message taken from the queue

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
	if err := l.installShim(); err != nil {
		return nil, err
	}
	l.on(l.dc, "onbufferedamountlow", func(js.Value) { poke(l.writable) })

	if err := setup.negotiate(ctx, sig, offerer, l, cfg.RemoteFingerprint); err != nil {
		return nil, err
	}
	if err := l.opened(); err != nil {
		return nil, err
	}
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
// from the remote's max-message-size (RTCSctpTransport.maxMessageSize)
// and the low-water threshold.
func (l *jsLink) opened() error {
	// maxMessageSize is the remote's max-message-size, capped by what
	// this browser can send (Chromium 262,144; Firefox 1,073,741,823);
	// +Infinity where the remote advertised no limit
	m := 0
	if s := l.pc.Get("sctp"); s.Truthy() {
		if v := s.Get("maxMessageSize"); v.Type() == js.TypeNumber && v.Float() > 0 {
			m = int(min(v.Float(), float64(MaxWebRTCFrame)))
		}
	}
	f, err := linkFrame(m)
	if err != nil {
		return err
	}
	l.maxFrame = f
	l.wbuf = make([]byte, 0, l.maxFrame)
	l.dc.Set("bufferedAmountLowThreshold", l.low)
	return nil
}

// linkShimSource is the body of the JavaScript function (arguments dc,
// wake, max) that takes over a data channel's messages for a jsLink: see
// the comment at the top of this file. next() returns the oldest queued
// message's length (copied into recv when it fits in max bytes), plus
// shimMore when more messages are queued behind it; shimEmpty for none;
// shimText for a text message. Once it has returned the last message,
// the next one to arrive calls wake. send(n) sends stage's first n bytes
// and returns the channel's bufferedAmount, or shimFailed (err says why).
// pending() counts the messages queued (for tests). The numbers in the
// source are the shim constants below.
const linkShimSource = `
const q = [];
let head = 0, woken = false;
const o = {recv: new Uint8Array(max), stage: new Uint8Array(max), err: ""};
dc.onmessage = (ev) => {
	q.push(ev.data);
	if (!woken) {
		woken = true;
		wake();
	}
};
o.next = () => {
	if (head === q.length) {
		woken = false;
		return -1;
	}
	const d = q[head];
	q[head++] = undefined;
	let more = 1073741824;
	if (head === q.length) {
		q.length = 0;
		head = 0;
		woken = false;
		more = 0;
	}
	if (typeof d === "string") return -2;
	const n = d.byteLength;
	if (n <= max) o.recv.set(new Uint8Array(d));
	return n + more;
};
o.pending = () => q.length - head;
o.send = (n) => {
	try {
		dc.send(n === max ? o.stage : o.stage.subarray(0, n));
		return dc.bufferedAmount;
	} catch (e) {
		o.err = String(e && e.message || e);
		return -3;
	}
};
return o;
`

// The values of linkShimSource's next and send besides lengths.
const (
	shimEmpty  = -1
	shimText   = -2
	shimFailed = -3
	shimMore   = 1 << 30
)

// linkShim is linkShimSource as a function, made once.
var linkShim = sync.OnceValues(func() (f js.Value, err error) {
	err = jsglue.Try(func() { f = js.Global().Get("Function").New("dc", "wake", "max", linkShimSource) })
	return f, err
})

// installShim puts the link's messages in linkShim's hands: the
// channel's onmessage, and the wake callback that pokes the pump.
func (l *jsLink) installShim() error {
	f, err := linkShim()
	if err != nil {
		return fmt.Errorf("the browser link's JavaScript helper (a Content-Security-Policy without 'unsafe-eval' forbids the Function constructor): %w", err)
	}
	wake := js.FuncOf(func(js.Value, []js.Value) any {
		poke(l.wake)
		return nil
	})
	l.funcs = append(l.funcs, wake)
	l.shim = f.Invoke(l.dc, wake, MaxWebRTCFrame)
	l.next, l.send = l.shim.Get("next"), l.shim.Get("send")
	l.recvBuf, l.sendBuf = l.shim.Get("recv"), l.shim.Get("stage")
	l.sendTail = l.sendBuf.Call("subarray", HeaderLen)
	l.rbuf = make([]byte, MaxWebRTCFrame)
	return nil
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
// copied straight from the caller's buffer, and send returns the
// bufferedAmount it left.
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
	buffered := l.send.Invoke(n).Int()
	l.wmu.Unlock()
	if buffered == shimFailed {
		err := fmt.Errorf("webrtc link: send: %s", l.shim.Get("err").String())
		l.lose(err)
		return false, err
	}
	l.sent.Add(int64(n))
	return buffered < l.high, nil
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
// whether more are queued behind it. A malformed message loses the link.
func (l *jsLink) deliver() bool {
	if l.closed.Load() || l.rerr != nil {
		return false
	}
	r := l.next.Invoke().Int()
	if r < 0 {
		if r == shimText {
			l.rerr = fmt.Errorf("%w: text message on the data channel", ErrFrame)
			l.lose(l.rerr)
		}
		return false
	}
	n := r &^ shimMore
	if n > len(l.rbuf) {
		l.rerr = fmt.Errorf("%w: %d-byte message exceeds %d", ErrFrame, n, len(l.rbuf))
		l.lose(l.rerr)
		return false
	}
	f := l.rbuf[:n]
	js.CopyBytesToGo(f, l.recvBuf)
	l.received.Add(int64(n))
	hdr, payload := f, []byte(nil)
	if n > HeaderLen {
		hdr, payload = f[:HeaderLen], f[HeaderLen:]
	}
	l.call(func() { l.h.HandleFrame(hdr, payload) })
	return r&shimMore != 0
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
