//go:build !wasip1

package peer

import (
	"context"
	"fmt"
	"sync"
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

// rtcPeer is one platform's peer connection as negotiate drives it. Each
// method reports the platform's error as is; negotiate adds the context.
type rtcPeer interface {
	// createLocal creates an offer or an answer (typ "offer" or "answer"),
	// sets it as the local description and returns its SDP.
	createLocal(ctx context.Context, typ string) (sdp string, err error)
	// setRemote sets the remote description.
	setRemote(ctx context.Context, typ, sdp string) error
	// addCandidate adds a remote ICE candidate, the JSON of an
	// RTCIceCandidateInit.
	addCandidate(ctx context.Context, init []byte) error
	// failed is closed once the connection is lost; failure then says why.
	failed() <-chan struct{}
	failure() error
}

// rtcSetup is what a link's event callbacks report while it connects.
// The callbacks only record and signal; negotiate, on the connecting
// goroutine, does the talking, so sig is never used after DialWebRTC or
// AcceptWebRTC returns.
type rtcSetup struct {
	mu        sync.Mutex
	cands     [][]byte      // local candidates not yet sent (RTCIceCandidateInit JSON)
	candReady chan struct{} // cap 1: cands has grown
	opened    chan struct{} // closed once the data channel is open
	openOnce  sync.Once
}

func newRTCSetup() *rtcSetup {
	return &rtcSetup{candReady: make(chan struct{}, 1), opened: make(chan struct{})}
}

// localCandidate queues a local ICE candidate, the JSON of an
// RTCIceCandidateInit, for negotiate to send. It never blocks.
func (s *rtcSetup) localCandidate(init []byte) {
	s.mu.Lock()
	s.cands = append(s.cands, init)
	s.mu.Unlock()
	poke(s.candReady)
}

// open reports the data channel open.
func (s *rtcSetup) open() { s.openOnce.Do(func() { close(s.opened) }) }

// sigMsg is one set-up message from the remote.
type sigMsg struct {
	kind    string
	payload []byte
	err     error
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

	// One goroutine receives signals; it ends before we return.
	sctx, cancelRecv := context.WithCancel(ctx)
	msgs := make(chan sigMsg)
	var recvWG sync.WaitGroup
	recvWG.Add(1)
	go func() {
		defer recvWG.Done()
		for {
			kind, payload, err := sig.Recv(sctx)
			select {
			case msgs <- sigMsg{kind, payload, err}:
			case <-sctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	defer func() {
		cancelRecv()
		recvWG.Wait()
	}()

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
	setRemote := func(typ string, sdp []byte) error {
		if want != "" {
			if err := checkFingerprint(string(sdp), want); err != nil {
				return fmt.Errorf("remote %s: %w", typ, err)
			}
		}
		if err := p.setRemote(ctx, typ, string(sdp)); err != nil {
			return fmt.Errorf("remote %s: %w", typ, err)
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
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("not connected: %w", context.Cause(ctx))
		case <-p.failed():
			return p.failure()
		case <-s.candReady:
			s.mu.Lock()
			batch := s.cands
			s.cands = nil
			s.mu.Unlock()
			for _, c := range batch {
				if err := sig.Send(ctx, SignalCandidate, c); err != nil {
					return fmt.Errorf("send candidate: %w", err)
				}
			}
		case m := <-msgs:
			if m.err != nil {
				return fmt.Errorf("signaling: %w", m.err)
			}
			switch {
			case m.kind == SignalOffer && !offerer && !haveRemote:
				if err := setRemote("offer", m.payload); err != nil {
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
				if err := setRemote("answer", m.payload); err != nil {
					return err
				}
			case m.kind == SignalCandidate:
				if !haveRemote {
					pending = append(pending, m.payload)
				} else if err := addCandidate(m.payload); err != nil {
					return err
				}
			default:
				return fmt.Errorf("unexpected %q signal", m.kind)
			}
		case <-s.opened:
			return nil
		}
	}
}

// poke makes a non-blocking send on a cap-1 wake-up channel.
func poke(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
