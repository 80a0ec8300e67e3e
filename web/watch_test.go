//go:build !js

package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/signaling"
)

// watchMsg is a message of the watch websocket.
type watchMsg struct {
	Type   string            `json:"type"`
	View   signaling.JobView `json:"view"`
	Info   JobInfo           `json:"info"`
	Events []signaling.Event `json:"events"`
}

// watcher is a dashboard's websocket.
type watcher struct {
	t *testing.T
	c *websocket.Conn
}

func (e *uiEnv) watch(ctx context.Context, id, key string) *watcher {
	u := "ws" + strings.TrimPrefix(e.url, "http") + "/api/jobs/" + id + "/watch?key=" + url.QueryEscape(key)
	c, _, err := websocket.Dial(ctx, u, nil)
	require.NoError(e.t, err)
	c.SetReadLimit(16 << 20)
	e.t.Cleanup(func() { c.CloseNow() })
	return &watcher{t: e.t, c: c}
}

func (w *watcher) next(ctx context.Context) watchMsg {
	_, b, err := w.c.Read(ctx)
	require.NoError(w.t, err)
	var m watchMsg
	require.NoError(w.t, json.Unmarshal(b, &m), string(b))
	return m
}

func viewKey(t *testing.T, in JobInfo) string {
	u, err := url.Parse(in.Dashboard)
	require.NoError(t, err)
	return u.Query().Get("key")
}

// join dials the signaling server with a seat of the invite.
func (e *uiEnv) joinRank(ctx context.Context, invite string) *signaling.Client {
	st, a, ae := e.joinInvite(invite)
	require.Equal(e.t, http.StatusOK, st, ae.Message)
	c, err := signaling.Dial(ctx, e.wsURL(), a.Job, a.Token, &signaling.DialOptions{Agent: "web test"})
	require.NoError(e.t, err)
	e.t.Cleanup(func() { _ = c.Close() })
	return c
}

// telemetry sends one batch as rank c: n allreduces on world, a send to
// the next rank, a console line and a link.
func telemetry(t *testing.T, ctx context.Context, c *signaling.Client, n int) {
	now := time.Now().UnixMicro()
	peer := (c.Rank() + 1) % c.Size()
	m := &signaling.Telemetry{Now: now,
		Links:   []signaling.LinkStat{{Peer: peer, Local: "host", Remote: "srflx", RTTMicros: 250, Sent: 100, Received: 80}},
		Console: []signaling.ConsoleLine{{Stream: "out", Text: "hello from rank " + string(rune('0'+c.Rank()))}},
	}
	for i := range n {
		start := now - int64(1000*(n-i))
		m.Ops = append(m.Ops, signaling.OpEvent{Op: "allreduce", Comm: "world", Bytes: 8, Start: start, End: start + 400})
	}
	m.Ops = append(m.Ops, signaling.OpEvent{Op: "send", Comm: "world", Peer: &peer, Bytes: 64, Start: now - 300, End: now - 100})
	require.NoError(t, c.Send(ctx, m))
}

// A dashboard's websocket gets the job's view, then the events of real
// ranks (their joins, operations, console lines and links) as they come.
func TestWatchEvents(t *testing.T) {
	e := startJobs(t, nil)
	o := e.browser()
	o.login("organizer-pw")
	in := o.mustCreate(map[string]string{"example": "hello", "size": "2"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w := e.watch(ctx, in.ID, viewKey(t, in))
	first := w.next(ctx)
	require.Equal(t, "view", first.Type)
	require.Equal(t, in.ID, first.View.Job)
	require.Equal(t, "forming", first.View.State)
	require.Equal(t, in.ID, first.Info.ID)
	require.Empty(t, first.Info.Invite, "a viewer with the key gets no invite")

	c0 := e.joinRank(ctx, in.Invite)
	c1 := e.joinRank(ctx, in.Invite)
	telemetry(t, ctx, c0, 3)
	telemetry(t, ctx, c1, 3)

	ops := map[int]int{}
	console := map[int]bool{}
	links := map[int]bool{}
	ranks := map[int]string{}
	formed := false
	var lastSeq uint64
	for len(ops) < 2 || ops[0] < 4 || ops[1] < 4 || len(console) < 2 || len(links) < 2 || !formed {
		m := w.next(ctx)
		if m.Type == "view" { // a gap: the view covers what came before
			lastSeq = m.View.Seq
			continue
		}
		require.Equal(t, "events", m.Type)
		require.NotEmpty(t, m.Events)
		for _, ev := range m.Events {
			require.Greater(t, ev.Seq, lastSeq, "events in order, none twice")
			lastSeq = ev.Seq
			switch ev.Kind {
			case signaling.EventOp:
				ops[ev.Rank]++
			case signaling.EventConsole:
				console[ev.Rank] = true
				require.Contains(t, ev.Console.Text, "hello from rank")
			case signaling.EventLink:
				links[ev.Rank] = true
				require.Equal(t, "srflx", ev.Link.Remote)
			case signaling.EventRank:
				ranks[ev.Rank] = ev.RankView.State
				require.Equal(t, "web test", ev.RankView.Agent)
			case signaling.EventJob:
				formed = formed || ev.State == signaling.JobFormed
			}
		}
	}
	require.Len(t, ranks, 2)

	// a dashboard opened later gets the view, then the ring's events from
	// its start: the operations for its timeline
	w2 := e.watch(ctx, in.ID, viewKey(t, in))
	v := w2.next(ctx)
	require.Equal(t, "view", v.Type)
	require.Equal(t, signaling.JobFormed, v.View.State)
	require.Len(t, v.View.Links, 2)
	for n := 0; n < 8; {
		m := w2.next(ctx)
		require.Equal(t, "events", m.Type)
		for _, ev := range m.Events {
			if ev.Kind == signaling.EventOp {
				n++
			}
		}
	}

	// the organizer ends the job: the viewers see it
	resp, _ := o.do("POST", "/api/jobs/"+in.ID+"/end", nil, "", nil)
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	for ended := false; !ended; {
		m := w.next(ctx)
		for _, ev := range m.Events {
			ended = ended || ev.Kind == signaling.EventJob && ev.State == signaling.JobEnded
		}
		ended = ended || m.Type == "view" && m.View.State == signaling.JobEnded
	}
	<-c0.Messages() // the ranks are told, then closed (drained until closed)
	for range c0.Messages() {
	}
	require.ErrorIs(t, c0.Err(), signaling.ErrJobGone)
}

// A viewer whose cursor the ring overwrote gets the view again, and goes
// on from it.
func TestWatchGap(t *testing.T) {
	e := startJobsWith(t, nil, func(c *signaling.Config) { c.TelemetryEvents = 16 })
	o := e.browser()
	o.login("organizer-pw")
	in := o.mustCreate(map[string]string{"example": "hello", "size": "1"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := e.joinRank(ctx, in.Invite)
	w := e.watch(ctx, in.ID, viewKey(t, in))
	require.Equal(t, "view", w.next(ctx).Type)
	// the replay of the ring from its start: the rank's join, the job formed
	for formed := false; !formed; {
		m := w.next(ctx)
		require.Equal(t, "events", m.Type)
		for _, ev := range m.Events {
			formed = formed || ev.Kind == signaling.EventJob && ev.State == signaling.JobFormed
		}
	}
	telemetry(t, ctx, c, 50) // one batch of more events than the ring holds
	for {
		m := w.next(ctx)
		if m.Type == "view" {
			require.Equal(t, signaling.JobFormed, m.View.State)
			require.NotZero(t, m.View.Seq)
			break
		}
	}
	// and events follow the fresh view
	telemetry(t, ctx, c, 1)
	for {
		m := w.next(ctx)
		if m.Type == "events" && len(m.Events) > 0 && m.Events[len(m.Events)-1].Kind != signaling.EventGap {
			break
		}
	}
}

// The watch websocket refuses viewers without the key, and pages of
// other sites.
func TestWatchAuth(t *testing.T) {
	e := startJobs(t, nil)
	o := e.browser()
	o.login("organizer-pw")
	in := o.mustCreate(map[string]string{"example": "hello", "size": "1"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	base := "ws" + strings.TrimPrefix(e.url, "http") + "/api/jobs/" + in.ID + "/watch"
	_, resp, err := websocket.Dial(ctx, base, nil)
	require.Error(t, err)
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	_, resp, err = websocket.Dial(ctx, base+"?key=wrong", nil)
	require.Error(t, err)
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	_, resp, err = websocket.Dial(ctx, base+"?key="+url.QueryEscape(viewKey(t, in)),
		&websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"https://evil.example"}}})
	require.Error(t, err)
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
}

// A seated job whose rank leaves before it formed fails at the server;
// the registry starts it afresh under the same invite, and the dashboard
// follows.
func TestJobRestartsWhenFormingFails(t *testing.T) {
	e := startJobs(t, nil)
	o := e.browser()
	o.login("organizer-pw")
	in := o.mustCreate(map[string]string{"example": "hello", "size": "2"})
	require.Equal(t, in.ID, in.Signal)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w := e.watch(ctx, in.ID, viewKey(t, in))
	require.Equal(t, "view", w.next(ctx).Type)

	c0 := e.joinRank(ctx, in.Invite)
	for joined := false; !joined; {
		for _, ev := range w.next(ctx).Events {
			joined = joined || ev.Kind == signaling.EventRank && ev.Rank == 0
		}
	}
	require.NoError(t, c0.Close()) // a student closes the tab
	for failed := false; !failed; {
		for _, ev := range w.next(ctx).Events {
			failed = failed || ev.Kind == signaling.EventJob && ev.State == signaling.JobFailed
		}
	}

	// the next joiner restarts it: seat 0 of a fresh signaling job
	st, a, ae := e.joinInvite(in.Invite)
	require.Equal(t, http.StatusOK, st, ae.Message)
	require.Equal(t, in.ID+".1", a.Job)
	require.Equal(t, 0, a.Rank)
	var list jobsList
	o.getJSON("/api/jobs", &list)
	require.Equal(t, 1, list.Jobs[0].Restarts)
	require.Equal(t, "forming", list.Jobs[0].State)
	require.Contains(t, list.Jobs[0].Reason, "restarted")
	require.Equal(t, in.ID+".1", list.Jobs[0].Signal)

	// the dashboard gets the new job's view
	for {
		m := w.next(ctx)
		if m.Type == "view" && m.View.Job == in.ID+".1" {
			break
		}
	}
	// and the job forms with two fresh ranks
	c0, err := signaling.Dial(ctx, e.wsURL(), a.Job, a.Token, nil)
	require.NoError(t, err)
	defer c0.Close()
	c1 := e.joinRank(ctx, in.Invite)
	require.Equal(t, 1, c1.Rank())
	for formed := false; !formed; {
		for _, ev := range w.next(ctx).Events {
			formed = formed || ev.Kind == signaling.EventJob && ev.State == signaling.JobFormed
		}
	}
}
