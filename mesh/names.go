package mesh

import (
	"context"
	"fmt"
	"slices"

	"github.com/meshmpi/meshmpi/peer"
	"github.com/meshmpi/meshmpi/signaling"
)

// The job's name service (MPI_Publish_name, MPI_Lookup_name) lives on its
// signaling server: a rank that joins a running job finds there the port
// the job accepts it on. The server answers each request with one Name;
// answers are matched to requests by operation and service, so several
// may be outstanding (a lookup that waits for a name to be published
// does not hold up the rank's other requests).

// nameWait is a request waiting for the server's answer.
type nameWait struct {
	op      signaling.Type
	service string
	answer  chan *signaling.Name // cap 1
}

// Publish names port as service's for the ranks of the job
// (MPI_Publish_name). A service already published fails with an error
// wrapping signaling.ErrNameTaken. The name goes when this rank leaves the
// job.
func (m *Mesh) Publish(ctx context.Context, service, port string) error {
	_, err := m.ask(ctx, &signaling.Publish{Service: service, Port: port}, signaling.TypePublish, service)
	return err
}

// Unpublish removes service's name (MPI_Unpublish_name); an unknown
// service fails with an error wrapping signaling.ErrNameUnknown.
func (m *Mesh) Unpublish(ctx context.Context, service string) error {
	_, err := m.ask(ctx, &signaling.Unpublish{Service: service}, signaling.TypeUnpublish, service)
	return err
}

// Lookup returns the port published as service (MPI_Lookup_name),
// waiting until a rank of the job publishes it or ctx ends.
func (m *Mesh) Lookup(ctx context.Context, service string) (string, error) {
	return m.ask(ctx, &signaling.Lookup{Service: service, Wait: true}, signaling.TypeLookup, service)
}

// ask sends req and waits for its answer.
func (m *Mesh) ask(ctx context.Context, req signaling.Message, op signaling.Type, service string) (string, error) {
	w := &nameWait{op: op, service: service, answer: make(chan *signaling.Name, 1)}
	m.mu.Lock()
	if m.stopped || m.gone != nil {
		m.mu.Unlock()
		return "", fmt.Errorf("%s %q: %w: signaling is closed", op, service, peer.ErrProcFailed)
	}
	m.names = append(m.names, w)
	// a waiting lookup stays parked at the server when its caller gives
	// up (the protocol cannot take it back): a later lookup of the same
	// service takes its answer instead of parking another
	send := op != signaling.TypeLookup || !m.parked[service]
	if op == signaling.TypeLookup {
		if m.parked == nil {
			m.parked = map[string]bool{}
		}
		m.parked[service] = true
	}
	m.mu.Unlock()
	defer m.forget(w)
	if send {
		if err := m.client.Send(ctx, req); err != nil {
			m.mu.Lock()
			delete(m.parked, service)
			m.mu.Unlock()
			return "", fmt.Errorf("%s %q: %w", op, service, err)
		}
	}
	select {
	case n := <-w.answer:
		if err := n.Err(); err != nil {
			return "", fmt.Errorf("%s: %w", op, err)
		}
		return n.Port, nil
	case <-ctx.Done():
		return "", fmt.Errorf("%s %q: %w", op, service, context.Cause(ctx))
	case <-m.down:
		m.mu.Lock()
		gone := m.gone
		m.mu.Unlock()
		return "", fmt.Errorf("%s %q: %w: signaling connection lost: %w", op, service, peer.ErrProcFailed, gone)
	}
}

// forget drops w from the waiting requests, if an answer did not.
func (m *Mesh) forget(w *nameWait) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if i := slices.Index(m.names, w); i >= 0 {
		m.names = slices.Delete(m.names, i, i+1)
	}
}

// named hands the server's answer to the oldest request it answers; an
// answer nobody waits for (its lookup gave up) is dropped.
func (m *Mesh) named(n *signaling.Name) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n.Op == signaling.TypeLookup {
		delete(m.parked, n.Service)
	}
	i := slices.IndexFunc(m.names, func(w *nameWait) bool { return w.op == n.Op && w.service == n.Service })
	if i < 0 {
		return
	}
	w := m.names[i]
	m.names = slices.Delete(m.names, i, i+1)
	w.answer <- n
}
