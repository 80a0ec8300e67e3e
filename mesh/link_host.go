package mesh

import (
	"context"
	"fmt"
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

// connectHost links this rank to a process of its host: the lower rank
// (listen) opens a listener and sends its offer over the pair's
// signaling (signaling.SignalLink); the higher one dials what it was
// offered. A failure names the pair and the cause.
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
			offer, err := signaling.DecodeString(payload)
			if err != nil {
				return nil, fmt.Errorf("%s: rank %d sent an offer that is not a string", cfg.Name, p.remote)
			}
			return peer.DialHost(ctx, cfg, offer)
		}
	}
	ln, err := peer.ListenHost(cfg)
	if err != nil {
		return nil, err
	}
	defer ln.Close()
	if err := p.Send(ctx, signalLink, signaling.EncodeString(ln.Offer())); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Name, err)
	}
	// the remote leaving, or the signaling ending, kills the pair: stop
	// waiting for the dial then
	go func() {
		if _, _, err := p.Recv(ctx); err != nil {
			cancel(err)
		}
	}()
	return ln.Accept(ctx)
}
