//go:build wasip1

package meshmpi

import (
	"context"
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
	p, err := newProc(w.Rank, w.Size, cfg, g)
	if err != nil {
		g.Close()
		return nil, false, err
	}
	s := &Session{p: p, mesh: g}
	g.OnAbort(s.jobAborted)
	// the host tells the job; the guest exits next (Comm.Abort)
	p.abort = func(e *AbortError) { g.Abort(e.Code, e.Where) }
	g.Start(p.ep)
	return s, false, nil
}
