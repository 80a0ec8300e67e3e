//go:build !wasip1

package meshmpi

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/meshmpi/meshmpi/mesh"
	"github.com/meshmpi/meshmpi/peer"
	"github.com/meshmpi/meshmpi/signaling"
)

// join is Join's platform part: through the job's signaling server, over
// the WebRTC mesh. named says err already names the job and the server.
func join(ctx context.Context, spec JobSpec, cfg config) (_ *Session, named bool, _ error) {
	if spec.Host != "" {
		return nil, false, fmt.Errorf("a job reached through a WASI host (%s) is for GOOS=wasip1 ranks: %w", EnvHost, ErrNotSupported)
	}
	var do signaling.DialOptions
	if spec.Rank != AnyRank {
		do.Rank = &spec.Rank
	}
	// one certificate for all of this rank's links, announced with the
	// seat token so the server can vouch for it to the others; a page
	// that cannot make one joins without (its links still use DTLS)
	id, err := peer.NewIdentity()
	if err == nil {
		do.Fingerprint = id.Fingerprint()
	}
	// peers of this process that hear of it before its mesh exists wait
	// for it: a memory link, whatever the order
	release := mesh.Reserve(do.Fingerprint)
	defer release()
	client, err := dialJob(ctx, spec, &do)
	if errors.Is(err, signaling.ErrJobGone) {
		// a rank left before the job formed, or the job is over: it will
		// not form, as for the ranks already in it (mesh.WaitReady)
		return nil, true, fmt.Errorf("%w: %w", ErrProcFailed, err)
	}
	if err != nil {
		return nil, true, err
	}
	w := client.Welcome()
	loopback, err := applySettings(&cfg, w.Settings)
	if err != nil {
		client.Close()
		return nil, false, err
	}
	var s *Session // set before the mesh starts, which alone calls Aborted
	m := mesh.New(client, mesh.Net{ICEServers: w.ICEServers, Loopback: loopback, Identity: id,
		Aborted: func(rank, code int, reason string) { s.jobAborted(rank, code, reason) },
		Evicted: func(err error) { s.evicted(err) }})
	p, err := newJobProc(w.Rank, w.Size, w.Limit(), w.Late, cfg, m)
	if err != nil {
		client.Close()
		return nil, false, err
	}
	p.names = meshNames{m}
	s = &Session{p: p, mesh: m}
	p.leave = m.Leave
	// the process exits next (Comm.Abort): its links are left for the
	// exit to drop, silently, rather than closed, which would tell the
	// peers of a lost link before the server's notice of the abort
	p.abort = func(e *AbortError) { m.Abort(e.Code, e.Where) }
	if cfg.telemetry.on {
		// before the mesh's goroutines start: a captured console
		// replaces os.Stdout and os.Stderr, which pion reads
		startTelemetry(s, m, cfg.telemetry, cfg.console || pageConsole) // telemetry_net.go
	}
	m.Start(p.ep)
	p.listenPorts()
	if err := m.WaitReady(ctx); err != nil {
		s.Abort(err)
		return nil, false, err
	}
	return s, false, nil
}

// meshNames is the job's name service, on its signaling server, with the
// server's refusals in MPI's error classes.
type meshNames struct{ m *mesh.Mesh }

func (n meshNames) Publish(ctx context.Context, service, port string) error {
	return nameError(n.m.Publish(ctx, service, port))
}

func (n meshNames) Unpublish(ctx context.Context, service string) error {
	return nameError(n.m.Unpublish(ctx, service))
}

func (n meshNames) Lookup(ctx context.Context, service string) (string, error) {
	port, err := n.m.Lookup(ctx, service)
	return port, nameError(err)
}

func nameError(err error) error {
	switch {
	case errors.Is(err, signaling.ErrNameTaken), errors.Is(err, signaling.ErrNameUnknown):
		return fmt.Errorf("%w: %w", ErrService, err)
	case errors.Is(err, signaling.ErrNameLimit):
		return fmt.Errorf("%w: %w", ErrResources, err)
	}
	return err
}

// dialJob joins the job at its signaling server. A late rank that comes
// before the job formed (ErrNotFormed: a volunteer quicker than the
// launcher's ranks) tries again, waiting 100 ms and doubling up to 2 s,
// until ctx ends (not in a browser tab: retryNotFormed).
func dialJob(ctx context.Context, spec JobSpec, do *signaling.DialOptions) (*signaling.Client, error) {
	wait := 100 * time.Millisecond
	for {
		client, err := signaling.Dial(ctx, spec.Signal, spec.Job, spec.Token, do)
		if !retryNotFormed || !errors.Is(err, signaling.ErrNotFormed) {
			return client, err
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (still not formed when the wait ended: %w)", err, context.Cause(ctx))
		}
		wait = min(2*wait, 2*time.Second)
	}
}
