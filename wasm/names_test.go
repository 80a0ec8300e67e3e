package wasm

import (
	"bufio"
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/peer"
)

// nopEndpoint takes no links: the name tests have none.
type nopEndpoint struct{}

func (nopEndpoint) Attach(int, peer.Link) error { return errors.New("no links here") }
func (nopEndpoint) FailPeer(int, error)         {}

// scriptedHost is the test's end of a guest's stream: it greets the
// guest, welcomes it, and hands the test every message the guest sends.
type scriptedHost struct {
	t    *testing.T
	c    net.Conn
	msgs chan Msg // the guest's messages after the join
	mu   sync.Mutex
}

// startGuest connects a Guest to a scripted host over a pipe and starts
// it; both end with the test.
func startGuest(t *testing.T) (*Guest, *scriptedHost) {
	t.Helper()
	hostEnd, guestEnd := net.Pipe()
	var key [KeyLen]byte
	h := &scriptedHost{t: t, c: hostEnd, msgs: make(chan Msg, 4*MaxNameRequests)}
	go func() {
		defer close(h.msgs)
		rd := NewReader(bufio.NewReader(hostEnd))
		if _, err := hostEnd.Write(AppendHostHello(nil, key)); err != nil {
			return
		}
		if m, err := rd.Next(); err != nil || m.Type != MsgJoin {
			return
		}
		if _, err := hostEnd.Write(AppendWelcome(nil, Welcome{Rank: 0, Size: 2, Max: 4})); err != nil {
			return
		}
		for {
			m, err := rd.Next()
			if err != nil {
				return
			}
			m.Service, m.Port = strings.Clone(m.Service), strings.Clone(m.Port)
			h.msgs <- m
		}
	}()
	g, err := Connect(context.Background(), guestEnd, key)
	require.NoError(t, err)
	g.Start(nopEndpoint{})
	t.Cleanup(func() {
		g.Close()
		hostEnd.Close()
	})
	return g, h
}

// next is the guest's next message.
func (h *scriptedHost) next() Msg {
	h.t.Helper()
	select {
	case m, ok := <-h.msgs:
		require.True(h.t, ok, "the guest's stream ended")
		return m
	case <-time.After(10 * time.Second):
		h.t.Fatal("no message from the guest")
	}
	return Msg{}
}

// send writes b to the guest.
func (h *scriptedHost) send(b []byte) {
	h.t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := h.c.Write(b)
	require.NoError(h.t, err)
}

// result is a name call's outcome.
type result struct {
	port string
	err  error
}

// TestGuestWelcomeLimit: a guest's tables hold the job's limit, so it
// may dial a late rank (Size ≤ rank < Max) but not one beyond Max.
func TestGuestWelcomeLimit(t *testing.T) {
	g, h := startGuest(t)
	require.Equal(t, Welcome{Rank: 0, Size: 2, Max: 4}, Welcome{Rank: g.Welcome().Rank, Size: g.Welcome().Size, Max: g.Welcome().Max})
	require.Equal(t, 4, g.Welcome().Limit())
	go g.Dial(context.Background(), 3)
	m := h.next()
	require.Equal(t, MsgConnect, m.Type)
	require.Equal(t, 3, m.Rank)
	_, err := g.Dial(context.Background(), 4)
	require.ErrorContains(t, err, "dial rank 4 of 4")
}

// TestNameAnswers: requests outstanding at once get their own answers,
// in whatever order the host sends them, each class as its error.
func TestNameAnswers(t *testing.T) {
	g, h := startGuest(t)
	ctx := context.Background()
	res := make(chan result, 1)
	go func() {
		port, err := g.Lookup(ctx, "ocean")
		res <- result{port, err}
	}()
	lookup := h.next()
	require.Equal(t, MsgName, lookup.Type)
	require.Equal(t, NameLookup, lookup.Op)
	require.Equal(t, "ocean", lookup.Service)
	require.Empty(t, lookup.Port)
	errs := make(chan error, 3)
	go func() { errs <- g.Publish(ctx, "ocean", "port-1") }()
	publish := h.next()
	require.Equal(t, NamePublish, publish.Op)
	require.Equal(t, "port-1", publish.Port)
	go func() { errs <- g.Unpublish(ctx, "river") }()
	unpublish := h.next()
	require.Equal(t, NameUnpublish, unpublish.Op)
	require.NotEqual(t, lookup.ID, publish.ID)
	require.NotEqual(t, publish.ID, unpublish.ID)

	// the unpublish is answered first, the lookup last
	h.send(AppendNameAnswer(nil, unpublish.ID, NameUnknown, "signaling: service name unknown: unpublish \"river\""))
	err := <-errs
	require.ErrorIs(t, err, ErrNameUnknown)
	require.EqualError(t, err, `wasm: unpublish "river": service name not published`)
	h.send(AppendNameAnswer(nil, publish.ID, NameOK, ""))
	require.NoError(t, <-errs)
	select {
	case r := <-res:
		t.Fatalf("the lookup returned %v before its answer", r)
	default:
	}
	h.send(AppendNameAnswer(nil, lookup.ID, NameOK, "port-1"))
	r := <-res
	require.NoError(t, r.err)
	require.Equal(t, "port-1", r.port)

	for _, tc := range []struct {
		class NameClass
		want  error
	}{{NameTaken, ErrNameTaken}, {NameLimit, ErrNameLimit}} {
		go func() { errs <- g.Publish(ctx, "ocean", "port-2") }()
		m := h.next()
		h.send(AppendNameAnswer(nil, m.ID, tc.class, "whatever the server said"))
		require.ErrorIs(t, <-errs, tc.want)
	}
	go func() { errs <- g.Publish(ctx, "ocean", "port-2") }()
	m := h.next()
	h.send(AppendNameAnswer(nil, m.ID, NameFailed, "signaling connection lost"))
	err = <-errs
	require.EqualError(t, err, `wasm: publish "ocean": the host: signaling connection lost`)
	for _, sentinel := range []error{ErrNameTaken, ErrNameUnknown, ErrNameLimit} {
		require.NotErrorIs(t, err, sentinel)
	}
}

// TestNameCancel: a Lookup whose context ends tells the host (name-cancel
// with its id) and returns the context's cause; an answer that crossed
// the cancel is dropped, and the stream goes on.
func TestNameCancel(t *testing.T) {
	g, h := startGuest(t)
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("the caller gave up")
	res := make(chan result, 1)
	go func() {
		port, err := g.Lookup(ctx, "ocean")
		res <- result{port, err}
	}()
	lookup := h.next()
	cancel(stop)
	m := h.next()
	require.Equal(t, MsgNameCancel, m.Type)
	require.Equal(t, lookup.ID, m.ID)
	r := <-res
	require.ErrorIs(t, r.err, stop)
	require.ErrorContains(t, r.err, `wasm: lookup "ocean"`)

	h.send(AppendNameAnswer(nil, lookup.ID, NameOK, "late")) // crossed the cancel
	go func() {
		port, err := g.Lookup(context.Background(), "ocean")
		res <- result{port, err}
	}()
	m = h.next()
	require.Greater(t, m.ID, lookup.ID)
	h.send(AppendNameAnswer(nil, m.ID, NameOK, "port-1"))
	r = <-res
	require.NoError(t, r.err)
	require.Equal(t, "port-1", r.port)

	// a context that ended before the call sends nothing
	_, err := g.Lookup(ctx, "ocean")
	require.ErrorIs(t, err, stop)
	select {
	case m := <-h.msgs:
		t.Fatalf("the guest sent %v for a call whose context had ended", m.Type)
	case <-time.After(50 * time.Millisecond):
	}
}

// TestNameRequestsBounded: at most MaxNameRequests are outstanding; the
// next call waits until one ends, a cancelled one too.
func TestNameRequestsBounded(t *testing.T) {
	g, h := startGuest(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errs := make(chan error, MaxNameRequests+1)
	for range MaxNameRequests + 1 {
		go func() {
			_, err := g.Lookup(ctx, "ocean")
			errs <- err
		}()
	}
	ids := make([]uint32, 0, MaxNameRequests)
	for range MaxNameRequests {
		ids = append(ids, h.next().ID)
	}
	select {
	case m := <-h.msgs:
		t.Fatalf("request %d beyond the bound went out (%v)", m.ID, m.Type)
	case <-time.After(50 * time.Millisecond):
	}
	h.send(AppendNameAnswer(nil, ids[0], NameOK, "p"))
	require.NoError(t, <-errs)
	last := h.next()
	require.Equal(t, MsgName, last.Type)
	cancel()
	// every other call cancels: MaxNameRequests cancels come
	for range MaxNameRequests {
		require.Equal(t, MsgNameCancel, h.next().Type)
		require.ErrorIs(t, <-errs, context.Canceled)
	}
}

// TestNameAnswerNeverAsked: an answer to an id the guest never sent is a
// protocol error: the stream ends, and the calls outstanding and later
// fail with ErrProcFailed.
func TestNameAnswerNeverAsked(t *testing.T) {
	g, h := startGuest(t)
	res := make(chan result, 1)
	go func() {
		port, err := g.Lookup(context.Background(), "ocean")
		res <- result{port, err}
	}()
	m := h.next()
	h.send(AppendNameAnswer(nil, m.ID+1, NameOK, "p"))
	r := <-res
	require.ErrorIs(t, r.err, peer.ErrProcFailed)
	require.ErrorIs(t, r.err, ErrProtocol)
	require.ErrorContains(t, r.err, "never sent")
	err := g.Publish(context.Background(), "ocean", "p")
	require.ErrorIs(t, err, peer.ErrProcFailed)
}

// TestNameStreamEnds: a host that goes away fails the calls outstanding.
func TestNameStreamEnds(t *testing.T) {
	g, h := startGuest(t)
	res := make(chan result, 1)
	go func() {
		port, err := g.Lookup(context.Background(), "ocean")
		res <- result{port, err}
	}()
	h.next()
	h.c.Close()
	r := <-res
	require.ErrorIs(t, r.err, peer.ErrProcFailed)
}

// TestNameBounds: names out of bounds are refused before they are sent.
func TestNameBounds(t *testing.T) {
	g, h := startGuest(t)
	ctx := context.Background()
	long := strings.Repeat("s", MaxName+1)
	for _, err := range []error{
		g.Publish(ctx, "", "port"),
		g.Publish(ctx, long, "port"),
		g.Publish(ctx, "svc", ""),
		g.Publish(ctx, "svc", long),
		g.Unpublish(ctx, long),
		g.Publish(ctx, "svc\xff", "port"),
		func() error { _, err := g.Lookup(ctx, ""); return err }(),
	} {
		require.Error(t, err)
		require.NotErrorIs(t, err, ErrProtocol)
	}
	go func() { _ = g.Publish(ctx, strings.Repeat("s", MaxName), strings.Repeat("p", MaxName)) }()
	m := h.next()
	require.Len(t, m.Service, MaxName)
	require.Len(t, m.Port, MaxName)
}

// failRecorder records the ranks the guest fails.
type failRecorder struct {
	nopEndpoint
	mu     sync.Mutex
	failed []int
}

func (f *failRecorder) FailPeer(rank int, _ error) {
	f.mu.Lock()
	f.failed = append(f.failed, rank)
	f.mu.Unlock()
}

// When the host ends the stream, the guest fails every other rank of the
// job (its operations with ranks it had no link to would wait forever);
// when the guest closes it itself (Finalize), it fails none.
func TestGuestCutOff(t *testing.T) {
	for _, hostEnds := range []bool{true, false} {
		hostEnd, guestEnd := net.Pipe()
		var key [KeyLen]byte
		go func() {
			rd := NewReader(bufio.NewReader(hostEnd))
			_, _ = hostEnd.Write(AppendHostHello(nil, key))
			if m, err := rd.Next(); err != nil || m.Type != MsgJoin {
				return
			}
			_, _ = hostEnd.Write(AppendWelcome(nil, Welcome{Rank: 1, Size: 3, Max: 4}))
			for {
				if _, err := rd.Next(); err != nil {
					return
				}
			}
		}()
		g, err := Connect(context.Background(), guestEnd, key)
		require.NoError(t, err)
		ep := &failRecorder{}
		g.Start(ep)
		if hostEnds {
			hostEnd.Close()
			<-g.readDone
		} else {
			g.Close()
			hostEnd.Close()
		}
		ep.mu.Lock()
		if hostEnds {
			require.Equal(t, []int{0, 2, 3}, ep.failed)
		} else {
			require.Empty(t, ep.failed)
		}
		ep.mu.Unlock()
		g.Close()
	}
}
