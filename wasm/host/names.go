//go:build !js && !wasip1

package host

import (
	"context"
	"errors"
	"fmt"

	"github.com/meshmpi/meshmpi/signaling"
	"github.com/meshmpi/meshmpi/wasm"
)

// nameService is the job's name service as the relay asks it on its
// guest's behalf: the mesh's (*mesh.Mesh), answered by the signaling
// server.
type nameService interface {
	Publish(ctx context.Context, service, port string) error
	Unpublish(ctx context.Context, service string) error
	Lookup(ctx context.Context, service string) (string, error)
}

// nameCall is one of the guest's name requests the relay is serving.
type nameCall struct {
	cancel context.CancelFunc
}

// name serves a guest's name request (wasm's package doc, Names) on a
// goroutine of its own, so a Lookup that waits for a publish holds up
// neither the stream nor the guest's other requests. The guest keeps at
// most wasm.MaxNameRequests outstanding and never reuses an id: more, or
// a second request with an id in use, is a protocol error.
func (r *relay) name(m *wasm.Msg) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch _, dup := r.calls[m.ID]; {
	case r.closed:
		return nil
	case dup:
		return fmt.Errorf("%w: guest's name request %d while its request %d is outstanding", wasm.ErrProtocol, m.ID, m.ID)
	case len(r.calls) >= wasm.MaxNameRequests:
		return fmt.Errorf("%w: guest's name request %d beyond the %d it may have outstanding", wasm.ErrProtocol, m.ID, wasm.MaxNameRequests)
	}
	ctx, cancel := context.WithCancel(r.ctx)
	c := &nameCall{cancel: cancel}
	if r.calls == nil {
		r.calls = make(map[uint32]*nameCall)
	}
	r.calls[m.ID] = c
	r.wg.Add(1)
	go r.serveName(ctx, c, m.ID, m.Op, m.Service, m.Port)
	return nil
}

// serveName asks the name service and answers the guest, unless the
// guest cancelled the request meanwhile.
func (r *relay) serveName(ctx context.Context, c *nameCall, id uint32, op wasm.NameOp, service, port string) {
	defer r.wg.Done()
	defer c.cancel()
	var err error
	switch op {
	case wasm.NamePublish:
		err = r.names.Publish(ctx, service, port)
		port = ""
	case wasm.NameUnpublish:
		err = r.names.Unpublish(ctx, service)
	case wasm.NameLookup:
		port, err = r.names.Lookup(ctx, service)
	}
	class, text := nameClass(err), port
	if err != nil {
		text = err.Error()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls[id] != c {
		return // cancelled: the guest forgot it
	}
	delete(r.calls, id)
	if !r.closed && r.ctx.Err() == nil { // else the stream is ending: no one waits for the answer
		r.push(wasm.AppendNameAnswer(r.out.lock(), id, class, text))
	}
}

// cancelName ends the wait of the guest's name request id, which the
// guest gave up on. The answer may have crossed the cancel: an id the
// relay does not serve any more is no error.
func (r *relay) cancelName(id uint32) {
	r.mu.Lock()
	c := r.calls[id]
	delete(r.calls, id)
	r.mu.Unlock()
	if c != nil {
		c.cancel()
	}
}

// nameClass is the class of a name service's error on the stream.
func nameClass(err error) wasm.NameClass {
	switch {
	case err == nil:
		return wasm.NameOK
	case errors.Is(err, signaling.ErrNameTaken):
		return wasm.NameTaken
	case errors.Is(err, signaling.ErrNameUnknown):
		return wasm.NameUnknown
	case errors.Is(err, signaling.ErrNameLimit):
		return wasm.NameLimit
	}
	return wasm.NameFailed
}
