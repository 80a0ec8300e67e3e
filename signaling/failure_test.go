//go:build !js

package signaling

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// joinSeats joins every seat of a fresh seated job and waits for Ready on
// each.
func joinSeats(t *testing.T, url, job string, size int) []*Client {
	t.Helper()
	toks := seats(t, job, size)
	cs := make([]*Client, size)
	for r := range size {
		cs[r] = dial(t, url, job, toks[r], nil)
	}
	for _, c := range cs {
		recvAs[*Ready](t, c)
	}
	return cs
}

// departures records Config.Departed.
type departures struct {
	mu  sync.Mutex
	got []Departure
}

func (d *departures) add(x Departure) {
	d.mu.Lock()
	d.got = append(d.got, x)
	d.mu.Unlock()
}

func (d *departures) list() []Departure {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Departure(nil), d.got...)
}

// One rank's report that it lost its link to another declares that rank
// failed: every other rank hears it left, with the reporter and its
// reason; the rank is evicted with an error that says so
// (ErrDeclaredFailed); its seat refuses it from then on; and the server
// counts it.
func TestSuspectDeclaresFailed(t *testing.T) {
	var deps departures
	srv, url := startServer(t, func(c *Config) { c.Departed = deps.add })
	cs := joinSeats(t, url, "job", 4)
	ctx := context.Background()
	require.NoError(t, cs[1].Send(ctx, &Suspect{Rank: 3, Reason: "path broken: ICE did not reconnect within 6s"}))

	const why = "declared failed: rank 1 lost its link to it (path broken: ICE did not reconnect within 6s)"
	for _, c := range cs[:3] {
		l := recvAs[*Left](t, c)
		require.Equal(t, 3, l.Rank)
		require.Equal(t, why, l.Reason)
	}
	expectClosedWith(t, cs[3], CodeDeclaredFailed)
	err := cs[3].Err()
	require.ErrorIs(t, err, ErrDeclaredFailed)
	require.ErrorIs(t, err, ErrRejected)
	require.Contains(t, err.Error(), "rank 3 was declared failed: rank 1 lost its link to it (path broken")

	// the seat refuses the rank: fail-stop
	tctx, cancel := context.WithTimeout(ctx, hangGuard)
	defer cancel()
	_, err = Dial(tctx, url, "job", seats(t, "job", 4)[3], nil)
	require.ErrorIs(t, err, ErrDeclaredFailed)
	require.Contains(t, err.Error(), "rank 3 was declared failed and cannot rejoin the job")

	st := srv.Stats()
	require.Equal(t, uint64(1), st.Declared)
	require.Equal(t, uint64(1), st.Departures)
	require.Equal(t, 3, st.Ranks)
	d := deps.list()
	require.Len(t, d, 1)
	require.Equal(t, Departure{Job: "job", Rank: 3, Reason: why, At: d[0].At, Declared: true}, d[0])
	require.False(t, d[0].At.IsZero())
}

// A rank that leaves on its own within the grace after a peer reported it
// (a rank that finalizes closes its links just before its connection) is
// not declared failed: its departure is an ordinary one.
func TestSuspectThenCleanLeave(t *testing.T) {
	var deps departures
	srv, url := startServer(t, func(c *Config) { c.Departed = deps.add })
	cs := joinSeats(t, url, "job", 3)
	require.NoError(t, cs[0].Send(context.Background(), &Suspect{Rank: 2, Reason: "the remote closed the link"}))
	require.NoError(t, cs[2].Close())
	for _, c := range cs[:2] {
		l := recvAs[*Left](t, c)
		require.Equal(t, 2, l.Rank)
		require.Equal(t, "connection closed", l.Reason)
	}
	// a later report changes nothing either; a ping round trip orders it
	require.NoError(t, cs[1].Send(context.Background(), &Suspect{Rank: 2}))
	require.NoError(t, cs[1].Send(context.Background(), &Ping{ID: 1}))
	require.Equal(t, uint64(1), recvAs[*Pong](t, cs[1]).ID)
	require.Zero(t, srv.Stats().Declared)
	d := deps.list()
	require.Len(t, d, 1)
	require.True(t, d[0].Clean)
	require.False(t, d[0].Declared)
}

// Reports that cannot declare anyone: about oneself or a rank outside the
// job (bad-rank, not fatal), before the job formed, twice about one rank,
// and from a rank that was itself declared failed.
func TestSuspectIgnored(t *testing.T) {
	srv, url := startServer(t, nil)
	ctx := context.Background()

	// before the job formed: no links exist, nothing to declare
	toks := seats(t, "early", 2)
	early := dial(t, url, "early", toks[0], nil)
	require.NoError(t, early.Send(ctx, &Suspect{Rank: 1}))
	require.NoError(t, early.Send(ctx, &Ping{ID: 5}))
	require.Equal(t, uint64(5), recvAs[*Pong](t, early).ID)

	cs := joinSeats(t, url, "job", 3)
	for _, bad := range []int{0, 3, 1000} {
		require.NoError(t, cs[0].Send(ctx, &Suspect{Rank: bad}))
		e := recvAs[*Error](t, cs[0])
		require.Equal(t, CodeBadRank, e.Code, e.Message)
	}
	require.NoError(t, cs[0].Send(ctx, &Suspect{Rank: 2}))
	require.NoError(t, cs[0].Send(ctx, &Suspect{Rank: 2}))
	require.Equal(t, 2, recvAs[*Left](t, cs[0]).Rank)
	require.Equal(t, 2, recvAs[*Left](t, cs[1]).Rank)
	expectClosedWith(t, cs[2], CodeDeclaredFailed)
	// the evicted rank's own report never reaches the server: it was
	// closed; rank 0 and 1 stay
	require.NoError(t, cs[1].Send(ctx, &Ping{ID: 6}))
	require.Equal(t, uint64(6), recvAs[*Pong](t, cs[1]).ID)
	require.Equal(t, uint64(1), srv.Stats().Declared)
	require.Equal(t, 2+1, srv.Stats().Ranks) // job's 2, early's 1
}

// A report before join is a protocol error.
func TestSuspectBeforeJoin(t *testing.T) {
	_, url := startServer(t, nil)
	ws := rawDial(t, url)
	rawSend(t, ws, &Suspect{Rank: 1})
	rawExpectError(t, ws, CodeProtocol)
}

// Every rank a peer reports is declared, each once, and every survivor
// hears of each (the later ones batched).
func TestSuspectSeveral(t *testing.T) {
	srv, url := startServer(t, nil)
	cs := joinSeats(t, url, "job", 5)
	ctx := context.Background()
	for _, r := range []int{2, 3, 4} {
		require.NoError(t, cs[0].Send(ctx, &Suspect{Rank: r, Reason: fmt.Sprintf("lost %d", r)}))
	}
	for _, c := range cs[:2] {
		seen := map[int]bool{}
		for len(seen) < 3 {
			for _, r := range recvAs[*Left](t, c).Ranks() {
				seen[r] = true
			}
		}
		require.Equal(t, map[int]bool{2: true, 3: true, 4: true}, seen)
	}
	for _, c := range cs[2:] {
		expectClosedWith(t, c, CodeDeclaredFailed)
	}
	require.Equal(t, uint64(3), srv.Stats().Declared)
}

// A rank that says it is leaving (Leaving, as a finalizing rank does
// before it closes its links) is not declared failed by the reports of
// peers that see its links close, however long it takes to leave; one
// that did not say so is.
func TestLeavingNotDeclared(t *testing.T) {
	srv, url := startServer(t, nil)
	cs := joinSeats(t, url, "job", 3)
	ctx := context.Background()
	require.NoError(t, cs[2].Send(ctx, &Leaving{}))
	require.NoError(t, cs[2].Send(ctx, &Ping{ID: 1})) // the server has taken it when the pong comes
	require.Equal(t, uint64(1), recvAs[*Pong](t, cs[2]).ID)
	require.NoError(t, cs[0].Send(ctx, &Suspect{Rank: 2, Reason: "the remote ended the link at once"}))
	require.NoError(t, cs[0].Send(ctx, &Suspect{Rank: 1, Reason: "path broken"}))
	// rank 1 is declared (after the grace); rank 2, which said it is
	// leaving, is not, though it is still connected
	require.Equal(t, 1, recvAs[*Left](t, cs[0]).Rank)
	expectClosedWith(t, cs[1], CodeDeclaredFailed)
	require.Equal(t, uint64(1), srv.Stats().Declared)
	require.NoError(t, cs[2].Close())
	l := recvAs[*Left](t, cs[0])
	require.Equal(t, []int{2}, l.Ranks())
	require.Equal(t, uint64(1), srv.Stats().Declared)

	// leaving before join is a protocol error
	ws := rawDial(t, url)
	rawSend(t, ws, &Leaving{})
	rawExpectError(t, ws, CodeProtocol)
}

// A report whose reason fills the limit with multi-byte runes still makes
// messages the ranks can decode: the server's longer texts are cut at a
// rune boundary.
func TestSuspectLongReason(t *testing.T) {
	_, url := startServer(t, nil)
	cs := joinSeats(t, url, "job", 2)
	reason := strings.Repeat("é", MaxTextLen/2) // 2 bytes each: exactly the limit
	require.NoError(t, cs[0].Send(context.Background(), &Suspect{Rank: 1, Reason: reason}))
	l := recvAs[*Left](t, cs[0])
	require.Equal(t, 1, l.Rank)
	require.True(t, utf8.ValidString(l.Reason))
	require.LessOrEqual(t, len(l.Reason), MaxTextLen)
	expectClosedWith(t, cs[1], CodeDeclaredFailed)
	require.True(t, utf8.ValidString(cs[1].Err().Error()))
}
