//go:build !js && !wasip1

package host_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/internal/leaktest"
	"github.com/meshmpi/meshmpi/peer"
	"github.com/meshmpi/meshmpi/signaling"
	"github.com/meshmpi/meshmpi/wasm"
	"github.com/meshmpi/meshmpi/wasm/host"
	"github.com/meshmpi/meshmpi/wasm/internal/hosttest"
)

// frame is one frame a test endpoint received.
type frame struct {
	from int
	data []byte
}

// testEndpoint is a guest's endpoint in these tests: it keeps the links
// the guest attaches and hands their frames to the test.
type testEndpoint struct {
	mu     sync.Mutex
	links  map[int]peer.Link
	frames chan frame
}

func newTestEndpoint() *testEndpoint {
	return &testEndpoint{links: make(map[int]peer.Link), frames: make(chan frame, 16)}
}

func (e *testEndpoint) Attach(rank int, l peer.Link) error {
	e.mu.Lock()
	e.links[rank] = l
	e.mu.Unlock()
	l.Bind(&frameHandler{e: e, rank: rank})
	return nil
}

func (e *testEndpoint) FailPeer(int, error) {}

// link is the link the guest attached for rank, once it has.
func (e *testEndpoint) link(t *testing.T, rank int) peer.Link {
	t.Helper()
	var l peer.Link
	require.Eventually(t, func() bool {
		e.mu.Lock()
		defer e.mu.Unlock()
		l = e.links[rank]
		return l != nil
	}, time.Minute, 5*time.Millisecond, "no link to rank %d", rank)
	return l
}

// expect waits for a frame from rank carrying text.
func (e *testEndpoint) expect(t *testing.T, from int, text string) {
	t.Helper()
	select {
	case f := <-e.frames:
		require.Equal(t, from, f.from)
		require.Equal(t, text, string(f.data[peer.HeaderLen:]))
	case <-time.After(time.Minute):
		t.Fatalf("no frame from rank %d", from)
	}
}

type frameHandler struct {
	e    *testEndpoint
	rank int
}

func (h *frameHandler) HandleFrame(hdr, payload []byte) {
	h.e.frames <- frame{h.rank, append(bytes.Clone(hdr), payload...)}
}
func (h *frameHandler) HandleWritable()   {}
func (h *frameHandler) HandleClose(error) {}

// send writes text in one frame on l.
func send(t *testing.T, l peer.Link, text string) {
	t.Helper()
	_, err := l.WriteFrame(make([]byte, peer.HeaderLen), []byte(text))
	require.NoError(t, err)
}

// hosted is a guest (this process's wasm.Guest, no runtime) joined to a
// job through host.Serve over a pipe.
type hosted struct {
	g    *wasm.Guest
	ep   *testEndpoint
	done chan error // Serve's result
}

// hostGuest joins job as rank through a host and starts the guest; it
// returns once the guest has its welcome.
func hostGuest(ctx context.Context, job host.Job, rank int) (*hosted, error) {
	job.Rank = rank
	hostEnd, guestEnd := net.Pipe()
	var key [wasm.KeyLen]byte
	key[0] = byte(rank + 1)
	h := &hosted{ep: newTestEndpoint(), done: make(chan error, 1)}
	go func() { h.done <- host.Serve(ctx, hostEnd, host.Config{Job: job, Key: key}) }()
	g, err := wasm.Connect(ctx, guestEnd, key)
	if err != nil {
		return nil, errors.Join(err, <-h.done)
	}
	h.g = g
	g.Start(h.ep)
	return h, nil
}

// close closes the guest's stream and checks that its host ended well.
func (h *hosted) close(t *testing.T) {
	t.Helper()
	h.g.Close()
	require.NoError(t, <-h.done)
}

// hostGuests joins ranks 0 … n-1 of job at once (a job forms only when
// all are present).
func hostGuests(t *testing.T, ctx context.Context, job host.Job, n int) []*hosted {
	t.Helper()
	hs := make([]*hosted, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Go(func() { hs[r], errs[r] = hostGuest(ctx, job, r) })
	}
	wg.Wait()
	for r := range n {
		require.NoError(t, errs[r], "rank %d", r)
	}
	return hs
}

// TestLateGuest: in a job of 2 that may grow to 3, a guest that joins
// after the job formed is rank 2, late, and links both ways with the
// world's guests: it dials rank 0, and rank 1 dials it.
func TestLateGuest(t *testing.T) {
	leaktest.Check(t)
	srv, err := signaling.ListenLocal(signaling.Config{MaxJobSize: 3})
	require.NoError(t, err)
	defer srv.Close()
	token, err := srv.Mint(signaling.Claims{Job: "grow", Size: 2, Max: 3, Expires: time.Now().Add(time.Hour).Unix(),
		Settings: map[string]string{meshmpi.SettingNetwork: "loopback"}})
	require.NoError(t, err)
	job := host.Job{Signal: srv.URL(), ID: "grow", Token: token, JoinTimeout: time.Minute}
	ctx, cancel := context.WithTimeout(context.Background(), hosttest.JobLimit)
	defer cancel()

	world := hostGuests(t, ctx, job, 2)
	for r, h := range world {
		w := h.g.Welcome()
		require.Equal(t, wasm.Welcome{Rank: r, Size: 2, Max: 3}, wasm.Welcome{Rank: w.Rank, Size: w.Size, Max: w.Max, Late: w.Late})
		require.Equal(t, 3, w.Limit())
	}
	late, err := hostGuest(ctx, job, meshmpi.AnyRank)
	require.NoError(t, err)
	w := late.g.Welcome()
	require.Equal(t, wasm.Welcome{Rank: 2, Size: 2, Max: 3, Late: true}, wasm.Welcome{Rank: w.Rank, Size: w.Size, Max: w.Max, Late: w.Late})
	require.Equal(t, "loopback", w.Settings[meshmpi.SettingNetwork])

	// the late rank dials a world rank
	l, err := late.g.Dial(ctx, 0)
	require.NoError(t, err)
	send(t, l, "from the late rank")
	world[0].ep.expect(t, 2, "from the late rank")
	send(t, world[0].ep.link(t, 2), "to the late rank")
	late.ep.expect(t, 0, "to the late rank")

	// a world rank dials the late rank
	l, err = world[1].g.Dial(ctx, 2)
	require.NoError(t, err)
	send(t, l, "from rank 1")
	late.ep.expect(t, 1, "from rank 1")
	send(t, late.ep.link(t, 1), "to rank 1")
	world[1].ep.expect(t, 2, "to rank 1")

	// beyond the limit is no rank
	_, err = late.g.Dial(ctx, 3)
	require.Error(t, err)

	late.close(t)
	for _, h := range world {
		h.close(t)
	}
}

// TestGuestNames: two guests use the job's name service through their
// hosts and the signaling server: a lookup waits for the publish, a
// second publish of the name is taken, an unpublish of an unknown name
// fails, and a lookup whose context ends returns without holding up the
// guest's other requests.
func TestGuestNames(t *testing.T) {
	leaktest.Check(t)
	job := hosttest.Job(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), hosttest.JobLimit)
	defer cancel()
	hs := hostGuests(t, ctx, job, 2)
	a, b := hs[0].g, hs[1].g

	type result struct {
		port string
		err  error
	}
	found := make(chan result, 1)
	go func() {
		port, err := b.Lookup(ctx, "ocean")
		found <- result{port, err}
	}()
	// a lookup of a name not yet published waits, and the guest's other
	// requests go on meanwhile
	time.Sleep(100 * time.Millisecond)
	short, stop := context.WithTimeout(ctx, 200*time.Millisecond)
	_, err := b.Lookup(short, "nobody")
	stop()
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorContains(t, err, `wasm: lookup "nobody"`)
	select {
	case r := <-found:
		t.Fatalf("the lookup ended before the publish: %v", r)
	default:
	}

	require.NoError(t, a.Publish(ctx, "ocean", "port-of-rank-0"))
	r := <-found
	require.NoError(t, r.err)
	require.Equal(t, "port-of-rank-0", r.port)
	port, err := a.Lookup(ctx, "ocean")
	require.NoError(t, err)
	require.Equal(t, "port-of-rank-0", port)

	err = b.Publish(ctx, "ocean", "port-of-rank-1")
	require.ErrorIs(t, err, wasm.ErrNameTaken)
	require.ErrorContains(t, err, `wasm: publish "ocean"`)

	require.NoError(t, a.Unpublish(ctx, "ocean"))
	err = b.Unpublish(ctx, "ocean")
	require.ErrorIs(t, err, wasm.ErrNameUnknown)

	// after the cancelled lookup, its name is published and looked up
	require.NoError(t, b.Publish(ctx, "nobody", "port-of-rank-1"))
	port, err = a.Lookup(ctx, "nobody")
	require.NoError(t, err)
	require.Equal(t, "port-of-rank-1", port)

	// the job's names are bounded (signaling.MaxNames)
	var limitErr error
	for i := range signaling.MaxNames + 1 {
		if limitErr = a.Publish(ctx, "svc-"+strconv.Itoa(i), "p"); limitErr != nil {
			break
		}
	}
	require.ErrorIs(t, limitErr, wasm.ErrNameLimit)

	for _, h := range hs {
		h.close(t)
	}
}
