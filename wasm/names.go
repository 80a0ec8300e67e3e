package wasm

import (
	"context"
	"fmt"
)

// The name service (MPI-4.1 §11.9.4, MPI_Publish_name, MPI_Unpublish_name,
// MPI_Lookup_name) through the host: the job's signaling server keeps the
// names, the host asks it on the guest's behalf. Each call is one name
// request with an id of its own, so any number of the guest's goroutines
// may have one outstanding (up to MaxNameRequests; more wait their turn):
// the reader delivers the answers, and a Lookup waiting for a name that
// is not published yet holds up nothing but its caller.

// nameAnswer is how a name request ended, as the reader hands it over.
type nameAnswer struct {
	class NameClass
	text  string // a lookup's port, or what failed
	err   error  // the stream ended first
}

// Publish publishes port under service for the job (MPI_Publish_name).
// A service published already fails with an error matching ErrNameTaken;
// a job holding as many names as its server keeps, ErrNameLimit. Both
// names are 1 … MaxName bytes of UTF-8. Call it after Start.
func (g *Guest) Publish(ctx context.Context, service, port string) error {
	_, err := g.nameCall(ctx, NamePublish, service, port)
	return err
}

// Unpublish withdraws service (MPI_Unpublish_name); a service that is
// not published fails with an error matching ErrNameUnknown. Call it
// after Start.
func (g *Guest) Unpublish(ctx context.Context, service string) error {
	_, err := g.nameCall(ctx, NameUnpublish, service, "")
	return err
}

// Lookup returns the port published under service (MPI_Lookup_name),
// waiting until some rank publishes it or ctx ends; then the host stops
// waiting too (name-cancel) and Lookup returns ctx's cause. Call it
// after Start.
func (g *Guest) Lookup(ctx context.Context, service string) (string, error) {
	return g.nameCall(ctx, NameLookup, service, "")
}

// nameCall sends a name request and waits for its answer or ctx.
func (g *Guest) nameCall(ctx context.Context, op NameOp, service, port string) (string, error) {
	if err := checkName(op, service, port); err != nil {
		return "", fmt.Errorf("wasm: %v: %w", op, err)
	}
	if ctx.Err() != nil { // a call whose context ended sends nothing
		return "", fmt.Errorf("wasm: %v %q: %w", op, service, context.Cause(ctx))
	}
	select {
	case g.nameSlots <- struct{}{}:
	case <-ctx.Done():
		return "", fmt.Errorf("wasm: %v %q: %w", op, service, context.Cause(ctx))
	}
	// the slot is freed only once the host forgot the request too: after
	// its answer, or after our cancel is on the stream (MaxNameRequests)
	defer func() { <-g.nameSlots }()
	ch := make(chan nameAnswer, 1)
	g.mu.Lock()
	if g.dead != nil {
		err := g.dead
		g.mu.Unlock()
		return "", err
	}
	if g.calls == nil {
		g.calls = make(map[uint32]chan nameAnswer)
	}
	g.lastCall++
	id := g.lastCall
	g.calls[id] = ch
	g.mu.Unlock()
	if err := g.write(AppendName(g.lockWrite(), id, op, service, port)); err != nil {
		g.forget(id)
		return "", err
	}
	var a nameAnswer
	select {
	case a = <-ch:
	case <-ctx.Done():
		if g.forget(id) {
			_ = g.write(AppendNameCancel(g.lockWrite(), id)) // a dead stream ends the host's wait anyway
			return "", fmt.Errorf("wasm: %v %q: %w", op, service, context.Cause(ctx))
		}
		a = <-ch // answered as ctx ended: what was done stands
	}
	if a.err != nil {
		return "", a.err
	}
	if err := nameError(a.class, a.text); err != nil {
		return "", fmt.Errorf("wasm: %v %q: %w", op, service, err)
	}
	return a.text, nil
}

// forget drops name request id; it reports whether it was still
// outstanding (not answered, and the stream up).
func (g *Guest) forget(id uint32) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	_, ok := g.calls[id]
	delete(g.calls, id)
	return ok
}

// answer hands a name-answer to its caller. An answer for a request the
// guest cancelled crossed the cancel and is dropped; one for an id never
// sent is a protocol error. Reader goroutine only.
func (g *Guest) answer(m *Msg) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if m.ID == 0 || m.ID > g.lastCall {
		return fmt.Errorf("%w: name-answer to request %d, never sent", ErrProtocol, m.ID)
	}
	ch, ok := g.calls[m.ID]
	if !ok {
		return nil
	}
	delete(g.calls, m.ID)
	ch <- nameAnswer{class: m.Class, text: m.Text}
	return nil
}

// nameError is the error of an answer's class: the sentinel of a class
// the guest knows, or what the host said went wrong.
func nameError(c NameClass, text string) error {
	switch c {
	case NameOK:
		return nil
	case NameTaken:
		return ErrNameTaken
	case NameUnknown:
		return ErrNameUnknown
	case NameLimit:
		return ErrNameLimit
	}
	return hostError(text)
}

// hostError is a failure as the host described it.
type hostError string

func (e hostError) Error() string { return "the host: " + string(e) }
