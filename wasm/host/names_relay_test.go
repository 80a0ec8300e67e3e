//go:build !js && !wasip1

package host

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/internal/leaktest"
	"github.com/meshmpi/meshmpi/signaling"
	"github.com/meshmpi/meshmpi/wasm"
)

// fakeNames is a name service whose lookups wait until their context
// ends or the test answers them.
type fakeNames struct {
	mu      sync.Mutex
	err     error                // what Publish and Unpublish return
	waiting map[string]chan bool // lookups waiting, by service: true when their context ended
	answer  chan string          // a lookup's port
}

func newFakeNames() *fakeNames {
	return &fakeNames{waiting: make(map[string]chan bool), answer: make(chan string)}
}

func (f *fakeNames) Publish(ctx context.Context, service, port string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

func (f *fakeNames) Unpublish(ctx context.Context, service string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

func (f *fakeNames) Lookup(ctx context.Context, service string) (string, error) {
	ended := make(chan bool, 1)
	f.mu.Lock()
	f.waiting[service] = ended
	f.mu.Unlock()
	select {
	case p := <-f.answer:
		return p, nil
	case <-ctx.Done():
		ended <- true
		return "", fmt.Errorf("lookup %q: %w", service, context.Cause(ctx))
	}
}

// nameRelay is a relay after its join, with fake names and no writer:
// the test takes what it queues for the guest (answers).
func nameRelay(t *testing.T, names nameService) *relay {
	ctx, cancel := context.WithCancelCause(context.Background())
	t.Cleanup(func() { cancel(nil) })
	return &relay{log: slog.New(slog.DiscardHandler), ctx: ctx, cancel: cancel, out: newOutQueue(), names: names,
		rank: 0, limit: 2, links: make([]*hostLink, 2), dialing: make([]bool, 2), stopWriter: make(chan struct{})}
}

// answers decodes what the relay queued for the guest.
func answers(t *testing.T, r *relay) []wasm.Msg {
	t.Helper()
	r.out.mu.Lock()
	b := bytes.Clone(r.out.buf)
	r.out.buf = r.out.buf[:0]
	r.out.mu.Unlock()
	var ms []wasm.Msg
	rd := wasm.NewReader(bytes.NewReader(b))
	for {
		m, err := rd.Next()
		if err != nil {
			return ms
		}
		ms = append(ms, m)
	}
}

// waitLookup waits until the fake has a lookup of service waiting.
func (f *fakeNames) waitLookup(t *testing.T, service string) chan bool {
	t.Helper()
	var ended chan bool
	require.Eventually(t, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		ended = f.waiting[service]
		return ended != nil
	}, 10*time.Second, time.Millisecond)
	return ended
}

// TestRelayNameClasses: the name service's errors reach the guest as
// their classes, with their text.
func TestRelayNameClasses(t *testing.T) {
	leaktest.Check(t)
	for _, tc := range []struct {
		err   error
		class wasm.NameClass
	}{
		{nil, wasm.NameOK},
		{fmt.Errorf("%w: publish %q", signaling.ErrNameTaken, "ocean"), wasm.NameTaken},
		{fmt.Errorf("unpublish: %w", signaling.ErrNameUnknown), wasm.NameUnknown},
		{signaling.ErrNameLimit, wasm.NameLimit},
		{fmt.Errorf("signaling connection lost"), wasm.NameFailed},
	} {
		f := newFakeNames()
		f.err = tc.err
		r := nameRelay(t, f)
		require.NoError(t, r.handle(&wasm.Msg{Type: wasm.MsgName, ID: 7, Op: wasm.NamePublish, Service: "ocean", Port: "p"}))
		r.wg.Wait()
		ms := answers(t, r)
		require.Len(t, ms, 1)
		require.Equal(t, wasm.MsgNameAnswer, ms[0].Type)
		require.Equal(t, uint32(7), ms[0].ID)
		require.Equal(t, tc.class, ms[0].Class, "%v", tc.err)
		if tc.err != nil {
			require.Equal(t, tc.err.Error(), ms[0].Text)
		}
		require.Empty(t, r.calls)
	}
}

// TestRelayNameCancel: the guest's cancel ends the host's wait, and the
// cancelled request is not answered; a lookup answered is.
func TestRelayNameCancel(t *testing.T) {
	leaktest.Check(t)
	f := newFakeNames()
	r := nameRelay(t, f)
	require.NoError(t, r.handle(&wasm.Msg{Type: wasm.MsgName, ID: 1, Op: wasm.NameLookup, Service: "a"}))
	require.NoError(t, r.handle(&wasm.Msg{Type: wasm.MsgName, ID: 2, Op: wasm.NameLookup, Service: "b"}))
	endedA := f.waitLookup(t, "a")
	f.waitLookup(t, "b")
	require.NoError(t, r.handle(&wasm.Msg{Type: wasm.MsgNameCancel, ID: 1}))
	select {
	case <-endedA:
	case <-time.After(10 * time.Second):
		t.Fatal("the cancel did not end the host's lookup")
	}
	f.answer <- "port-b"
	r.wg.Wait()
	ms := answers(t, r)
	require.Len(t, ms, 1, "only the lookup not cancelled is answered")
	require.Equal(t, uint32(2), ms[0].ID)
	require.Equal(t, wasm.NameOK, ms[0].Class)
	require.Equal(t, "port-b", ms[0].Text)
	// a cancel that crossed the answer is no error
	require.NoError(t, r.handle(&wasm.Msg{Type: wasm.MsgNameCancel, ID: 2}))
}

// TestRelayNameBounds: a second request with an id in use, or more than
// MaxNameRequests outstanding, is a protocol error; the relay's end (the
// guest left) ends the lookups still waiting, unanswered.
func TestRelayNameBounds(t *testing.T) {
	leaktest.Check(t)
	f := newFakeNames()
	r := nameRelay(t, f)
	for id := range uint32(wasm.MaxNameRequests) {
		require.NoError(t, r.handle(&wasm.Msg{Type: wasm.MsgName, ID: id + 1, Op: wasm.NameLookup, Service: fmt.Sprint(id)}))
	}
	err := r.handle(&wasm.Msg{Type: wasm.MsgName, ID: 1, Op: wasm.NameLookup, Service: "again"})
	require.ErrorIs(t, err, wasm.ErrProtocol)
	require.ErrorContains(t, err, "is outstanding")
	err = r.handle(&wasm.Msg{Type: wasm.MsgName, ID: 1000, Op: wasm.NameLookup, Service: "more"})
	require.ErrorIs(t, err, wasm.ErrProtocol)
	require.ErrorContains(t, err, "beyond the")
	// a cancel frees a place at once
	require.NoError(t, r.handle(&wasm.Msg{Type: wasm.MsgNameCancel, ID: 1}))
	require.NoError(t, r.handle(&wasm.Msg{Type: wasm.MsgName, ID: 1001, Op: wasm.NameLookup, Service: "more"}))
	r.cancel(errGuestDone)
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.wg.Wait()
	require.Empty(t, answers(t, r))
}
