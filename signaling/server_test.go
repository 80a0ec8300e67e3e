//go:build !js

package signaling

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"
)

func joinAll(t *testing.T, url, job string, size int) []*Client {
	t.Helper()
	tok := mint(t, job, size)
	cs := make([]*Client, size)
	for i := range cs {
		cs[i] = dial(t, url, job, tok, nil)
	}
	for _, c := range cs {
		r := recvAs[*Ready](t, c)
		require.Equal(t, size, r.Size)
	}
	return cs
}

func TestJoinReady(t *testing.T) {
	for _, size := range []int{2, 4} {
		t.Run(string(rune('0'+size)), func(t *testing.T) {
			ice := []ICEServer{{URLs: []string{"stun:127.0.0.1:3478"}}}
			_, url := startServer(t, func(c *Config) { c.ICEServers = ice })
			settings := map[string]string{"coll.allreduce": "ring"}
			tok, err := Mint(testSecret, Claims{Job: "job", Size: size, Expires: time.Now().Add(time.Hour).Unix(), Settings: settings})
			require.NoError(t, err)
			cs := make([]*Client, size)
			for i := range cs {
				cs[i] = dial(t, url, "job", tok, &DialOptions{Kind: []ClientKind{KindNative, KindBrowser, KindWASI}[i%3]})
				w := cs[i].Welcome()
				require.Equal(t, i, w.Rank, "join order")
				require.Equal(t, size, w.Size)
				require.Equal(t, ice, w.ICEServers)
				require.Equal(t, settings, w.Settings)
			}
			for _, c := range cs {
				r := recvAs[*Ready](t, c)
				require.Equal(t, size, r.Size)
				require.Equal(t, KindBrowser, r.Kinds[1])
			}
		})
	}
}

// Config.ICECredentials gives every rank ICE servers with credentials of
// its own, after the job-wide ones, expiring with the job's token.
func TestICECredentialsPerRank(t *testing.T) {
	shared := []ICEServer{{URLs: []string{"stun:192.0.2.1:3478"}}}
	type call struct {
		job     string
		rank    int
		expires time.Time
	}
	calls := make(chan call, 4)
	_, url := startServer(t, func(c *Config) {
		c.ICEServers = shared
		c.ICECredentials = func(job string, rank int, expires time.Time) []ICEServer {
			calls <- call{job, rank, expires}
			return []ICEServer{{URLs: []string{"turn:192.0.2.1:3478?transport=udp"}, Username: fmt.Sprintf("%s:%d", job, rank), Credential: "c"}}
		}
	})
	exp := time.Now().Add(time.Hour).Truncate(time.Second)
	tok, err := Mint(testSecret, Claims{Job: "job", Size: 2, Expires: exp.Unix()})
	require.NoError(t, err)
	for rank := range 2 {
		w := dial(t, url, "job", tok, nil).Welcome()
		require.Len(t, w.ICEServers, 2)
		require.Equal(t, shared[0], w.ICEServers[0])
		require.Equal(t, fmt.Sprintf("job:%d", rank), w.ICEServers[1].Username)
		c := <-calls
		require.Equal(t, "job", c.job)
		require.Equal(t, rank, c.rank)
		require.True(t, exp.Equal(c.expires), "expires %v, want the token's %v", c.expires, exp)
	}
	require.Len(t, shared, 1, "the job-wide list is not appended to")
}

// The server vouches for each rank's certificate: the fingerprint a rank
// announced with its seat token reaches every rank in Ready, at its rank.
func TestReadyVouchesFingerprints(t *testing.T) {
	_, url := startServer(t, nil)
	toks, err := MintSeats(testSecret, Claims{Job: "job", Size: 3, Expires: time.Now().Add(time.Hour).Unix()})
	require.NoError(t, err)
	prints := []string{"sha-256 AA:01", "", "sha-256 CC:03"} // rank 1 announces none
	cs := make([]*Client, 3)
	for _, r := range []int{2, 0, 1} { // join order does not matter
		cs[r] = dial(t, url, "job", toks[r], &DialOptions{Rank: intp(r), Fingerprint: prints[r]})
	}
	for _, c := range cs {
		require.Equal(t, prints, recvAs[*Ready](t, c).Fingerprints)
	}

	// a job where nobody announces one carries none
	_, url = startServer(t, nil)
	tok := mint(t, "plain", 1)
	c := dial(t, url, "plain", tok, nil)
	require.Nil(t, recvAs[*Ready](t, c).Fingerprints)
}

// Ranks report their links' paths; the server counts them as direct or
// relayed. A report before joining is a protocol error, one about a rank
// outside the job a non-fatal bad-rank.
func TestPathReports(t *testing.T) {
	srv, url := startServer(t, nil)
	tok := mint(t, "paths", 3)
	c := dial(t, url, "paths", tok, nil)
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	require.NoError(t, c.Send(ctx, &Path{Peer: 1, Local: "host", Remote: "srflx", RTTMicros: 90}))
	require.NoError(t, c.Send(ctx, &Path{Peer: 2, Local: "relay", Remote: "prflx"}))
	require.NoError(t, c.Send(ctx, &Path{Peer: 7, Local: "host", Remote: "host"}))
	e := recvAs[*Error](t, c)
	require.Equal(t, CodeBadRank, e.Code)
	require.Equal(t, map[string]uint64{"direct": 1, "relay": 1}, srv.Stats().Paths)

	ws := rawDial(t, url)
	rawSend(t, ws, &Path{Peer: 0, Local: "host", Remote: "host"})
	rawExpectError(t, ws, CodeProtocol)
}

func TestRequestedRank(t *testing.T) {
	_, url := startServer(t, nil)
	tok := mint(t, "job", 3)
	c2 := dial(t, url, "job", tok, &DialOptions{Rank: intp(2)})
	require.Equal(t, 2, c2.Rank())
	c0 := dial(t, url, "job", tok, nil)
	require.Equal(t, 0, c0.Rank())

	var re *RemoteError
	_, err := Dial(context.Background(), url, "job", tok, &DialOptions{Rank: intp(2)})
	require.ErrorAs(t, err, &re)
	require.Equal(t, CodeRankTaken, re.Code)
	_, err = Dial(context.Background(), url, "job", tok, &DialOptions{Rank: intp(3)})
	require.ErrorAs(t, err, &re)
	require.Equal(t, CodeBadRank, re.Code)

	c1 := dial(t, url, "job", tok, nil)
	require.Equal(t, 1, c1.Rank())
	for _, c := range []*Client{c0, c1, c2} {
		recvAs[*Ready](t, c)
	}
	_, err = Dial(context.Background(), url, "job", tok, nil)
	require.ErrorAs(t, err, &re)
	require.Equal(t, CodeJobFull, re.Code)
}

func TestTokenRejectedAtJoin(t *testing.T) {
	_, url := startServer(t, nil)
	other, err := MintToken([]byte("some-other-secret-123"), "job", 2, time.Now().Add(time.Hour))
	require.NoError(t, err)
	expired, err := MintToken(testSecret, "job", 2, time.Now().Add(-time.Second))
	require.NoError(t, err)

	_, err = Dial(context.Background(), url, "job", other, nil)
	require.ErrorIs(t, err, ErrBadToken, "wrong secret")
	_, err = Dial(context.Background(), url, "job", mint(t, "another-job", 2), nil)
	require.ErrorIs(t, err, ErrBadToken, "token for another job")
	_, err = Dial(context.Background(), url, "job", expired, nil)
	require.ErrorIs(t, err, ErrExpired)

	// A job's world is fixed by its first token.
	dial(t, url, "job", mint(t, "job", 2), nil)
	var re *RemoteError
	_, err = Dial(context.Background(), url, "job", mint(t, "job", 3), nil)
	require.ErrorAs(t, err, &re)
	require.Equal(t, CodeJobMismatch, re.Code)
}

func TestSignalRelayedWithinJob(t *testing.T) {
	srv, url := startServer(t, nil)
	a := joinAll(t, url, "a", 2)
	b := joinAll(t, url, "b", 2)
	ctx := context.Background()

	// Rank 0 of a claims to be rank 1: the server stamps the truth.
	payload := json.RawMessage(`{"type":"offer","sdp":"v=0"}`)
	require.NoError(t, a[0].Send(ctx, &Signal{To: 1, From: 1, Kind: SignalOffer, Payload: payload}))
	got := recvAs[*Signal](t, a[1])
	require.Equal(t, 0, got.From)
	require.Equal(t, 1, got.To)
	require.JSONEq(t, string(payload), string(got.Payload))

	require.NoError(t, a[1].Signal(ctx, 0, SignalAnswer, json.RawMessage(`"answer"`)))
	require.Equal(t, 1, recvAs[*Signal](t, a[0]).From)

	// Job b saw none of it: its first message after ready is its own signal.
	require.NoError(t, b[0].Signal(ctx, 1, SignalCandidate, json.RawMessage(`"cand-b"`)))
	gb := recvAs[*Signal](t, b[1])
	require.JSONEq(t, `"cand-b"`, string(gb.Payload))
	require.NoError(t, b[1].Send(ctx, &Ping{ID: 9}))
	require.Equal(t, uint64(9), recvAs[*Pong](t, b[1]).ID)
	require.Equal(t, uint64(3), srv.Stats().Relayed)
}

// checkAlive proves that a healthy job still relays.
func checkAlive(t *testing.T, cs []*Client) {
	t.Helper()
	require.NoError(t, cs[0].Signal(context.Background(), 1, SignalCandidate, json.RawMessage(`"alive"`)))
	require.JSONEq(t, `"alive"`, string(recvAs[*Signal](t, cs[1]).Payload))
}

func TestViolations(t *testing.T) {
	srv, url := startServer(t, func(c *Config) {
		c.MaxMessageBytes = 4096
		c.MessageRate = 1
		c.MessageBurst = 20
	})
	healthy := joinAll(t, url, "healthy", 2)
	ctx := context.Background()
	// Each violator joins a job of its own, so that a departure still in
	// flight cannot make the next one's job ready.
	n := 0
	violator := func(t *testing.T) (*Client, string, string) {
		n++
		job := "bad-" + strconv.Itoa(n)
		tok := mint(t, job, 2)
		return dial(t, url, job, tok, nil), job, tok
	}

	t.Run("malformed", func(t *testing.T) {
		ws := rawDial(t, url)
		require.NoError(t, ws.Write(ctx, websocket.MessageText, []byte(`{"v":1,"type":`)))
		rawExpectError(t, ws, CodeBadMessage)
	})
	t.Run("binary", func(t *testing.T) {
		ws := rawDial(t, url)
		require.NoError(t, ws.Write(ctx, websocket.MessageBinary, []byte(`{}`)))
		rawExpectError(t, ws, CodeBadMessage)
	})
	t.Run("unknown version", func(t *testing.T) {
		ws := rawDial(t, url)
		require.NoError(t, ws.Write(ctx, websocket.MessageText, []byte(`{"v":9,"type":"ping"}`)))
		rawExpectError(t, ws, CodeBadMessage)
	})
	t.Run("signal before join", func(t *testing.T) {
		ws := rawDial(t, url)
		rawSend(t, ws, &Signal{To: 1, Kind: SignalOffer, Payload: json.RawMessage(`"x"`)})
		rawExpectError(t, ws, CodeProtocol)
	})
	t.Run("oversized", func(t *testing.T) {
		c, _, _ := violator(t)
		big := json.RawMessage(`"` + strings.Repeat("x", 8000) + `"`)
		require.NoError(t, c.Signal(ctx, 1, SignalOffer, big))
		expectClosedWith(t, c, CodeTooLarge)
	})
	t.Run("flood", func(t *testing.T) {
		// a raw socket: the Client would pace itself
		ws := rawDial(t, url)
		rawSend(t, ws, &Join{Job: "flood", Token: mint(t, "flood", 2), Kind: KindNative})
		for i := 0; i < 500; i++ {
			data, err := Encode(&Ping{ID: uint64(i)})
			require.NoError(t, err)
			if ws.Write(ctx, websocket.MessageText, data) != nil {
				break // the server closed us already
			}
		}
		rawExpectError(t, ws, CodeRateLimited)
	})
	t.Run("client paces itself", func(t *testing.T) {
		// the Client knows the limit from its welcome: past the burst it
		// waits instead of flooding, and the server keeps it
		c, _, _ := violator(t)
		require.Equal(t, &Limits{MessageRate: 1, MessageBurst: 20, MessageBytes: 4096, HeartbeatMillis: int(DefaultPingInterval * 9 / 10 / time.Millisecond)}, c.Welcome().Limits)
		wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		sent := 0
		for ; sent < 40; sent++ {
			if err := c.Send(wctx, &Ping{ID: uint64(sent)}); err != nil {
				require.ErrorIs(t, err, context.DeadlineExceeded)
				break
			}
		}
		require.Less(t, sent, 20, "the client should stop inside the burst")
		require.NoError(t, c.Send(ctx, &Ping{ID: 99}), "a paced send still goes through")
		for m := range c.Messages() {
			if p, ok := m.(*Pong); ok && p.ID == 99 {
				break
			}
			require.IsType(t, &Pong{}, m)
		}
	})
	t.Run("rank outside job", func(t *testing.T) {
		c, _, _ := violator(t)
		require.NoError(t, c.Signal(ctx, 7, SignalOffer, json.RawMessage(`"x"`)))
		expectClosedWith(t, c, CodeBadRank)
	})
	t.Run("signal to self", func(t *testing.T) {
		c, _, _ := violator(t)
		require.NoError(t, c.Signal(ctx, c.Rank(), SignalOffer, json.RawMessage(`"x"`)))
		expectClosedWith(t, c, CodeBadRank)
	})
	t.Run("server-only message", func(t *testing.T) {
		c, _, _ := violator(t)
		require.NoError(t, c.Send(ctx, &Left{Rank: 1}))
		expectClosedWith(t, c, CodeProtocol)
	})
	t.Run("second join", func(t *testing.T) {
		c, job, tok := violator(t)
		require.NoError(t, c.Send(ctx, &Join{Job: job, Token: tok, Kind: KindNative}))
		expectClosedWith(t, c, CodeProtocol)
	})
	t.Run("absent rank is not fatal", func(t *testing.T) {
		c, _, _ := violator(t)
		require.NoError(t, c.Signal(ctx, 1-c.Rank(), SignalOffer, json.RawMessage(`"x"`)))
		require.Equal(t, CodeRankAbsent, recvAs[*Error](t, c).Code)
		require.NoError(t, c.Send(ctx, &Ping{ID: 1}))
		recvAs[*Pong](t, c)
	})
	checkAlive(t, healthy)
	st := srv.Stats()
	for _, code := range []ErrorCode{CodeBadMessage, CodeProtocol, CodeTooLarge, CodeRateLimited, CodeBadRank, CodeRankAbsent} {
		require.NotZero(t, st.Rejected[code], code)
	}
}

func TestDeparture(t *testing.T) {
	_, url := startServer(t, nil)
	cs := joinAll(t, url, "job", 3)
	require.NoError(t, cs[1].Close())
	for _, c := range []*Client{cs[0], cs[2]} {
		l := recvAs[*Left](t, c)
		require.Equal(t, 1, l.Rank)
	}
	// The job has started: nobody takes the freed rank.
	var re *RemoteError
	_, err := Dial(context.Background(), url, "job", mint(t, "job", 3), nil)
	require.ErrorAs(t, err, &re)
	require.Equal(t, CodeJobFull, re.Code)
}

func TestDeadSocketDetected(t *testing.T) {
	_, url := startServer(t, func(c *Config) {
		c.PingInterval = 20 * time.Millisecond
		c.PingTimeout = 20 * time.Millisecond
	})
	tok := mint(t, "job", 2)
	alive := dial(t, url, "job", tok, nil)
	// A raw socket that joins and then never reads, so never answers pings.
	ws := rawDial(t, url)
	rawSend(t, ws, &Join{Job: "job", Token: tok, Kind: KindNative})
	recvAs[*Ready](t, alive)
	l := recvAs[*Left](t, alive)
	require.Equal(t, 1, l.Rank)
}

func TestJoinTimeout(t *testing.T) {
	_, url := startServer(t, func(c *Config) { c.JoinTimeout = 20 * time.Millisecond })
	rawExpectError(t, rawDial(t, url), CodeJoinTimeout)
}

func TestServerLimits(t *testing.T) {
	t.Run("jobs", func(t *testing.T) {
		_, url := startServer(t, func(c *Config) { c.MaxJobs = 1 })
		dial(t, url, "a", mint(t, "a", 2), nil)
		var re *RemoteError
		_, err := Dial(context.Background(), url, "b", mint(t, "b", 2), nil)
		require.ErrorAs(t, err, &re)
		require.Equal(t, CodeTooManyJobs, re.Code)
	})
	t.Run("conns", func(t *testing.T) {
		_, url := startServer(t, func(c *Config) { c.MaxConns = 1 })
		dial(t, url, "a", mint(t, "a", 2), nil)
		var re *RemoteError
		_, err := Dial(context.Background(), url, "a", mint(t, "a", 2), nil)
		require.ErrorAs(t, err, &re)
		require.Equal(t, CodeTooManyConns, re.Code)
	})
	t.Run("job size", func(t *testing.T) {
		_, url := startServer(t, func(c *Config) { c.MaxJobSize = 4 })
		var re *RemoteError
		_, err := Dial(context.Background(), url, "a", mint(t, "a", 5), nil)
		require.ErrorAs(t, err, &re)
		require.Equal(t, CodeJobMismatch, re.Code)
	})
}

func TestOriginAllowList(t *testing.T) {
	_, url := startServer(t, func(c *Config) { c.OriginPatterns = []string{"good.example"} })
	for origin, ok := range map[string]bool{"https://good.example": true, "https://evil.example": false} {
		ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
		ws, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {origin}}})
		cancel()
		if ok {
			require.NoError(t, err, origin)
			_ = ws.CloseNow()
		} else {
			require.Error(t, err, origin)
			require.Equal(t, http.StatusForbidden, resp.StatusCode)
			_ = resp.Body.Close()
		}
	}
}

func TestShutdown(t *testing.T) {
	srv, url := startServer(t, nil)
	c := dial(t, url, "job", mint(t, "job", 2), nil)
	require.NoError(t, srv.Close())
	expectClosedWith(t, c, CodeShutdown)
	_, err := Dial(context.Background(), url, "job", mint(t, "job", 2), nil)
	require.ErrorIs(t, err, ErrRejected)
}

func TestAdminToken(t *testing.T) {
	srv, url := startServer(t, func(c *Config) { c.AdminKey = "admin-key" })
	hurl := "http" + strings.TrimSuffix(strings.TrimPrefix(url, "ws"), "/ws") + "/admin/token"
	post := func(key, body string) (*http.Response, []byte) {
		req, err := http.NewRequest(http.MethodPost, hurl, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp, data
	}
	resp, _ := post("wrong", `{"job":"j","size":2}`)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	resp, _ = post("admin-key", `{"job":"j","size":0}`)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	resp, _ = post("admin-key", `{"job":"j","size":2,"ttl":"10000h"}`)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	resp, _ = post("admin-key", `{"job":"j","size":2,"rank":1,"open":true}`)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	resp, _ = post("admin-key", `{"job":"j","size":2,"rank":2}`)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	resp, data := post("admin-key", `{"job":"j","size":2,"ttl":"5m","settings":{"k":"v"},"open":true}`)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(data))
	var tr tokenResponse
	require.NoError(t, json.Unmarshal(data, &tr))
	c := dial(t, url, "j", tr.Token, nil)
	require.Equal(t, map[string]string{"k": "v"}, c.Welcome().Settings)
	require.Equal(t, uint64(1), srv.Stats().Joins)

	// by default, a job's seat tokens; with rank, one seat's
	resp, data = post("admin-key", `{"job":"s","size":3}`)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(data))
	tr = tokenResponse{}
	require.NoError(t, json.Unmarshal(data, &tr))
	require.Len(t, tr.Tokens, 3)
	require.Equal(t, 2, dial(t, url, "s", tr.Tokens[2], nil).Rank())
	resp, data = post("admin-key", `{"job":"s","size":3,"rank":1}`)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(data))
	tr = tokenResponse{}
	require.NoError(t, json.Unmarshal(data, &tr))
	require.Equal(t, 1, dial(t, url, "s", tr.Token, nil).Rank())

	// max lets the job grow; late mints a late token
	for _, bad := range []string{`{"job":"g","size":2,"max":1,"open":true}`, `{"job":"g","size":2,"max":2000,"open":true}`,
		`{"job":"g","size":2,"late":true}`, `{"job":"g","size":2,"max":3,"late":true,"rank":0}`} {
		resp, data = post("admin-key", bad)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, bad+": "+string(data))
	}
	for _, body := range []string{`{"job":"g","size":2,"max":3,"late":true}`, `{"job":"g","size":2,"max":3,"open":true}`, `{"job":"g","size":2,"max":3}`} {
		resp, data = post("admin-key", body)
		require.Equal(t, http.StatusOK, resp.StatusCode, string(data))
		tr = tokenResponse{}
		require.NoError(t, json.Unmarshal(data, &tr))
		for _, tok := range append(tr.Tokens, tr.Token) {
			if tok == "" {
				continue
			}
			c, err := VerifyToken(testSecret, tok, "g", time.Now())
			require.NoError(t, err)
			require.Equal(t, 3, c.Max)
			require.Equal(t, strings.Contains(body, "late"), c.Late)
		}
	}
	http.DefaultClient.CloseIdleConnections()
}

func TestConfigValidation(t *testing.T) {
	for name, cfg := range map[string]Config{
		"no secret":    {},
		"short secret": {Secret: []byte("short")},
		"negative":     {Secret: testSecret, MaxJobs: -1},
		"huge message": {Secret: testSecret, MaxMessageBytes: MaxMessageBytes + 1},
		"huge job":     {Secret: testSecret, MaxJobSize: MaxJobSize + 1},
		"bad ice":      {Secret: testSecret, ICEServers: []ICEServer{{}}},
		"empty origin": {Secret: testSecret, OriginPatterns: []string{""}},
	} {
		_, err := NewServer(cfg)
		require.ErrorIs(t, err, ErrConfig, name)
	}
	srv, err := NewServer(Config{Secret: testSecret})
	require.NoError(t, err)
	require.Equal(t, 64<<10, srv.cfg.MaxMessageBytes)
	require.NoError(t, srv.Close())
}

// A rank whose job has not formed has formingPongs times PingTimeout to
// answer a ping, then it is dropped like a closed connection (which
// fails the forming job: its other ranks hear why); once the job has
// formed it has PingTimeout (TestFrozenRankDeclaredGone).
func TestUnformedDeadSocketDropped(t *testing.T) {
	s := &Server{cfg: Config{PingTimeout: 3 * time.Second}}
	for _, tc := range []struct {
		name string
		job  *job
		want time.Duration
	}{
		{"no job", nil, formingPongs * 3 * time.Second},
		{"forming", &job{}, formingPongs * 3 * time.Second},
		{"formed", &job{started: true}, 3 * time.Second},
	} {
		require.Equal(t, tc.want, (&conn{s: s, job: tc.job}).pongTimeout(), tc.name)
	}

	_, url := startServer(t, func(c *Config) {
		c.PingInterval = 20 * time.Millisecond
		c.PingTimeout = 20 * time.Millisecond
	})
	toks := seats(t, "job", 3)
	alive := dial(t, url, "job", toks[0], nil)
	ws := rawDial(t, url) // joins, then never reads: never answers a ping
	rawSend(t, ws, &Join{Job: "job", Token: toks[1], Kind: KindNative})
	for range alive.Messages() {
	}
	var re *RemoteError
	require.ErrorAs(t, alive.Err(), &re)
	require.Equal(t, CodeJobFailed, re.Code)
	require.Contains(t, re.Message, "rank 1 left before the job formed (no answer to pings)")
}
