//go:build wasip1

package meshmpi

import (
	"context"
	"errors"
	"fmt"

	"github.com/meshmpi/meshmpi/wasm"
)

// join is Join's platform part under WASI: a guest has no network, so its
// host (EnvHost) joins the job for it and relays its links (package wasm).
// named says err already names the job.
func join(ctx context.Context, spec JobSpec, cfg config) (_ *Session, named bool, _ error) {
	if spec.Host == "" {
		return nil, false, fmt.Errorf("a WASI rank reaches its job through a host that sets %s: %w", EnvHost, ErrNotSupported)
	}
	g, err := wasm.JoinHost(ctx, spec.Host)
	if err != nil {
		return nil, true, fmt.Errorf("join a job through the WASI host: %w", err)
	}
	w := g.Welcome()
	if _, err := applySettings(&cfg, w.Settings); err != nil {
		g.Close()
		return nil, false, err
	}
	p, err := newJobProc(w.Rank, w.Size, w.Limit(), w.Late, cfg, g)
	if err != nil {
		g.Close()
		return nil, false, err
	}
	p.names = guestNames{g}
	s := &Session{p: p, mesh: g}
	if cfg.telemetry.on {
		startTelemetry(s, g, cfg.telemetry) // telemetry_wasip1.go
	}
	g.OnAbort(s.jobAborted)
	g.OnEvicted(s.evicted) // as Net.Evicted is told for a native rank
	// the host tells the job; the guest exits next (Comm.Abort)
	p.abort = func(e *AbortError) { g.Abort(e.Code, e.Where) }
	g.Start(p.ep)
	p.listenPorts()
	return s, false, nil
}

// guestNames is the job's name service through the WASI host, with the
// server's refusals in MPI's error classes.
type guestNames struct{ g *wasm.Guest }

func (n guestNames) Publish(ctx context.Context, service, port string) error {
	return nameError(n.g.Publish(ctx, service, port))
}

func (n guestNames) Unpublish(ctx context.Context, service string) error {
	return nameError(n.g.Unpublish(ctx, service))
}

func (n guestNames) Lookup(ctx context.Context, service string) (string, error) {
	port, err := n.g.Lookup(ctx, service)
	return port, nameError(err)
}

func nameError(err error) error {
	switch {
	case errors.Is(err, wasm.ErrNameTaken), errors.Is(err, wasm.ErrNameUnknown):
		return fmt.Errorf("%w: %w", ErrService, err)
	case errors.Is(err, wasm.ErrNameLimit):
		return fmt.Errorf("%w: %w", ErrResources, err)
	}
	return err
}
