package mesh

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/meshmpi/meshmpi/peer"
	"github.com/meshmpi/meshmpi/signaling"
)

// hostLinks says whether this build links the processes of one host
// without WebRTC (peer's shared-memory link; Linux only).
const hostLinks = peer.HostLinks

// hostSetup bounds a same-host link's set-up: two processes of one host
// that cannot meet in this long will not.
const hostSetup = 30 * time.Second

// hostRefusal starts the signalLink the higher rank sends back when it
// cannot dial the lower rank's offer (the reason follows): the lower
// stops waiting for the dial and offers WebRTC instead, which the higher
// follows.
const hostRefusal = "refused: "

// dialHost is peer.DialHost; tests make it fail.
var dialHost = peer.DialHost

// connectHost links this rank to a process of its host: the lower rank
// (listen) opens a listener and sends its offer over the pair's
// signaling (signaling.SignalLink); the higher one dials what it was
// offered. A failure names the pair and the cause. An error wrapping
// errHostFallback leaves the pair to WebRTC: the lower rank could not
// listen (before any move), or the higher could not dial and told the
// lower (hostRefusal).
func (p *pair) connectHost(listen bool) (peer.Link, error) {
	m := p.m
	cfg := peer.HostConfig{Name: fmt.Sprintf("shm link between ranks %d and %d", m.rank, p.remote), MaxFrame: m.frameCap(p.remote)}
	tctx, tcancel := context.WithTimeoutCause(m.ctx, hostSetup,
		fmt.Errorf("rank %d did not link within %v", p.remote, hostSetup))
	defer tcancel()
	ctx, cancel := context.WithCancelCause(tctx)
	defer cancel(nil)
	if !listen {
		for {
			kind, payload, err := p.Recv(ctx)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", cfg.Name, err)
			}
			if kind != signalLink {
				continue // nothing else belongs to a same-host set-up
			}
			l, err := p.dialOffer(ctx, cfg, payload)
			if err == nil {
				return l, nil
			}
			// tell the lower rank, which waits for the dial, so that both
			// take WebRTC now rather than fail at hostSetup
			why := clip(hostRefusal+err.Error(), signaling.MaxTextLen)
			if serr := p.Send(ctx, signalLink, signaling.EncodeString(why)); serr != nil {
				return nil, fmt.Errorf("%w (and telling rank %d failed: %w)", err, p.remote, serr)
			}
			return nil, fmt.Errorf("%w: %w", errHostFallback, err)
		}
	}
	ln, err := peer.ListenHost(cfg)
	if err != nil {
		// no move made yet: the higher rank follows a WebRTC offer
		return nil, fmt.Errorf("%w: %w", errHostFallback, err)
	}
	defer ln.Close()
	if err := p.Send(ctx, signalLink, signaling.EncodeString(ln.Offer())); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Name, err)
	}
	// the remote leaving, the signaling ending or the remote refusing the
	// offer stops the wait for the dial
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			kind, payload, err := p.Recv(ctx)
			if err != nil {
				cancel(err)
				return
			}
			if kind != signalLink {
				continue // a stray of no use to a same-host set-up
			}
			why, _ := signaling.DecodeString(payload)
			if !strings.HasPrefix(why, hostRefusal) {
				continue // only the lower rank offers
			}
			cancel(fmt.Errorf("rank %d could not dial the offer: %w: %s", p.remote, errHostFallback, strings.TrimPrefix(why, hostRefusal)))
			return
		}
	}()
	l, err := ln.Accept(ctx)
	if err != nil && ctx.Err() == nil {
		// the handshake failed here, so it fails at the dialer too: wait
		// for its refusal (and take WebRTC), lest it arrive as a stray
		// in the WebRTC set-up
		<-ctx.Done()
		err = fmt.Errorf("%w (then: %w)", err, context.Cause(ctx))
	}
	cancel(nil)
	// the watcher takes nothing from the queue after this: a WebRTC
	// set-up that follows reads it
	<-watched
	return l, err
}

// dialOffer dials the lower rank's offer (a signalLink's payload).
func (p *pair) dialOffer(ctx context.Context, cfg peer.HostConfig, payload []byte) (peer.Link, error) {
	offer, err := signaling.DecodeString(payload)
	if err != nil {
		return nil, fmt.Errorf("%s: rank %d sent an offer that is not a string", cfg.Name, p.remote)
	}
	return dialHost(ctx, cfg, offer)
}
