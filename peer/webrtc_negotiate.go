//go:build !wasip1

package peer

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// DialWebRTC connects to the remote rank that sig reaches, as the offerer:
// it creates the offer and trickles its ICE candidates through sig. The
// remote side calls AcceptWebRTC. It returns once the data channel is open,
// or an error when ctx ends (bounded by DefaultSetupTimeout), the remote
// misbehaves or ICE fails; nothing is left running on error.
//
// Natively the link is a pion peer connection; in the browser (GOOS=js) it
// is the page's RTCPeerConnection. Either way it carries one negotiated
// (id 0), ordered, reliable data channel.
func DialWebRTC(ctx context.Context, cfg WebRTCConfig, sig Signaler) (Link, error) {
	return connectWebRTC(ctx, cfg, sig, true)
}

// AcceptWebRTC is DialWebRTC's other side: it waits for the offer on sig
// and answers it.
func AcceptWebRTC(ctx context.Context, cfg WebRTCConfig, sig Signaler) (Link, error) {
	return connectWebRTC(ctx, cfg, sig, false)
}

// connectWebRTC validates cfg and hands the set-up to the platform's
// connect (link_webrtc.go, link_webrtc_js.go), giving every error one
// prefix.
func connectWebRTC(ctx context.Context, cfg WebRTCConfig, sig Signaler, offerer bool) (_ Link, err error) {
	role := "accept"
	if offerer {
		role = "dial"
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("peer: webrtc %s: %w", role, err)
		}
	}()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return connect(ctx, cfg.withDefaults(), sig, offerer)
}

// iceRestartWindow bounds how long a link whose path broke may take to
// reconnect: from the moment its ICE agent reports the path disconnected,
// through the restart, to a working pair again. A link that is not back
// by then is lost, which keeps a lasting outage inside the job's 10 s
// failure bound (2 s to notice, 6 s to restart).
const iceRestartWindow = 6 * time.Second

// iceRestartRetry is how often a link still broken restarts again inside
// the window: a relay that was restarting itself, or a route still down
// at the first restart, may be back for the next one.
const iceRestartRetry = 3 * time.Second

// rtcPeer is one platform's peer connection as negotiate and keep drive
// it. Each method reports the platform's error as is; the caller adds the
// context.
type rtcPeer interface {
	// createLocal creates an offer or an answer (typ "offer" or "answer";
	// "restart": an offer that restarts ICE with fresh credentials and
	// candidates), sets it as the local description and returns its SDP.
	createLocal(ctx context.Context, typ string) (sdp string, err error)
	// setRemote sets the remote description.
	setRemote(ctx context.Context, typ, sdp string) error
	// addCandidate adds a remote ICE candidate, the JSON of an
	// RTCIceCandidateInit.
	addCandidate(ctx context.Context, init []byte) error
	// failed is closed once the connection is lost; failure then says why.
	failed() <-chan struct{}
	failure() error
	// lose fails the connection with err (the first reason wins).
	lose(err error)
}

// rtcSetup is what a link's event callbacks report, and the link's side of
// its signaling path, from the first offer to the link's close. The
// callbacks only record and signal; negotiate (on the connecting
// goroutine) and then keep (on its own) do the talking.
type rtcSetup struct {
	mu        sync.Mutex
	cands     [][]byte      // local candidates not yet sent (RTCIceCandidateInit JSON)
	ice       string        // the ICE connection state last reported
	candReady chan struct{} // cap 1: cands has grown
	iceChange chan struct{} // cap 1: ice changed
	opened    chan struct{} // closed once the data channel is open
	openOnce  sync.Once

	msgs     chan sigMsg // from the signal reader
	early    []sigMsg    // read by awaitOffer, for negotiate
	readOnce sync.Once
	life     context.Context // ends at close: the reader and keep stop
	stop     context.CancelFunc
	wg       sync.WaitGroup

	restarts int // ICE restarts this side began or answered (guarded by mu; tests)
}

func newRTCSetup() *rtcSetup {
	s := &rtcSetup{candReady: make(chan struct{}, 1), iceChange: make(chan struct{}, 1),
		opened: make(chan struct{}), msgs: make(chan sigMsg)}
	s.life, s.stop = context.WithCancel(context.Background())
	return s
}

// localCandidate queues a local ICE candidate, the JSON of an
// RTCIceCandidateInit, for negotiate or keep to send. It never blocks.
func (s *rtcSetup) localCandidate(init []byte) {
	s.mu.Lock()
	s.cands = append(s.cands, init)
	s.mu.Unlock()
	poke(s.candReady)
}

// iceState records the ICE connection state the platform reported
// (RTCIceConnectionState's names). It never blocks.
func (s *rtcSetup) iceState(state string) {
	s.mu.Lock()
	s.ice = state
	s.mu.Unlock()
	poke(s.iceChange)
}

// open reports the data channel open.
func (s *rtcSetup) open() { s.openOnce.Do(func() { close(s.opened) }) }

// restartCount is how many ICE restarts this side began or answered.
func (s *rtcSetup) restartCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.restarts
}

// close stops the signal reader and keep, and waits for them. The link
// calls it before it closes its peer connection.
func (s *rtcSetup) close() {
	s.stop()
	s.wg.Wait()
}

// sigMsg is one set-up message from the remote.
type sigMsg struct {
	kind    string
	payload []byte
	err     error
}

// read starts the one goroutine that receives sig's messages for the
// link's whole life, so none is lost between negotiate and keep.
// negotiate calls it, once.
func (s *rtcSetup) read(sig Signaler) {
	s.readOnce.Do(func() { s.startReader(sig) })
}

// awaitOffer starts the signal reader and waits for the remote's offer,
// keeping it and the messages before it for negotiate: the answerer
// chooses its data path from the offer before it builds it.
func (s *rtcSetup) awaitOffer(ctx context.Context, sig Signaler) ([]byte, error) {
	s.read(sig)
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("not connected: %w", context.Cause(ctx))
		case m := <-s.msgs:
			s.early = append(s.early, m)
			if m.err != nil {
				return nil, fmt.Errorf("signaling: %w", m.err)
			}
			if m.kind == SignalOffer {
				return m.payload, nil
			}
		}
	}
}

func (s *rtcSetup) startReader(sig Signaler) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			kind, payload, err := sig.Recv(s.life)
			select {
			case s.msgs <- sigMsg{kind, payload, err}:
			case <-s.life.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
}

// sendCandidates sends the local candidates gathered so far.
func (s *rtcSetup) sendCandidates(ctx context.Context, sig Signaler) error {
	s.mu.Lock()
	batch := s.cands
	s.cands = nil
	s.mu.Unlock()
	for _, c := range batch {
		if err := sig.Send(ctx, SignalCandidate, c); err != nil {
			return fmt.Errorf("send candidate: %w", err)
		}
	}
	return nil
}

// setRemote checks a remote description against the certificate the
// remote must present (want, if not "") before it sets it.
func setRemote(ctx context.Context, p rtcPeer, typ string, sdp []byte, want string) error {
	if want != "" {
		if err := checkFingerprint(string(sdp), want); err != nil {
			return fmt.Errorf("remote %s: %w", typ, err)
		}
	}
	if err := p.setRemote(ctx, typ, string(sdp)); err != nil {
		return fmt.Errorf("remote %s: %w", typ, err)
	}
	return nil
}

// negotiate runs the offer/answer exchange and trickles ICE candidates both
// ways over sig until the data channel is open (nil), ctx ends (bounded by
// DefaultSetupTimeout), p fails, or the remote sends what the exchange
// does not expect. Remote candidates that arrive before the remote
// description wait for it. A remote description that does not name
// certificate want (if not "") fails with ErrIdentity before it is set.
func (s *rtcSetup) negotiate(ctx context.Context, sig Signaler, offerer bool, p rtcPeer, want string) error {
	ctx, cancelTimeout := context.WithTimeout(ctx, DefaultSetupTimeout)
	defer cancelTimeout()
	s.read(sig)

	if offerer {
		offer, err := p.createLocal(ctx, "offer")
		if err != nil {
			return err
		}
		if err := sig.Send(ctx, SignalOffer, []byte(offer)); err != nil {
			return fmt.Errorf("send offer: %w", err)
		}
	}
	haveRemote := false
	var pending [][]byte
	addCandidate := func(c []byte) error {
		if err := p.addCandidate(ctx, c); err != nil {
			return fmt.Errorf("remote candidate: %w", err)
		}
		return nil
	}
	remote := func(typ string, sdp []byte) error {
		if err := setRemote(ctx, p, typ, sdp, want); err != nil {
			return err
		}
		haveRemote = true
		for _, c := range pending {
			if err := addCandidate(c); err != nil {
				return err
			}
		}
		pending = nil
		return nil
	}
	handle := func(m sigMsg) error {
		if m.err != nil {
			return fmt.Errorf("signaling: %w", m.err)
		}
		switch {
		case m.kind == SignalOffer && !offerer && !haveRemote:
			if err := remote("offer", m.payload); err != nil {
				return err
			}
			answer, err := p.createLocal(ctx, "answer")
			if err != nil {
				return err
			}
			if err := sig.Send(ctx, SignalAnswer, []byte(answer)); err != nil {
				return fmt.Errorf("send answer: %w", err)
			}
		case m.kind == SignalAnswer && offerer && !haveRemote:
			if err := remote("answer", m.payload); err != nil {
				return err
			}
		case m.kind == SignalCandidate:
			if !haveRemote {
				pending = append(pending, m.payload)
			} else if err := addCandidate(m.payload); err != nil {
				return err
			}
		case m.kind == SignalRestart:
			// the remote saw its path break before this side saw it
			// open: the connection is young enough to need none
		default:
			return fmt.Errorf("unexpected %q signal", m.kind)
		}
		return nil
	}
	for _, m := range s.early {
		if err := handle(m); err != nil {
			return err
		}
	}
	s.early = nil
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("not connected: %w", context.Cause(ctx))
		case <-p.failed():
			return p.failure()
		case <-s.candReady:
			if err := s.sendCandidates(ctx, sig); err != nil {
				return err
			}
		case m := <-s.msgs:
			if err := handle(m); err != nil {
				return err
			}
		case <-s.opened:
			return nil
		}
	}
}

// keep runs for an open link until close: it trickles late candidates both
// ways and heals a broken path by ICE restart. When p's ICE agent reports
// the path disconnected (no answer to consent checks for 2 s: a route
// gone, a NAT that forgot its mapping, a relay restarted), the offerer
// restarts ICE (a new offer with fresh credentials, gathered anew: new
// server-reflexive and relay candidates) and the answerer asks it to
// (SignalRestart); DTLS and SCTP carry on over the new pair, so nothing
// sent is lost. A link not connected again within iceRestartWindow of the
// break is lost. When the signaling path ends, the link carries on
// without restarts.
func (s *rtcSetup) keep(sig Signaler, offerer bool, p rtcPeer, want string) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		ctx := s.life
		msgs := s.msgs // nil once the signaling path is gone
		var (
			window     *time.Timer // from the break to iceRestartWindow
			expired    <-chan time.Time
			retry      *time.Ticker // iceRestartRetry while the window runs
			again      <-chan time.Time
			restarting bool // the offerer's restart offer awaits its answer
		)
		healed := func() {
			if window != nil {
				window.Stop()
				retry.Stop()
				window, expired, retry, again = nil, nil, nil, nil
			}
		}
		defer healed()
		// send gives up on the signaling path at its first failure: the
		// link carries on, watched by the window, but cannot restart
		send := func(kind string, payload []byte) {
			if msgs != nil && sig.Send(ctx, kind, payload) != nil {
				msgs = nil
			}
		}
		counted := func() {
			s.mu.Lock()
			s.restarts++
			s.mu.Unlock()
		}
		restart := func() {
			if restarting || msgs == nil {
				return
			}
			offer, err := p.createLocal(ctx, "restart")
			if err != nil {
				p.lose(fmt.Errorf("ICE restart offer: %w", err))
				return
			}
			restarting = true
			counted()
			send(SignalOffer, []byte(offer))
		}
		// heal restarts ICE: the offerer itself, the answerer by asking
		heal := func() {
			if offerer {
				restart()
			} else {
				send(SignalRestart, nil)
			}
		}
		for {
			select {
			case <-ctx.Done():
				return
			case <-p.failed():
				return
			case <-expired:
				p.lose(fmt.Errorf("path broken: ICE did not reconnect within %v", iceRestartWindow))
				return
			case <-s.candReady:
				if msgs != nil && s.sendCandidates(ctx, sig) != nil {
					msgs = nil
				}
			case <-s.iceChange:
				s.mu.Lock()
				state := s.ice
				s.mu.Unlock()
				switch state {
				case "disconnected":
					if window == nil {
						window, retry = time.NewTimer(iceRestartWindow), time.NewTicker(iceRestartRetry)
						expired, again = window.C, retry.C
					}
					heal()
				case "connected", "completed":
					healed()
					restarting = false
				}
			case <-again:
				// still broken: restart again once the last exchange is
				// complete (one offer/answer at a time, so an answer
				// always belongs to the offer it answers)
				heal()
			case m := <-msgs:
				switch {
				case m.err != nil:
					msgs = nil
				case m.kind == SignalRestart && offerer:
					restart()
				case m.kind == SignalOffer && !offerer:
					if err := setRemote(ctx, p, "offer", m.payload, want); err != nil {
						p.lose(fmt.Errorf("ICE restart: %w", err))
						return
					}
					counted()
					answer, err := p.createLocal(ctx, "answer")
					if err != nil {
						p.lose(fmt.Errorf("ICE restart answer: %w", err))
						return
					}
					send(SignalAnswer, []byte(answer))
				case m.kind == SignalAnswer && offerer && restarting:
					if err := setRemote(ctx, p, "answer", m.payload, want); err != nil {
						p.lose(fmt.Errorf("ICE restart: %w", err))
						return
					}
					restarting = false
				case m.kind == SignalCandidate:
					// a candidate of an earlier ICE generation may be
					// refused; it names no path worth failing for
					_ = p.addCandidate(ctx, m.payload)
				}
				// anything else is stale or the remote's noise: ignored
			}
		}
	}()
}

// poke makes a non-blocking send on a cap-1 wake-up channel.
func poke(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
