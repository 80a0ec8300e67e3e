//go:build !js && !wasip1

package mesh

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/peer"
	"github.com/meshmpi/meshmpi/signaling"
)

// failJob is a formed job of size ranks on its own server, each with an
// Evicted callback that records its error.
type failJob struct {
	srv     *signaling.Local
	ms      []*member
	evicted []chan error // cap 1, by rank

	mu   sync.Mutex
	deps []signaling.Departure
	dep  chan struct{} // cap 1: deps grew
}

func startFailJob(t *testing.T, ctx context.Context, size int) *failJob {
	t.Helper()
	j := &failJob{dep: make(chan struct{}, 1)}
	srv, err := signaling.ListenLocal(signaling.Config{Departed: func(d signaling.Departure) {
		j.mu.Lock()
		j.deps = append(j.deps, d)
		j.mu.Unlock()
		select {
		case j.dep <- struct{}{}:
		default:
		}
	}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	j.srv = srv
	toks, err := srv.SeatTokens("failure", size, overWebRTC, time.Hour)
	require.NoError(t, err)
	for r := range size {
		id := newIdentity(t)
		ch := make(chan error, 1)
		c, err := signaling.Dial(ctx, srv.URL(), "failure", toks[r], &signaling.DialOptions{Rank: &r, Fingerprint: id.Fingerprint()})
		require.NoError(t, err)
		var ep *peer.Endpoint
		m := New(c, Net{Loopback: true, Identity: id, Evicted: func(err error) {
			// told first, while the endpoint is open: a process that ends
			// here must say why before its failed operations return
			if _, _, perr := ep.Iprobe(peer.AnySource, 1, 9); perr != nil {
				err = fmt.Errorf("%w (%v): %w", errToldLate, perr, err)
			}
			ch <- err
		}})
		ep, err = peer.NewEndpoint(peer.Config{Rank: r, Size: size, Dialer: m})
		require.NoError(t, err)
		m.Start(ep)
		t.Cleanup(func() {
			ep.Close(nil)
			m.Close()
		})
		j.ms = append(j.ms, &member{id: id, client: c, m: m, ep: ep})
		j.evicted = append(j.evicted, ch)
	}
	for _, m := range j.ms {
		require.NoError(t, m.m.WaitReady(ctx))
	}
	return j
}

// errToldLate marks an eviction told after the endpoint closed.
var errToldLate = errors.New("Net.Evicted told after the endpoint closed")

// toldEvicted waits until rank's Net.Evicted was told, and returns its
// error; it must have been told before the endpoint closed.
func (j *failJob) toldEvicted(t *testing.T, ctx context.Context, rank int) error {
	t.Helper()
	select {
	case err := <-j.evicted[rank]:
		require.NotErrorIs(t, err, errToldLate)
		return err
	case <-ctx.Done():
		t.Fatalf("rank %d was not told it was evicted", rank)
		return nil
	}
}

// departure waits until the server announced rank's departure.
func (j *failJob) departure(t *testing.T, ctx context.Context, rank int) signaling.Departure {
	t.Helper()
	for {
		j.mu.Lock()
		for _, d := range j.deps {
			if d.Rank == rank {
				j.mu.Unlock()
				return d
			}
		}
		j.mu.Unlock()
		select {
		case <-j.dep:
		case <-ctx.Done():
			t.Fatalf("no departure of rank %d before the hang guard", rank)
		}
	}
}

// postRecv posts a receive at m from rank from.
func postRecv(t *testing.T, m *member, from int) *peer.Op {
	t.Helper()
	op := m.ep.GetOp()
	require.NoError(t, m.ep.StartRecv(op, from, 1, 9, make([]byte, 8)))
	return op
}

// waitOpCtx is waitOp bounded by ctx.
func waitOpCtx(t *testing.T, ctx context.Context, op *peer.Op) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- waitOp(op) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		t.Fatal("operation still pending at the hang guard")
		return nil
	}
}

// A link that breaks while both ranks stay connected to the server (here
// rank 1 drops its link to rank 0 and says nothing: a broken path, or a
// rank whose peer layer is wedged) spreads: rank 0's endpoint sees the
// loss and its mesh reports it, the server declares rank 1 failed, rank 2
// — which never had a link to rank 1 — fails its receive from rank 1 with
// the reason, and rank 1 is evicted: its endpoint closes, so its pending
// receives (from a rank, and from any source) fail with ErrDeclaredFailed,
// and Net.Evicted is told.
func TestLinkLossSpreads(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // hang guard
	defer cancel()
	j := startFailJob(t, ctx, 3)
	ms := j.ms
	sErr, rErr := exchange(ms[0], ms[1], 0, 1)
	require.NoError(t, sErr)
	require.NoError(t, rErr)

	at2 := postRecv(t, ms[2], 1)
	at1 := postRecv(t, ms[1], 2)
	any1 := postRecv(t, ms[1], peer.AnySource)
	p := ms[1].m.existing(0)
	require.NotNil(t, p)
	<-p.done // set: the exchange went over it
	t0 := time.Now()
	require.NoError(t, p.link.Close()) // rank 0 sees it close; rank 1's endpoint does not

	err := waitOpCtx(t, ctx, at2)
	t.Logf("rank 2 learned of the broken link %v after it closed (the server's grace for a reported rank included)", time.Since(t0).Round(time.Millisecond))
	require.ErrorIs(t, err, peer.ErrProcFailed)
	require.ErrorContains(t, err, "rank 1 left the job (declared failed: rank 0 lost its link to it (")

	err = waitOpCtx(t, ctx, at1)
	require.ErrorIs(t, err, peer.ErrProcFailed)
	require.ErrorIs(t, err, signaling.ErrDeclaredFailed)
	require.ErrorContains(t, err, "rank 1 was evicted from the job")
	err = waitOpCtx(t, ctx, any1) // a wildcard receive too: its endpoint is closed
	require.ErrorIs(t, err, signaling.ErrDeclaredFailed)
	err = j.toldEvicted(t, ctx, 1)
	require.ErrorIs(t, err, signaling.ErrDeclaredFailed)
	require.ErrorContains(t, err, "rank 1 was declared failed: rank 0 lost its link to it")
	d := j.departure(t, ctx, 1)
	require.True(t, d.Declared)
	require.Equal(t, uint64(1), j.srv.Stats().Declared)
	for _, r := range []int{0, 2} {
		select {
		case err := <-j.evicted[r]:
			t.Fatalf("rank %d evicted: %v", r, err)
		default:
		}
	}
	// ranks 0 and 2 go on
	sErr, rErr = exchange(ms[2], ms[0], 2, 0)
	require.NoError(t, sErr)
	require.NoError(t, rErr)
}

// A rank that leaves cleanly (as Finalize does: its links close, then its
// signaling connection) is reported by the peers that see its links close,
// and is not declared failed for it: it says it is leaving first (Leave),
// or leaves within the server's grace.
func TestCleanLeaveNotDeclared(t *testing.T) {
	for _, leave := range []bool{true, false} {
		t.Run(fmt.Sprintf("leave=%v", leave), func(t *testing.T) { cleanLeave(t, leave) })
	}
}

func cleanLeave(t *testing.T, leave bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // hang guard
	defer cancel()
	j := startFailJob(t, ctx, 3)
	ms := j.ms
	if leave {
		ms[1].m.Leave()
	}
	for _, pair := range [][2]int{{0, 1}, {2, 1}} {
		sErr, rErr := exchange(ms[pair[0]], ms[pair[1]], pair[0], pair[1])
		require.NoError(t, sErr)
		require.NoError(t, rErr)
	}
	at0 := postRecv(t, ms[0], 1)
	ms[1].ep.Close(nil)
	require.ErrorIs(t, waitOpCtx(t, ctx, at0), peer.ErrProcFailed) // the link closed: reported
	ms[1].m.Close()
	d := j.departure(t, ctx, 1)
	// a loaded machine may see the socket end before the close frame:
	// the departure is then not clean (a rank killed right after it said
	// leaving must not count as finished), but it is no declaration
	require.False(t, d.Declared, "%+v", d)
	require.Zero(t, j.srv.Stats().Declared) // its departure ended any declaration
	select {
	case err := <-j.evicted[1]:
		t.Fatalf("rank 1 evicted: %v", err)
	default:
	}
}

// Suspect ignores what it cannot report: itself, ranks outside the job, a
// rank reported already, and everything once the mesh is closed.
func TestSuspectFiltered(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // hang guard
	defer cancel()
	j := startFailJob(t, ctx, 2)
	m := j.ms[0].m
	for _, r := range []int{-1, 0, 2} {
		m.Suspect(r, errors.New("x"))
	}
	m.mu.Lock()
	require.Empty(t, m.reports)
	require.Equal(t, []bool{false, false}, m.known)
	m.mu.Unlock()
	require.Equal(t, "ab", clip("abc", 2))
	require.Equal(t, "a", clip("a𝄞", 3))
	require.Equal(t, "a𝄞", clip("a𝄞", 5))
	m.Close()
	m.Suspect(1, errors.New("after close"))
	m.mu.Lock()
	require.Empty(t, m.reports)
	m.mu.Unlock()
}

// A job the server ends under its running ranks (EndJob: the organizer
// ended it, or its time limit passed) evicts every rank: pending
// receives, wildcard ones too, fail with the reason, and Net.Evicted is
// told, so a rank program stops instead of running on over its links.
func TestJobEndedEvicts(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // hang guard
	defer cancel()
	j := startFailJob(t, ctx, 2)
	sErr, rErr := exchange(j.ms[0], j.ms[1], 0, 1) // a link is up: it must not keep the ranks going
	require.NoError(t, sErr)
	require.NoError(t, rErr)
	at0 := postRecv(t, j.ms[0], 1)
	any1 := postRecv(t, j.ms[1], peer.AnySource)

	require.NoError(t, j.srv.EndJob("failure", "the organizer ended it"))
	for r, op := range []*peer.Op{at0, any1} {
		err := waitOpCtx(t, ctx, op)
		require.ErrorIs(t, err, peer.ErrProcFailed, "rank %d", r)
		// the other rank, evicted first, may close their link before
		// this one hears of its own eviction: then the receive fails
		// with the link's loss, which is as true (the remote's close
		// message, or ICE closing first on a loaded machine)
		if errors.Is(err, signaling.ErrJobGone) {
			require.ErrorContains(t, err, "the organizer ended it", "rank %d", r)
		} else {
			require.ErrorContains(t, err, fmt.Sprintf("link to rank %d: ", 1-r), "rank %d", r)
		}
		err = j.toldEvicted(t, ctx, r)
		require.ErrorIs(t, err, signaling.ErrJobGone)
		require.ErrorContains(t, err, fmt.Sprintf("rank %d was evicted from the job", r))
	}
}
