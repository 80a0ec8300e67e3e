//go:build !js && !wasip1

package peer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/datachannel"
	"github.com/pion/ice/v4"
	"github.com/pion/webrtc/v4"
)

// ICE timing: a peer that stops answering is declared disconnected after
// 2 s and failed after 4 s, well inside the 10 s the job allows for
// reporting a lost peer.
const (
	iceDisconnectedTimeout = 2 * time.Second
	iceFailedTimeout       = 4 * time.Second
	iceKeepalive           = 500 * time.Millisecond
)

// API builds the pion API a WebRTC link's peer connection is made with:
// detached data channels, the ICE timing that reports a lost peer in
// time, messages of at most pionFrame (and c.MaxFrame) bytes, the
// network filters of c's mode and c's socket buffers (defaults applied).
// Benchmarks that measure raw pion against the link build their pair
// from it, so both run on one set-up.
func (c WebRTCConfig) API() (*webrtc.API, error) {
	c = c.withDefaults()
	var se webrtc.SettingEngine
	se.DetachDataChannels()
	se.SetICETimeouts(iceDisconnectedTimeout, iceFailedTimeout, iceKeepalive)
	se.SetSCTPMaxMessageSize(uint32(min(c.MaxFrame, pionFrame)))
	if c.Loopback {
		se.SetIncludeLoopbackCandidate(true)
		se.SetInterfaceFilter(isLoopbackInterface)
		se.SetIPFilter(func(ip net.IP) bool { return ip.IsLoopback() })
		se.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4})
		se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	} else {
		se.SetICEMulticastDNSMode(ice.MulticastDNSModeQueryOnly)
	}
	if c.SocketBuffer > 0 {
		n, err := newBufferedNet(c.SocketBuffer)
		if err != nil {
			return nil, fmt.Errorf("peer: webrtc network: %w", err)
		}
		se.SetNet(n)
	}
	return webrtc.NewAPI(webrtc.WithSettingEngine(se)), nil
}

func isLoopbackInterface(name string) bool {
	ifi, err := net.InterfaceByName(name)
	return err == nil && ifi.Flags&net.FlagLoopback != 0
}

// webrtcLink is a Link over one pion data channel: reliable, ordered,
// negotiated out of band (id 0, no DCEP round trip) and detached, so reads
// land in the link's own buffer. The channel runs either in a pion peer
// connection (pc) or, between native ends, on the native path (nat,
// link_native.go): the same framing, flow control and events either way.
//
// Goroutines: once bound, a reader (Read → HandleFrame, serial and in
// order) and a control goroutine (HandleWritable on the low-water event,
// HandleClose on loss, and teardown). pion's own event callbacks only
// signal channels, never call the handler.
type webrtcLink struct {
	pc       *webrtc.PeerConnection   // nil on the native path
	nat      *nativePeer              // nil on pion's path
	dc       *datachannel.DataChannel // detached
	maxFrame int                      // the largest frame this side sends
	accept   int                      // the largest it receives: its advertised max-message-size
	high     uint64                   // WriteFrame reports not ready at or above this buffered amount
	low      uint64                   // HandleWritable follows when it falls to this

	wmu  sync.Mutex // guards wbuf; the endpoint writes from one goroutine at a time anyway
	wbuf []byte
	rbuf []byte // owned by the reader goroutine

	mu      sync.Mutex
	h       LinkHandler
	started bool
	closed  atomic.Bool // Close was called

	writable  chan struct{} // cap 1: the buffered amount fell to low water
	lost      chan struct{} // closed once the peer is lost
	lostOnce  sync.Once
	lostErr   error // set before lost is closed
	closing   chan struct{}
	closeOnce sync.Once
	downOnce  sync.Once
	ctlDone   chan struct{}
	readDone  chan struct{}
	inRead    atomic.Bool // the reader is inside HandleFrame
	inCtl     atomic.Bool // the control goroutine is inside the handler

	stalls atomic.Int64 // WriteFrame calls that reported not ready (tests)
	// sent and received count the frames' bytes (Counts)
	sent, received atomic.Int64
	// lastPath is the last path ICE reported (Path), kept for when the
	// connection is gone
	lastPath atomic.Pointer[Path]
	// pathMu keeps teardown from closing ICE while Path asks it (pion
	// logs an error for a closed agent's stats); torn: teardown began
	pathMu sync.Mutex
	torn   bool

	setup *rtcSetup // the link's signaling, from the first offer to close
}

// connect builds the link: on the native data path (link_native.go) when
// the offerer was told its remote is native Go and the answerer finds the
// offer asks for it; otherwise a pion peer connection and its negotiated
// data channel. cfg is valid, defaults applied.
func connect(ctx context.Context, cfg WebRTCConfig, sig Signaler, offerer bool) (Link, error) {
	raiseGCFloor(cfg.GCFloor) // pion's per-packet garbage (gcfloor.go)
	ctx, cancel := context.WithTimeout(ctx, DefaultSetupTimeout)
	defer cancel()
	setup := newRTCSetup()
	native := offerer && cfg.NativeRemote
	if !offerer {
		offer, err := setup.awaitOffer(ctx, sig)
		if err != nil {
			setup.close()
			return nil, err
		}
		native = nativeOffer(offer)
	}
	if native {
		return connectNative(ctx, cfg, sig, offerer, setup)
	}
	return connectPion(ctx, cfg, sig, offerer, setup)
}

// pionFrame caps the frames of pion's path (a browser's link to a native
// rank, or a native one to a standard peer), both ways: it advertises
// and sends no more. Larger frames measured worse there: a 64 KiB
// message, eager in one 65,576-byte frame between a Chromium rank and a
// native one, took 23 ms one way against 4.6 ms as a rendezvous in
// 65,535-byte frames (load ~20 on 2 cores), and a pion pair's 1 MiB
// stream stalled for a second at a time now and then (0.93 MB/s in one
// run of five). The native data path and two browsers take
// MaxWebRTCFrame.
const pionFrame = StandardWebRTCFrame

// newWebRTCLink is a link not yet connected, with cfg's water marks.
func newWebRTCLink(cfg WebRTCConfig, setup *rtcSetup) *webrtcLink {
	return &webrtcLink{
		accept:   cfg.MaxFrame,
		high:     uint64(cfg.HighWater),
		low:      uint64(cfg.LowWater),
		writable: make(chan struct{}, 1),
		lost:     make(chan struct{}),
		closing:  make(chan struct{}),
		ctlDone:  make(chan struct{}),
		readDone: make(chan struct{}),
		setup:    setup,
	}
}

// connectPion builds the pion peer connection and its negotiated data
// channel, and runs negotiate on them.
func connectPion(ctx context.Context, cfg WebRTCConfig, sig Signaler, offerer bool, setup *rtcSetup) (_ Link, err error) {
	l := newWebRTCLink(cfg, setup)
	l.accept = min(l.accept, pionFrame)
	defer func() {
		if err != nil {
			l.teardown()
		}
	}()
	api, err := cfg.API()
	if err != nil {
		return nil, err
	}
	servers := make([]webrtc.ICEServer, len(cfg.ICEServers))
	for i, s := range cfg.ICEServers {
		servers[i] = webrtc.ICEServer{URLs: s.URLs, Username: s.Username, Credential: s.Credential}
	}
	conf := webrtc.Configuration{ICEServers: servers}
	if cfg.Identity != nil {
		conf.Certificates = []webrtc.Certificate{*cfg.Identity.cert}
	}
	pc, err := api.NewPeerConnection(conf)
	if err != nil {
		return nil, err
	}
	l.pc = pc
	pc.OnICECandidate(func(c *webrtc.ICECandidate) {
		if c == nil {
			return
		}
		b, err := json.Marshal(c.ToJSON())
		if err != nil {
			l.lose(fmt.Errorf("local candidate: %w", err))
			return
		}
		setup.localCandidate(b)
	})
	pc.OnICEConnectionStateChange(func(s webrtc.ICEConnectionState) { setup.iceState(s.String()) })
	pc.OnConnectionStateChange(func(s webrtc.PeerConnectionState) {
		if s == webrtc.PeerConnectionStateFailed || s == webrtc.PeerConnectionStateClosed {
			l.lose(fmt.Errorf("peer connection %s", s))
		}
	})
	negotiated, id := true, uint16(0)
	dc, err := pc.CreateDataChannel("meshmpi", &webrtc.DataChannelInit{Negotiated: &negotiated, ID: &id})
	if err != nil {
		return nil, err
	}
	// pion wants Detach called from OnOpen; negotiate reads the result
	// only after open, which happens after these writes.
	var (
		detached  datachannel.ReadWriteCloser
		detachErr error
	)
	dc.OnOpen(func() {
		detached, detachErr = dc.Detach()
		setup.open()
	})

	if err := setup.negotiate(ctx, sig, offerer, l, cfg.RemoteFingerprint); err != nil {
		return nil, err
	}
	if detachErr != nil {
		return nil, fmt.Errorf("detach: %w", detachErr)
	}
	link, err := l.opened(detached)
	if err != nil {
		return nil, err
	}
	setup.keep(sig, offerer, l, cfg.RemoteFingerprint)
	return link, nil
}

// createLocal implements rtcPeer.
func (l *webrtcLink) createLocal(_ context.Context, typ string) (string, error) {
	if l.nat != nil {
		return l.nat.createLocal(typ)
	}
	var (
		d   webrtc.SessionDescription
		err error
	)
	switch typ {
	case "offer":
		d, err = l.pc.CreateOffer(nil)
	case "restart":
		d, err = l.pc.CreateOffer(&webrtc.OfferOptions{ICERestart: true})
	default:
		d, err = l.pc.CreateAnswer(nil)
	}
	if err != nil {
		return "", err
	}
	if err := l.pc.SetLocalDescription(d); err != nil {
		return "", err
	}
	return d.SDP, nil
}

// setRemote implements rtcPeer.
func (l *webrtcLink) setRemote(_ context.Context, typ, sdp string) error {
	if l.nat != nil {
		return l.nat.setRemote(typ, sdp)
	}
	return l.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.NewSDPType(typ), SDP: sdp})
}

// addCandidate implements rtcPeer.
func (l *webrtcLink) addCandidate(_ context.Context, init []byte) error {
	if l.nat != nil {
		return l.nat.addCandidate(init)
	}
	var c webrtc.ICECandidateInit
	if err := json.Unmarshal(init, &c); err != nil {
		return err
	}
	return l.pc.AddICECandidate(c)
}

// failed and failure implement rtcPeer.
func (l *webrtcLink) failed() <-chan struct{} { return l.lost }
func (l *webrtcLink) failure() error          { return l.lostErr }

// opened finishes the link once its data channel is open.
func (l *webrtcLink) opened(rwc datachannel.ReadWriteCloser) (Link, error) {
	dc, ok := rwc.(*datachannel.DataChannel)
	if !ok {
		rwc.Close()
		return nil, fmt.Errorf("detached channel is a %T", rwc)
	}
	l.dc = dc
	if l.nat != nil {
		l.maxFrame = l.nat.maxFrame // from the remote's description (connect)
	} else {
		// the association's limit is the remote's max-message-size, or
		// StandardWebRTCFrame where it advertised none
		m := 0
		if s := l.pc.SCTP(); s != nil {
			m = int(s.GetCapabilities().MaxMessageSize)
		}
		f, err := linkFrame(m)
		if err != nil {
			return nil, err
		}
		l.maxFrame = min(f, pionFrame)
	}
	// the remote sends what this side advertised (API, createLocal)
	l.rbuf = make([]byte, l.accept)
	l.wbuf = make([]byte, 0, l.maxFrame)
	dc.SetBufferedAmountLowThreshold(l.low)
	return l, nil
}

// Bind implements Link: it starts the reader and the control goroutine.
func (l *webrtcLink) Bind(h LinkHandler) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.started || l.closed.Load() {
		return
	}
	l.h, l.started = h, true
	// the callback only signals: no handler call on pion's goroutine
	l.dc.OnBufferedAmountLow(func() { poke(l.writable) })
	go l.readLoop()
	go l.control()
}

func (l *webrtcLink) MaxFrame() int { return l.maxFrame }

// WriteFrame implements Link. The data channel copies the frame (SCTP
// packetizes it before Write returns), so one write buffer serves all
// frames.
func (l *webrtcLink) WriteFrame(hdr, payload []byte) (bool, error) {
	n := len(hdr) + len(payload)
	if n > l.maxFrame {
		return false, fmt.Errorf("webrtc link: %d-byte frame exceeds %d", n, l.maxFrame)
	}
	if l.closed.Load() {
		return false, ErrClosed
	}
	l.wmu.Lock()
	l.wbuf = append(append(l.wbuf[:0], hdr...), payload...)
	_, err := l.dc.Write(l.wbuf)
	l.wmu.Unlock()
	if err != nil {
		err = fmt.Errorf("webrtc link: %w", err)
		l.lose(err)
		return false, err
	}
	l.sent.Add(int64(n))
	if l.dc.BufferedAmount() >= l.high {
		l.stalls.Add(1)
		return false, nil
	}
	return true, nil
}

// readLoop delivers frames in order from the link's one read buffer.
func (l *webrtcLink) readLoop() {
	defer close(l.readDone)
	for {
		n, err := l.dc.Read(l.rbuf)
		if err != nil {
			if errors.Is(err, io.ErrShortBuffer) {
				err = fmt.Errorf("%w: message larger than %d bytes", ErrFrame, len(l.rbuf))
			}
			l.lose(readFailure(err))
			return
		}
		l.received.Add(int64(n))
		f := l.rbuf[:n]
		hdr, payload := f, []byte(nil)
		if n > HeaderLen {
			hdr, payload = f[:HeaderLen], f[HeaderLen:]
		}
		l.inRead.Store(true)
		l.h.HandleFrame(hdr, payload)
		l.inRead.Store(false)
	}
}

// readFailure says why the data channel stopped delivering, in the
// user's terms where pion's are SCTP's: a remote whose process ended, or
// that closed its connection without Finalize, aborts the association
// ("abort chunk … User Initiated Abort").
func readFailure(err error) error {
	switch msg := err.Error(); {
	case errors.Is(err, io.EOF):
		return errors.New("the remote closed the link")
	case strings.Contains(msg, "abort chunk") || strings.Contains(msg, "User Initiated Abort"):
		return errors.New("the remote ended the link at once: its process exited, or it closed the link without Finalize")
	}
	return fmt.Errorf("read: %w", err)
}

// control runs the handler's writable and close events and the teardown.
func (l *webrtcLink) control() {
	defer close(l.ctlDone)
	for {
		select {
		case <-l.writable:
			l.inCtl.Store(true)
			l.h.HandleWritable()
			l.inCtl.Store(false)
		case <-l.lost:
			if !l.closed.Load() {
				l.inCtl.Store(true)
				l.h.HandleClose(fmt.Errorf("webrtc link: %w: %w", ErrProcFailed, l.lostErr))
				l.inCtl.Store(false)
			}
			l.teardown()
			return
		case <-l.closing:
			l.teardown()
			return
		}
	}
}

// lose records the first reason the link failed.
func (l *webrtcLink) lose(err error) {
	l.lostOnce.Do(func() {
		l.lostErr = err
		close(l.lost)
	})
}

// teardown closes the data channel and the peer connection and waits for
// pion's goroutines. Never called from a pion callback.
func (l *webrtcLink) teardown() {
	l.downOnce.Do(func() {
		l.pathMu.Lock()
		l.torn = true
		l.pathMu.Unlock()
		l.setup.close() // before the connection it restarts goes
		if l.dc != nil {
			_ = l.dc.Close()
		}
		if l.nat != nil {
			l.nat.close()
		}
		if l.pc != nil {
			_ = l.pc.GracefulClose()
		}
	})
}

// Close implements Link. It returns once the peer connection is closed and
// the link's goroutines have ended, except the one it is called from when
// called inside a handler callback (that one ends as soon as the callback
// returns). The remote side sees HandleClose; this side does not.
func (l *webrtcLink) Close() error {
	l.closeOnce.Do(func() {
		l.mu.Lock()
		l.closed.Store(true)
		started := l.started
		l.mu.Unlock()
		close(l.closing)
		if !started {
			l.teardown()
			close(l.ctlDone)
			close(l.readDone)
		}
	})
	if !l.inCtl.Load() {
		<-l.ctlDone
	}
	if !l.inRead.Load() {
		<-l.readDone
	}
	return nil
}

// Counts implements Counter.
func (l *webrtcLink) Counts() (sent, received int64, closed bool) {
	return l.sent.Load(), l.received.Load(), l.isDown()
}

// isDown reports whether the link was closed or lost.
func (l *webrtcLink) isDown() bool {
	select {
	case <-l.lost:
		return true
	default:
		return l.closed.Load()
	}
}

// Path implements PathReporter: the selected ICE candidate pair and its
// last measured round trip.
func (l *webrtcLink) Path() Path {
	p := Path{Link: "webrtc", Restarts: l.setup.restartCount()}
	l.pathMu.Lock()
	defer l.pathMu.Unlock()
	if l.torn || l.isDown() {
		// closed or lost: ICE is going or gone (and pion logs the
		// questions it cannot answer), so its last path
		if last := l.lastPath.Load(); last != nil {
			p.Local, p.Remote, p.LocalAddr, p.RemoteAddr, p.RTT = last.Local, last.Remote, last.LocalAddr, last.RemoteAddr, last.RTT
		}
		return p
	}
	if l.nat != nil {
		if !l.nat.path(&p) {
			if last := l.lastPath.Load(); last != nil {
				p.Local, p.Remote, p.LocalAddr, p.RemoteAddr, p.RTT = last.Local, last.Remote, last.LocalAddr, last.RemoteAddr, last.RTT
			}
			return p
		}
		l.lastPath.Store(&p)
		return p
	}
	t := l.pc.SCTP().Transport().ICETransport()
	pair, err := t.GetSelectedCandidatePair()
	if st := l.pc.ICEConnectionState(); st == webrtc.ICEConnectionStateClosed || st == webrtc.ICEConnectionStateFailed {
		err = errors.New("ICE is over") // the remote went: its agent may be closed already
	}
	if err != nil || pair == nil {
		if last := l.lastPath.Load(); last != nil { // closed since: its last path
			p.Local, p.Remote, p.LocalAddr, p.RemoteAddr, p.RTT = last.Local, last.Remote, last.LocalAddr, last.RemoteAddr, last.RTT
		}
		return p
	}
	p.Local, p.Remote = pair.Local.Typ.String(), pair.Remote.Typ.String()
	p.LocalAddr = net.JoinHostPort(pair.Local.Address, strconv.Itoa(int(pair.Local.Port)))
	p.RemoteAddr = net.JoinHostPort(pair.Remote.Address, strconv.Itoa(int(pair.Remote.Port)))
	if st, ok := t.GetSelectedCandidatePairStats(); ok {
		p.RTT = time.Duration(st.CurrentRoundTripTime * float64(time.Second))
	}
	l.lastPath.Store(&p)
	return p
}
