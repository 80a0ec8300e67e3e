//go:build !js

package signaling

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// mintClaims mints a token of c, expiring in an hour.
func mintClaims(t *testing.T, c Claims) string {
	t.Helper()
	c.Expires = time.Now().Add(time.Hour).Unix()
	tok, err := Mint(testSecret, c)
	require.NoError(t, err)
	return tok
}

// relayAlive proves that the server relays from one rank to another.
func relayAlive(t *testing.T, from, to *Client) {
	t.Helper()
	require.NoError(t, from.Signal(context.Background(), to.Rank(), SignalCandidate, json.RawMessage(`"alive"`)))
	s := recvAs[*Signal](t, to)
	require.Equal(t, from.Rank(), s.From)
	require.JSONEq(t, `"alive"`, string(s.Payload))
}

// growJob is a job of size 2 that may grow to 4, formed: world[r] is rank
// r, late tokens admit late ranks.
type growJob struct {
	url   string
	world []*Client
	late  string // the token late ranks join with
}

// growth is how a job that grows is started: by volunteers with one open
// token, or by a launcher with seat tokens and late ranks with a late
// token or an open one.
var growth = []struct {
	name  string
	start func(t *testing.T, url string) growJob
}{
	{"open", func(t *testing.T, url string) growJob {
		tok := mintClaims(t, Claims{Job: "job", Size: 2, Max: 4})
		return growJob{url, []*Client{dial(t, url, "job", tok, nil), dial(t, url, "job", tok, nil)}, tok}
	}},
	{"seated+late", func(t *testing.T, url string) growJob {
		toks, err := MintSeats(testSecret, Claims{Job: "job", Size: 2, Max: 4, Expires: time.Now().Add(time.Hour).Unix()})
		require.NoError(t, err)
		late := mintClaims(t, Claims{Job: "job", Size: 2, Max: 4, Late: true})
		return growJob{url, []*Client{dial(t, url, "job", toks[0], nil), dial(t, url, "job", toks[1], nil)}, late}
	}},
	{"seated+open", func(t *testing.T, url string) growJob {
		toks, err := MintSeats(testSecret, Claims{Job: "job", Size: 2, Max: 4, Expires: time.Now().Add(time.Hour).Unix()})
		require.NoError(t, err)
		open := mintClaims(t, Claims{Job: "job", Size: 2, Max: 4})
		return growJob{url, []*Client{dial(t, url, "job", toks[0], nil), dial(t, url, "job", toks[1], nil)}, open}
	}},
}

// formGrowJob starts the job and checks what its world is told: Max in
// the Welcome and the Ready.
func formGrowJob(t *testing.T, url string, start func(*testing.T, string) growJob) growJob {
	t.Helper()
	g := start(t, url)
	for r, c := range g.world {
		require.Equal(t, Welcome{Protocol: Version, Job: "job", Rank: r, Size: 2, Max: 4, Limits: c.Welcome().Limits}, c.Welcome())
		require.Equal(t, 4, c.Max())
		require.False(t, c.Late())
		rd := recvAs[*Ready](t, c)
		require.Equal(t, &Ready{Size: 2, Kinds: []ClientKind{KindNative, KindNative}, Max: 4}, rd)
	}
	return g
}

// joinLate joins a late rank and checks its Welcome and Ready, and that
// every rank present hears of it (joined).
func (g *growJob) joinLate(t *testing.T, present []*Client, rank int, kind ClientKind, print string) *Client {
	t.Helper()
	c := dial(t, g.url, "job", g.late, &DialOptions{Kind: kind, Fingerprint: print})
	w := c.Welcome()
	require.Equal(t, rank, w.Rank)
	require.Equal(t, 2, w.Size)
	require.Equal(t, 4, w.Max)
	require.True(t, w.Late)
	require.True(t, c.Late())
	require.Equal(t, 4, c.Max())
	rd := recvAs[*Ready](t, c)
	require.Equal(t, 2, rd.Size)
	require.Equal(t, 4, rd.Max)
	require.Len(t, rd.Kinds, rank+1)
	require.Equal(t, kind, rd.Kinds[rank])
	for _, o := range present {
		require.Equal(t, &Joined{Rank: rank, Kind: kind, Fingerprint: print}, recvAs[*Joined](t, o))
	}
	return c
}

// A job whose token has a max forms with its size, then admits late ranks
// up to max, each told its rank, the max and that it is late, the others
// told it joined; past max it refuses ("job full: 4 of 4 ranks").
func TestGrowth(t *testing.T) {
	for _, tc := range growth {
		t.Run(tc.name, func(t *testing.T) {
			srv, url := startServer(t, nil)
			g := formGrowJob(t, url, tc.start)
			r2 := g.joinLate(t, g.world, 2, KindBrowser, "")
			r3 := g.joinLate(t, append(g.world, r2), 3, KindWASI, "sha-256 AB:CD")
			// the last one's Ready tells every rank's kind and the one fingerprint
			ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
			defer cancel()
			_, err := Dial(ctx, url, "job", g.late, nil)
			var re *RemoteError
			require.ErrorAs(t, err, &re)
			require.Equal(t, CodeJobFull, re.Code)
			require.Equal(t, "job full: 4 of 4 ranks", re.Message)
			st := srv.Stats()
			require.Equal(t, uint64(2), st.LateJoins)
			require.Equal(t, uint64(4), st.Joins)
			require.Equal(t, 4, st.Ranks)
			relayAlive(t, r3, r2)
			relayAlive(t, g.world[0], r3)
		})
	}
}

// The Ready of a late rank tells the kinds and fingerprints of every rank
// admitted before it, itself included.
func TestLateReadyTellsEveryRank(t *testing.T) {
	_, url := startServer(t, nil)
	tok := mintClaims(t, Claims{Job: "job", Size: 2, Max: 3})
	r0 := dial(t, url, "job", tok, &DialOptions{Kind: KindBrowser, Fingerprint: "sha-256 01"})
	r1 := dial(t, url, "job", tok, &DialOptions{Kind: KindWASI})
	for _, c := range []*Client{r0, r1} {
		require.Equal(t, &Ready{Size: 2, Kinds: []ClientKind{KindBrowser, KindWASI}, Fingerprints: []string{"sha-256 01", ""}, Max: 3}, recvAs[*Ready](t, c))
	}
	r2 := dial(t, url, "job", tok, &DialOptions{Fingerprint: "sha-256 02"})
	require.Equal(t, &Ready{Size: 2, Kinds: []ClientKind{KindBrowser, KindWASI, KindNative}, Fingerprints: []string{"sha-256 01", "", "sha-256 02"}, Max: 3}, recvAs[*Ready](t, r2))
	for _, c := range []*Client{r0, r1} {
		require.Equal(t, &Joined{Rank: 2, Kind: KindNative, Fingerprint: "sha-256 02"}, recvAs[*Joined](t, c))
	}
}

// Host identities reach every rank as fingerprints do: the world's in
// Ready at their ranks, a late rank's in Joined and its own Ready.
func TestReadyPassesHosts(t *testing.T) {
	_, url := startServer(t, nil)
	tok := mintClaims(t, Claims{Job: "job", Size: 3, Max: 4})
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	// rank 0 takes the default, rank 1 announces none, rank 2 a launcher's token
	r0, err := Dial(ctx, url, "job", tok, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = r0.Close() })
	r1 := dial(t, url, "job", tok, &DialOptions{Host: "-"})
	r2 := dial(t, url, "job", tok, &DialOptions{Host: "launcher.7"})
	want := []string{LocalHost(), "", "launcher.7"}
	for _, c := range []*Client{r0, r1, r2} {
		require.Equal(t, want, recvAs[*Ready](t, c).Hosts)
	}
	r3 := dial(t, url, "job", tok, &DialOptions{Host: "h1:ab"})
	require.Equal(t, append(want, "h1:ab"), recvAs[*Ready](t, r3).Hosts)
	for _, c := range []*Client{r0, r1, r2} {
		require.Equal(t, &Joined{Rank: 3, Kind: KindNative, Host: "h1:ab"}, recvAs[*Joined](t, c))
	}
	// a host identity the protocol refuses is the dialer's error, not the server's
	_, err = Dial(ctx, url, "job", tok, &DialOptions{Host: "a host"})
	require.ErrorIs(t, err, ErrInvalid)
}

// Signals go between late and early ranks both ways, stamped with the
// sender's rank as between the world's ranks; a signal to a rank the job
// may admit but has not is rank-absent (not fatal), one past max is
// bad-rank.
func TestLateRelay(t *testing.T) {
	for _, tc := range growth {
		t.Run(tc.name, func(t *testing.T) {
			_, url := startServer(t, nil)
			g := formGrowJob(t, url, tc.start)
			r2 := g.joinLate(t, g.world, 2, KindNative, "")
			ctx := context.Background()
			for _, p := range []struct {
				from, to *Client
				kind     SignalKind
			}{
				{r2, g.world[0], SignalConnect},
				{g.world[0], r2, SignalOffer},
				{r2, g.world[0], SignalAnswer},
				{g.world[1], r2, SignalCandidate},
				{r2, g.world[1], SignalCandidate},
			} {
				payload := json.RawMessage(`{"sdp":"v=0"}`)
				require.NoError(t, p.from.Send(ctx, &Signal{To: p.to.Rank(), From: 1 - p.to.Rank()%2, Kind: p.kind, Payload: payload}))
				s := recvAs[*Signal](t, p.to)
				require.Equal(t, &Signal{To: p.to.Rank(), From: p.from.Rank(), Kind: p.kind, Payload: payload}, s)
			}
			require.NoError(t, r2.Signal(ctx, 3, SignalConnect, EncodeString("x")))
			e := recvAs[*Error](t, r2)
			require.Equal(t, CodeRankAbsent, e.Code)
			require.Equal(t, "rank 3 has not joined", e.Message)
			relayAlive(t, g.world[1], r2)
			require.NoError(t, g.world[0].Signal(ctx, 4, SignalConnect, EncodeString("x")))
			expectClosedWith(t, g.world[0], CodeBadRank)
		})
	}
}

// Every rank hears of every departure, late ranks' included, and a late
// rank hears of the ranks gone before it came (one Left after its
// Ready); a late rank's departure ends nothing: the job goes on, admits
// the next late rank (never reusing the number), and ends when its last
// rank, late or not, has left.
func TestLateDepartures(t *testing.T) {
	for _, tc := range growth {
		t.Run(tc.name, func(t *testing.T) {
			var deps departures
			srv, url := startServer(t, func(c *Config) { c.Departed = deps.add })
			g := formGrowJob(t, url, tc.start)
			r0, r1 := g.world[0], g.world[1]
			r2 := g.joinLate(t, g.world, 2, KindNative, "")

			require.NoError(t, r2.Close())
			for _, c := range []*Client{r0, r1} {
				l := recvAs[*Left](t, c)
				require.Equal(t, []int{2}, l.Ranks())
			}
			require.NoError(t, r0.Close())
			l := recvAs[*Left](t, r1) // batched
			require.Equal(t, []int{0}, l.Ranks())

			// the next late rank is 3, not 2 again, and hears 0 and 2 left
			r3 := dial(t, url, "job", g.late, nil)
			require.Equal(t, 3, r3.Rank())
			require.Len(t, recvAs[*Ready](t, r3).Kinds, 4)
			gone := recvAs[*Left](t, r3)
			require.Equal(t, []int{0, 2}, gone.Ranks())
			require.Equal(t, "left the job before this rank joined", gone.Reason)
			require.Equal(t, &Joined{Rank: 3, Kind: KindNative}, recvAs[*Joined](t, r1))
			relayAlive(t, r1, r3)
			relayAlive(t, r3, r1)

			// the world's last rank leaves: the late one keeps the job
			require.NoError(t, r1.Close())
			require.Equal(t, []int{1}, recvAs[*Left](t, r3).Ranks())
			require.Equal(t, 1, srv.Stats().Jobs)
			require.NoError(t, r3.Close())
			require.Eventually(t, func() bool { return srv.Stats().Jobs == 0 }, hangGuard, 10*time.Millisecond)
			ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
			defer cancel()
			_, err := Dial(ctx, url, "job", g.late, nil)
			requireGone(t, err, CodeJobEnded)

			d := deps.list()
			require.Len(t, d, 4)
			for _, x := range d {
				require.Equal(t, x.Rank >= 2, x.Late, "rank %d", x.Rank)
			}
		})
	}
}

// A late rank declared failed is evicted, every other rank hears it left,
// and it cannot come back asking for its rank; it would only come back as
// a new late rank.
func TestLateDeclaredFailed(t *testing.T) {
	for _, tc := range growth {
		t.Run(tc.name, func(t *testing.T) {
			_, url := startServer(t, nil)
			g := formGrowJob(t, url, tc.start)
			r2 := g.joinLate(t, g.world, 2, KindNative, "")
			r3 := g.joinLate(t, append(g.world, r2), 3, KindNative, "")
			require.NoError(t, g.world[0].Send(context.Background(), &Suspect{Rank: 2, Reason: "ICE failed"}))
			for _, c := range []*Client{g.world[0], g.world[1], r3} {
				l := recvAs[*Left](t, c)
				require.Equal(t, 2, l.Rank)
				require.Contains(t, l.Reason, "declared failed: rank 0 lost its link to it")
			}
			expectClosedWith(t, r2, CodeDeclaredFailed)
			ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
			defer cancel()
			_, err := Dial(ctx, url, "job", g.late, &DialOptions{Rank: intp(2)})
			require.ErrorIs(t, err, ErrDeclaredFailed)
			require.ErrorContains(t, err, "rank 2 was declared failed and cannot rejoin the job")
			// a late rank may report a rank of the world, too
			require.NoError(t, r3.Send(context.Background(), &Suspect{Rank: 1}))
			for _, c := range []*Client{g.world[0], r3} {
				require.Equal(t, 1, recvAs[*Left](t, c).Rank)
			}
			expectClosedWith(t, g.world[1], CodeDeclaredFailed)
		})
	}
}

// Joins a job that may grow refuses, and why.
func TestGrowthRefusals(t *testing.T) {
	type step struct {
		tok  Claims
		rank *int
		code ErrorCode // "" for a join that succeeds
	}
	open := Claims{Job: "job", Size: 2, Max: 3}
	late := Claims{Job: "job", Size: 2, Max: 3, Late: true}
	seat := func(r int) Claims { return Claims{Job: "job", Size: 2, Max: 3, Seat: &r} }
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"late token before anyone", []step{{late, nil, CodeNotFormed}, {open, nil, ""}}},
		{"late token while forming", []step{{open, nil, ""}, {late, nil, CodeNotFormed}, {open, nil, ""}, {late, nil, ""}}},
		{"open token to a forming seated job", []step{{seat(0), nil, ""}, {open, nil, CodeNotFormed}, {seat(1), nil, ""}, {open, nil, ""}}},
		{"late rank asked for before forming", []step{{open, intp(2), CodeBadRank}}},
		{"rank past max", []step{{open, intp(3), CodeBadRank}}},
		{"late ranks up to max", []step{{open, nil, ""}, {open, nil, ""}, {open, nil, ""}, {open, nil, CodeJobFull}}},
		{"a formed rank asked for", []step{{open, nil, ""}, {open, nil, ""}, {open, intp(1), CodeRankTaken}}},
		{"a late rank asked for", []step{{open, nil, ""}, {open, nil, ""}, {open, intp(2), CodeJobFull}}},
		{"another max", []step{{open, nil, ""}, {Claims{Job: "job", Size: 2, Max: 4}, nil, CodeJobMismatch}}},
		{"no max", []step{{open, nil, ""}, {Claims{Job: "job", Size: 2}, nil, CodeJobMismatch}}},
		{"seat token to an open job", []step{{open, nil, ""}, {open, nil, ""}, {seat(0), nil, CodeJobMismatch}}},
		{"max above the server's", []step{{Claims{Job: "job", Size: 2, Max: 9}, nil, CodeJobMismatch}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, url := startServer(t, func(c *Config) { c.MaxJobSize = 8 })
			for i, s := range tc.steps {
				ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
				c, err := Dial(ctx, url, "job", mintClaims(t, s.tok), &DialOptions{Rank: s.rank})
				cancel()
				if s.code == "" {
					require.NoError(t, err, "step %d", i)
					t.Cleanup(func() { _ = c.Close() })
					continue
				}
				var re *RemoteError
				require.ErrorAs(t, err, &re, "step %d", i)
				require.Equal(t, s.code, re.Code, "step %d: %s", i, re.Message)
				if s.code == CodeNotFormed {
					require.ErrorIs(t, err, ErrNotFormed)
				}
			}
		})
	}
}

// A rank's Abort ends the job for late ranks too: none joins after it.
func TestLateJoinAfterAbort(t *testing.T) {
	_, url := startServer(t, nil)
	tok := mintClaims(t, Claims{Job: "job", Size: 2, Max: 3})
	cs := []*Client{dial(t, url, "job", tok, nil), dial(t, url, "job", tok, nil)}
	for _, c := range cs {
		recvAs[*Ready](t, c)
	}
	require.NoError(t, cs[0].Send(context.Background(), &Abort{Code: 3}))
	require.True(t, recvAs[*Left](t, cs[1]).Aborted)
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	_, err := Dial(ctx, url, "job", tok, nil)
	requireGone(t, err, CodeJobEnded)
}

// A job without a max behaves as before: no max in its messages, and no
// join once formed.
func TestNoGrowthWithoutMax(t *testing.T) {
	for _, maxRanks := range []int{0, 2} {
		_, url := startServer(t, nil)
		tok := mintClaims(t, Claims{Job: "job", Size: 2, Max: maxRanks})
		cs := []*Client{dial(t, url, "job", tok, nil), dial(t, url, "job", tok, nil)}
		for _, c := range cs {
			require.Zero(t, c.Welcome().Max)
			require.Equal(t, 2, c.Max())
			require.Equal(t, &Ready{Size: 2, Kinds: []ClientKind{KindNative, KindNative}}, recvAs[*Ready](t, c))
		}
		ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
		_, err := Dial(ctx, url, "job", tok, nil)
		cancel()
		var re *RemoteError
		require.ErrorAs(t, err, &re)
		require.Equal(t, CodeJobFull, re.Code)
		require.Equal(t, "job already started", re.Message)
	}
}
