//go:build !js

package signaling

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"
)

// follower follows a job's events as a dashboard does: Events from its
// cursor, waiting on the wake channel, re-reading View after a gap.
type follower struct {
	t    *testing.T
	srv  *Server
	job  string
	next uint64
	buf  []Event
	seen []Event // every event read, gaps included
}

func follow(t *testing.T, srv *Server, job string) *follower {
	return &follower{t: t, srv: srv, job: job, buf: make([]Event, 64)}
}

// until reads events until done says the ones seen so far suffice,
// failing at the hang guard.
func (f *follower) until(done func(seen []Event) bool) {
	f.t.Helper()
	guard := time.NewTimer(hangGuard)
	defer guard.Stop()
	for {
		evs, next, wake, ok := f.srv.Events(f.job, f.next, f.buf)
		if ok {
			for i, e := range evs {
				if e.Kind != EventGap {
					require.Greater(f.t, e.Seq, f.next, "event %d: not after the cursor", i)
				}
			}
			f.seen = append(f.seen, evs...)
			require.GreaterOrEqual(f.t, next, f.next)
			f.next = next
			if done(f.seen) {
				return
			}
			if len(evs) == len(f.buf) {
				continue // more may wait
			}
		}
		if wake == nil { // no record yet: poll the job's first event
			w := make(chan struct{})
			time.AfterFunc(10*time.Millisecond, func() { close(w) })
			wake = w
		}
		select {
		case <-wake:
		case <-guard.C:
			f.t.Fatalf("events of %s: still waiting at the hang guard; seen %d", f.job, len(f.seen))
		}
	}
}

func count(evs []Event, kind string) int {
	n := 0
	for _, e := range evs {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

func rankStates(evs []Event, rank int) []string {
	var states []string
	for _, e := range evs {
		if e.Kind == EventRank && e.Rank == rank {
			states = append(states, e.RankView.State)
		}
	}
	return states
}

func send(t *testing.T, c *Client, m Message) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	require.NoError(t, c.Send(ctx, m))
}

// Ranks' telemetry, sent by real clients, reaches the job's view and its
// events: operations shifted onto the server's clock, links with their
// paths, console lines in order, and the ranks' agents and states.
func TestTelemetryView(t *testing.T) {
	srv, url := startServer(t, nil)
	tok := mint(t, "tele", 3)
	agents := []string{"Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0", "", "meshmpi wasip1 (wazero)"}
	kinds := []ClientKind{KindBrowser, KindNative, KindWASI}
	cs := make([]*Client, 3)
	for i := range cs {
		cs[i] = dial(t, url, "tele", tok, &DialOptions{Kind: kinds[i], Agent: agents[i]})
	}
	for _, c := range cs {
		recvAs[*Ready](t, c)
	}
	f := follow(t, srv, "tele")
	f.until(func(seen []Event) bool { return count(seen, EventRank) == 6 })
	for r := range 3 {
		require.Equal(t, []string{RankJoined, RankReady}, rankStates(f.seen, r), "rank %d", r)
	}
	require.Equal(t, 1, count(f.seen, EventJob))

	// rank 1's clock is an hour behind the server's
	skew := time.Hour.Microseconds()
	before := time.Now().UnixMicro()
	for r, c := range cs {
		now := time.Now().UnixMicro()
		if r == 1 {
			now -= skew
		}
		peer := (r + 1) % 3
		send(t, c, &Telemetry{Now: now, Dropped: r,
			Ops: []OpEvent{
				{Op: "allreduce", Comm: "world", Bytes: 8, Start: now - 3000, End: now - 2000},
				{Op: "send", Comm: "world", Peer: &peer, Bytes: 1 << 20, Start: now - 1500, End: now - 1000},
			},
			Links: []LinkStat{{Peer: peer, Local: "host", Remote: "relay", RTTMicros: 300 + r, Sent: 1 << 20, Received: 8}},
			Console: []ConsoleLine{{Stream: StreamOut, Text: fmt.Sprintf("rank %d says hello", r)},
				{Stream: StreamErr, Text: fmt.Sprintf("rank %d <warns> & more", r)}},
		})
	}
	f.until(func(seen []Event) bool {
		return count(seen, EventOp) == 6 && count(seen, EventConsole) == 6 && count(seen, EventLink) == 3
	})
	after := time.Now().UnixMicro()
	for _, e := range f.seen {
		if e.Kind != EventOp {
			continue
		}
		// shifted onto the server's clock: between the sends and now,
		// less the 3 ms the ops end before their batch
		require.GreaterOrEqual(t, e.Op.Start, before-3000-1, "rank %d %s", e.Rank, e.Op.Op)
		require.LessOrEqual(t, e.Op.End, after, "rank %d %s", e.Rank, e.Op.Op)
		require.Equal(t, map[string]int64{"allreduce": 1000, "send": 500}[e.Op.Op], e.Op.End-e.Op.Start)
		if e.Op.Op == "send" {
			require.Equal(t, (e.Rank+1)%3, *e.Op.Peer)
		} else {
			require.Nil(t, e.Op.Peer)
		}
	}

	v, ok := srv.View("tele")
	require.True(t, ok)
	require.Equal(t, "tele", v.Job)
	require.Equal(t, JobFormed, v.State)
	require.Equal(t, 3, v.Size)
	require.Equal(t, 3, v.Max)
	require.Equal(t, 3, v.Present)
	require.Equal(t, int64(0+1+2), v.Dropped)
	require.GreaterOrEqual(t, v.Seq, f.next)
	require.Len(t, v.Ranks, 3)
	for r, rv := range v.Ranks {
		require.Equal(t, r, rv.Rank)
		require.Equal(t, kinds[r], rv.Kind)
		want := agents[r]
		if want == "" {
			want = defaultAgent()
		}
		require.Equal(t, want, rv.Agent)
		require.Equal(t, RankReady, rv.State)
		require.NotZero(t, rv.Joined)
		require.Zero(t, rv.Left)
		require.Equal(t, []ConsoleLine{{Stream: StreamOut, Text: fmt.Sprintf("rank %d says hello", r)},
			{Stream: StreamErr, Text: fmt.Sprintf("rank %d <warns> & more", r)}}, rv.Console)
	}
	require.Len(t, v.Links, 3)
	for i, l := range v.Links {
		require.Equal(t, i, l.From, "sorted")
		require.Equal(t, (i+1)%3, l.To)
		require.Equal(t, "host", l.Local)
		require.Equal(t, "relay", l.Remote)
		require.Equal(t, 300+i, l.RTTMicros)
		require.Equal(t, int64(1<<20), l.Sent)
		require.NotZero(t, l.Updated)
	}
	// web marshals the views as they are
	data, err := json.Marshal(v)
	require.NoError(t, err)
	require.Contains(t, string(data), `"agent":"meshmpi wasip1 (wazero)"`)
	data, err = json.Marshal(f.seen)
	require.NoError(t, err)
	require.Contains(t, string(data), `"kind":"op"`)

	jobs := srv.Jobs()
	require.Len(t, jobs, 1)
	require.Equal(t, "tele", jobs[0].Job)
	require.Nil(t, jobs[0].Ranks[0].Console, "summaries carry no console")
	require.Nil(t, jobs[0].Links)

	_, ok = srv.View("nobody")
	require.False(t, ok)
	_, _, _, ok = srv.Events("nobody", 0, nil)
	require.False(t, ok)
}

// Rank state changes are events whether or not ranks send telemetry:
// join, ready, a clean leave (finalized: Leaving, then a close), an
// abort (with its code), a crash (failed), a clean close without
// Leaving (failed: the program ended without Finalize), a volunteer
// leaving an open job before it formed (left), and the job's own states.
func TestRankStateEvents(t *testing.T) {
	srv, url := startServer(t, nil)
	left := make(chan struct{}, 8)
	srv.leaveHook = func() { left <- struct{}{} }
	toks := seats(t, "states", 4)
	cs := make([]*Client, 4)
	for r := range cs {
		cs[r] = dial(t, url, "states", toks[r], &DialOptions{Rank: intp(r)})
	}
	for _, c := range cs {
		recvAs[*Ready](t, c)
	}
	f := follow(t, srv, "states")
	send(t, cs[0], &Leaving{}) // Finalize
	require.NoError(t, cs[0].Close())
	<-left
	send(t, cs[1], &Abort{Code: 7, Where: "pi.go:12"})
	require.NoError(t, cs[1].Close())
	<-left
	require.NoError(t, cs[2].ws.closeNow()) // a crash
	<-left
	require.NoError(t, cs[3].Close()) // its program failed: the library left without Finalize
	<-left
	f.until(func(seen []Event) bool { return count(seen, EventJob) == 2 })
	require.Equal(t, []string{RankJoined, RankReady, RankFinalized}, rankStates(f.seen, 0))
	require.Equal(t, []string{RankJoined, RankReady, RankAborted}, rankStates(f.seen, 1))
	require.Equal(t, []string{RankJoined, RankReady, RankFailed}, rankStates(f.seen, 2))
	require.Equal(t, []string{RankJoined, RankReady, RankFailed}, rankStates(f.seen, 3))
	var jobStates []string
	for _, e := range f.seen {
		if e.Kind == EventJob {
			jobStates = append(jobStates, e.State)
		}
	}
	require.Equal(t, []string{JobFormed, JobOver}, jobStates)
	v, ok := srv.View("states")
	require.True(t, ok, "an ended job is viewed until it is forgotten")
	require.Equal(t, JobOver, v.State)
	require.Zero(t, v.Present)
	require.Equal(t, 7, v.Ranks[1].Code)
	require.Contains(t, v.Ranks[1].Reason, "called Abort(7) at pi.go:12")
	require.Contains(t, v.Ranks[2].Reason, "without Finalize")
	require.Contains(t, v.Ranks[3].Reason, "left without Finalize: its program ended or failed")
	for _, rv := range v.Ranks {
		require.NotZero(t, rv.Left)
	}

	// an open job: a volunteer leaving before it formed frees its seat
	open := mint(t, "open", 2)
	a := dial(t, url, "open", open, nil)
	b := dial(t, url, "open", open, nil)
	recvAs[*Ready](t, a)
	_ = b
	fo := follow(t, srv, "open")
	fo.until(func(seen []Event) bool { return count(seen, EventRank) == 4 })

	solo := mint(t, "solo", 3)
	x := dial(t, url, "solo", solo, nil)
	y := dial(t, url, "solo", solo, nil)
	fs := follow(t, srv, "solo")
	fs.until(func(seen []Event) bool { return count(seen, EventRank) == 2 })
	require.NoError(t, y.Close())
	<-left
	fs.until(func(seen []Event) bool { return len(rankStates(seen, 1)) == 2 })
	require.Equal(t, []string{RankJoined, RankLeft}, rankStates(fs.seen, 1))
	v, ok = srv.View("solo")
	require.True(t, ok)
	require.Equal(t, JobForming, v.State)
	require.Equal(t, 1, v.Present)
	require.Equal(t, RankLeft, v.Ranks[1].State)
	// and the next volunteer takes the seat afresh
	z := dial(t, url, "solo", solo, &DialOptions{Agent: "third"})
	require.Equal(t, 1, z.Rank())
	w := dial(t, url, "solo", solo, nil)
	recvAs[*Ready](t, z)
	fs.until(func(seen []Event) bool { return count(seen, EventJob) == 1 })
	v, _ = srv.View("solo")
	require.Equal(t, RankReady, v.Ranks[1].State)
	require.Equal(t, "third", v.Ranks[1].Agent)
	require.Zero(t, v.Ranks[1].Left)
	require.Equal(t, 3, v.Present)
	for _, c := range []*Client{x, z, w} {
		require.NoError(t, c.Close())
		<-left
	}
	// an open job that forms and empties is over; one that empties while
	// forming is forgotten (volunteers may form it afresh)
	_, ok = srv.View("solo")
	require.True(t, ok)
	lone := dial(t, url, "lone", mint(t, "lone", 2), nil)
	fl := follow(t, srv, "lone")
	fl.until(func(seen []Event) bool { return count(seen, EventRank) == 1 })
	require.NoError(t, lone.Close())
	<-left
	_, ok = srv.View("lone")
	require.False(t, ok)
}

// Telemetry that breaks the protocol's bounds, or comes before the join,
// ends the connection with an error, as any bad message does; the job's
// other ranks and its record stay.
func TestTelemetryViolations(t *testing.T) {
	op := `{"op":"send","start":1,"end":2}`
	cases := []struct {
		name string
		msg  string
		code ErrorCode
		join bool
	}{
		{"before join", `{"v":1,"type":"telemetry","data":{"now":1}}`, CodeProtocol, false},
		{"too many ops", `{"v":1,"type":"telemetry","data":{"now":1,"ops":[` + strings.Repeat(op+",", MaxTelemetryOps) + op + `]}}`, CodeBadMessage, true},
		{"too many links", `{"v":1,"type":"telemetry","data":{"now":1,"links":[` + strings.Repeat(`{"peer":0},`, MaxTelemetryLinks) + `{"peer":0}]}}`, CodeBadMessage, true},
		{"too many lines", `{"v":1,"type":"telemetry","data":{"now":1,"console":[` + strings.Repeat(`{"stream":"out","text":"x"},`, MaxTelemetryConsole) + `{"stream":"out","text":"x"}]}}`, CodeBadMessage, true},
		{"long line", `{"v":1,"type":"telemetry","data":{"now":1,"console":[{"stream":"out","text":"` + strings.Repeat("x", MaxConsoleLineLen+1) + `"}]}}`, CodeBadMessage, true},
		{"bad stream", `{"v":1,"type":"telemetry","data":{"now":1,"console":[{"stream":"in","text":"x"}]}}`, CodeBadMessage, true},
		{"negative bytes", `{"v":1,"type":"telemetry","data":{"now":1,"ops":[{"op":"send","bytes":-1,"start":1,"end":2}]}}`, CodeBadMessage, true},
		{"end before start", `{"v":1,"type":"telemetry","data":{"now":1,"ops":[{"op":"send","start":3,"end":2}]}}`, CodeBadMessage, true},
		{"no now", `{"v":1,"type":"telemetry","data":{"ops":[` + op + `]}}`, CodeBadMessage, true},
		{"unknown field", `{"v":1,"type":"telemetry","data":{"now":1,"rank":0}}`, CodeBadMessage, true},
		{"op unknown field", `{"v":1,"type":"telemetry","data":{"now":1,"ops":[{"op":"send","start":1,"end":2,"tag":1}]}}`, CodeBadMessage, true},
		{"link bad path", `{"v":1,"type":"telemetry","data":{"now":1,"links":[{"peer":0,"local":"carrier-pigeon"}]}}`, CodeBadMessage, true},
		{"not json", `{"v":1,"type":"telemetry","data":{"now":1,`, CodeBadMessage, true},
		{"invalid utf-8", "{\"v\":1,\"type\":\"telemetry\",\"data\":{\"now\":1,\"console\":[{\"stream\":\"out\",\"text\":\"\xff\"}]}}", CodeBadMessage, true},
		{"over the size limit", `{"v":1,"type":"telemetry","data":{"now":1,"console":[` + strings.Repeat(`{"stream":"out","text":"`+strings.Repeat("x", 1000)+`"},`, 70) + `{"stream":"out","text":"x"}]}}`, CodeTooLarge, true},
	}
	srv, url := startServer(t, nil)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := fmt.Sprintf("bad%d", i)
			tok := mint(t, job, 2)
			peer := dial(t, url, job, tok, nil)
			ws := rawDial(t, url)
			if tc.join {
				rawSend(t, ws, &Join{Job: job, Token: tok, Kind: KindNative})
			}
			ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
			defer cancel()
			require.NoError(t, ws.Write(ctx, websocket.MessageText, []byte(tc.msg)))
			rawExpectError(t, ws, tc.code)
			if !tc.join {
				return
			}
			// the peer hears the rank left (the job formed with it)
			recvAs[*Ready](t, peer)
			l := recvAs[*Left](t, peer)
			require.Equal(t, 1, l.Rank)
			f := follow(t, srv, job)
			f.until(func(seen []Event) bool { return len(rankStates(seen, 1)) == 3 })
			require.Equal(t, []string{RankJoined, RankReady, RankFailed}, rankStates(f.seen, 1))
			require.Zero(t, count(f.seen, EventOp)+count(f.seen, EventConsole)+count(f.seen, EventLink))
		})
	}
}

// The ring holds the last Config.TelemetryEvents events: a viewer whose
// cursor fell behind gets a gap first, then the oldest events the ring
// still holds, in order; its next cursor continues without a gap.
func TestTelemetryRingWraps(t *testing.T) {
	const ring = 16
	srv, url := startServer(t, func(c *Config) { c.TelemetryEvents = ring })
	tok := mint(t, "wrap", 1)
	c := dial(t, url, "wrap", tok, nil)
	recvAs[*Ready](t, c)
	f := follow(t, srv, "wrap")
	f.until(func(seen []Event) bool { return count(seen, EventJob) == 1 })
	cursor := f.next

	// three batches of 20 ops: the ring wraps past the cursor
	for b := range 3 {
		ops := make([]OpEvent, 20)
		now := time.Now().UnixMicro()
		for i := range ops {
			ops[i] = OpEvent{Op: "bcast", Comm: "world", Bytes: int64(b*20 + i), Start: now - 10, End: now}
		}
		send(t, c, &Telemetry{Now: now, Ops: ops})
	}
	f.until(func(seen []Event) bool {
		n := len(seen)
		return n > 0 && seen[n-1].Kind == EventOp && seen[n-1].Op.Bytes == 59
	})

	// a viewer still at the old cursor
	buf := make([]Event, 5)
	evs, next, wake, ok := srv.Events("wrap", cursor, buf)
	require.True(t, ok)
	require.NotNil(t, wake)
	require.Len(t, evs, 5)
	require.Equal(t, EventGap, evs[0].Kind)
	v, _ := srv.View("wrap")
	first := v.Seq - ring + 1
	require.Equal(t, first-1, evs[0].Seq, "the gap ends where the ring begins")
	for i, e := range evs[1:] {
		require.Equal(t, first+uint64(i), e.Seq)
		require.Equal(t, EventOp, e.Kind)
		require.Equal(t, int64(60-ring+i), e.Op.Bytes)
	}
	require.Equal(t, first+3, next)
	evs, next, _, _ = srv.Events("wrap", next, buf)
	require.Len(t, evs, 5)
	require.Equal(t, first+4, evs[0].Seq, "no gap: the cursor is in the ring")
	require.Equal(t, first+8, next)
	// at the head: nothing new, the same cursor
	evs, next, wake, _ = srv.Events("wrap", v.Seq, buf)
	require.Empty(t, evs)
	require.Equal(t, v.Seq, next)
	select {
	case <-wake:
		t.Fatal("woken without a new event")
	default:
	}
	// a cursor from the future (of a record the server forgot): a gap,
	// then the ring from its start
	evs, next, _, _ = srv.Events("wrap", v.Seq+100, buf)
	require.Equal(t, EventGap, evs[0].Kind)
	require.Equal(t, first, evs[1].Seq)
	require.Equal(t, first+3, next)
	// an empty buf gets a default number
	evs, _, _, _ = srv.Events("wrap", first-1, nil)
	require.Len(t, evs, ring)
}

// The byte bounds hold: a job's record stays within
// Config.TelemetryBytes (its oldest events go first), and all records
// within TelemetryTotalBytes; a job's record is forgotten with the job
// (MaxEndedJobs).
func TestTelemetryBytesBounded(t *testing.T) {
	const perJob, total = 64 << 10, 160 << 10
	const slack = 4 << 10 // the ranks' and links' records, counted but never refused
	srv, url := startServer(t, func(c *Config) {
		c.TelemetryBytes, c.TelemetryTotalBytes, c.ConsoleTail = perJob, total, 20
		c.MaxEndedJobs = 2
	})
	left := make(chan struct{}, 8)
	srv.leaveHook = func() { left <- struct{}{} }
	line := strings.Repeat("y", MaxConsoleLineLen)
	for j := range 5 {
		job := fmt.Sprintf("big%d", j)
		c := dial(t, url, job, mint(t, job, 1), nil)
		recvAs[*Ready](t, c)
		for range 6 {
			lines := make([]ConsoleLine, 40)
			for i := range lines {
				lines[i] = ConsoleLine{Stream: StreamOut, Text: line}
			}
			send(t, c, &Telemetry{Now: time.Now().UnixMicro(), Console: lines})
		}
		now := time.Now().UnixMicro()
		send(t, c, &Telemetry{Now: now, Ops: []OpEvent{{Op: "barrier", Start: now, End: now}}})
		f := follow(t, srv, job)
		f.until(func(seen []Event) bool { return count(seen, EventOp) == 1 })
		evs, _, _, _ := srv.Events(job, 0, nil)
		require.Equal(t, EventGap, evs[0].Kind, "the oldest events went")
		v, _ := srv.View(job)
		require.Len(t, v.Ranks[0].Console, 20)
		srv.mu.Lock()
		tt := srv.teles[job]
		srv.mu.Unlock()
		tt.mu.Lock()
		require.LessOrEqual(t, tt.bytes, int64(perJob))
		tt.mu.Unlock()
		require.LessOrEqual(t, srv.teleBytes.Load(), int64(total+slack))
		require.NoError(t, c.Close())
		<-left
	}
	st := srv.Stats()
	require.Equal(t, 2, st.Records)
	require.LessOrEqual(t, st.RecordBytes, int64(total+slack))
	_, ok := srv.View("big2")
	require.False(t, ok)
	_, ok = srv.View("big4")
	require.True(t, ok)
	require.LessOrEqual(t, srv.teleBytes.Load(), int64(total+slack))
}

// EndJob sends every member error{job-ended} with the reason and closes
// it; the job is remembered as ended, and its view says so.
func TestEndJob(t *testing.T) {
	srv, url := startServer(t, nil)
	cases := []struct {
		name   string
		size   int
		joined int // ranks present when the job is ended
	}{
		{"formed", 3, 3},
		{"forming", 3, 2},
		{"nobody joined", 2, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := strings.ReplaceAll(tc.name, " ", "-")
			tok := mint(t, job, tc.size)
			cs := make([]*Client, tc.joined)
			for i := range cs {
				cs[i] = dial(t, url, job, tok, nil)
			}
			if tc.joined == tc.size {
				for _, c := range cs {
					recvAs[*Ready](t, c)
				}
			}
			require.NoError(t, srv.EndJob(job, "the time limit passed"))
			for _, c := range cs {
				expectClosedWith(t, c, CodeJobEnded)
				var re *RemoteError
				require.ErrorAs(t, c.Err(), &re)
				require.Contains(t, re.Message, "the time limit passed")
				require.ErrorIs(t, c.Err(), ErrJobGone)
			}
			_, err := Dial(context.Background(), url, job, tok, nil)
			requireGone(t, err, CodeJobEnded)
			require.NoError(t, srv.EndJob(job, "again"), "ending an ended job is no error")
			v, ok := srv.View(job)
			if tc.joined == 0 {
				require.False(t, ok, "no record of a job nobody joined")
				return
			}
			require.True(t, ok)
			require.Equal(t, JobEnded, v.State)
			require.Contains(t, v.Reason, "the time limit passed")
			require.Zero(t, v.Present)
			for _, rv := range v.Ranks {
				require.Equal(t, RankLeft, rv.State)
				require.Contains(t, rv.Reason, "the time limit passed")
			}
		})
	}
	require.ErrorIs(t, srv.EndJob("bad/id", ""), ErrInvalid)
	require.Zero(t, srv.Stats().Jobs)
}

// A rank that sends telemetry after its job ended (it had not read the
// error yet) changes nothing: the server ignores it.
func TestTelemetryAfterEndJob(t *testing.T) {
	srv, url := startServer(t, nil)
	tok := mint(t, "late-report", 1)
	ws := rawDial(t, url)
	rawSend(t, ws, &Join{Job: "late-report", Token: tok, Kind: KindNative})
	f := follow(t, srv, "late-report")
	f.until(func(seen []Event) bool { return count(seen, EventJob) == 1 })
	require.NoError(t, srv.EndJob("late-report", "over"))
	now := time.Now().UnixMicro()
	rawSend(t, ws, &Telemetry{Now: now, Ops: []OpEvent{{Op: "barrier", Start: now, End: now}},
		Console: []ConsoleLine{{Stream: StreamOut, Text: "too late"}}})
	rawExpectError(t, ws, CodeJobEnded)
	v, ok := srv.View("late-report")
	require.True(t, ok)
	require.Equal(t, JobEnded, v.State)
	require.Empty(t, v.Ranks[0].Console)
	evs, _, _, _ := srv.Events("late-report", 0, nil)
	require.Zero(t, count(evs, EventOp)+count(evs, EventConsole))
}

// Viewers follow a job while its ranks report, all at once (run with
// -race): each sees every event once, in order, and is woken for new
// ones.
func TestTelemetryConcurrentViewers(t *testing.T) {
	const ranks, batches, ops, viewers = 3, 20, 10, 6
	srv, url := startServer(t, nil)
	tok := mint(t, "busy", ranks)
	cs := make([]*Client, ranks)
	for i := range cs {
		cs[i] = dial(t, url, "busy", tok, nil)
	}
	for _, c := range cs {
		recvAs[*Ready](t, c)
	}
	want := ranks * batches * ops
	var wg sync.WaitGroup
	errs := make(chan error, viewers)
	for range viewers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var next uint64
			seen := 0
			buf := make([]Event, 7)
			guard := time.After(hangGuard)
			for seen < want {
				evs, n, wake, ok := srv.Events("busy", next, buf)
				if !ok {
					errs <- fmt.Errorf("job unknown")
					return
				}
				for _, e := range evs {
					if e.Kind == EventGap {
						errs <- fmt.Errorf("gap at %d", e.Seq)
						return
					}
					if e.Seq != next+1 {
						errs <- fmt.Errorf("event %d after %d", e.Seq, next)
						return
					}
					next = e.Seq
					if e.Kind == EventOp {
						seen++
					}
				}
				if n != next {
					errs <- fmt.Errorf("next %d after event %d", n, next)
					return
				}
				if _, ok := srv.View("busy"); !ok {
					errs <- fmt.Errorf("no view")
					return
				}
				if len(evs) == len(buf) || seen == want {
					continue
				}
				select {
				case <-wake:
				case <-guard:
					errs <- fmt.Errorf("saw %d of %d ops at the hang guard", seen, want)
					return
				}
			}
		}()
	}
	for r, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range batches {
				now := time.Now().UnixMicro()
				batch := &Telemetry{Now: now, Ops: make([]OpEvent, ops),
					Console: []ConsoleLine{{Stream: StreamOut, Text: fmt.Sprintf("rank %d batch %d", r, b)}}}
				for i := range batch.Ops {
					batch.Ops[i] = OpEvent{Op: "allreduce", Comm: "world", Bytes: 8, Start: now - 5, End: now}
				}
				if err := c.Send(context.Background(), batch); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	v, _ := srv.View("busy")
	for _, rv := range v.Ranks {
		require.Len(t, rv.Console, batches)
	}
	_ = srv.Jobs()
}

// A job's view holds at most maxViewLinks links; reports of more, of a
// link to the reporter itself or to a rank outside the job, are ignored.
func TestTelemetryLinksBounded(t *testing.T) {
	n, d := maxViewLinks, linkEventInterval
	t.Cleanup(func() { maxViewLinks, linkEventInterval = n, d }) // after the server's close
	maxViewLinks, linkEventInterval = 2, time.Hour               // no repeated event in this test, however slow the machine
	srv, url := startServer(t, nil)
	c := dial(t, url, "links", mint(t, "links", 5), nil) // forming: telemetry is taken all the same
	now := time.Now().UnixMicro()
	send(t, c, &Telemetry{Now: now, Links: []LinkStat{{Peer: 0, Local: "host"}, {Peer: 7}, {Peer: 3, Local: "relay"},
		{Peer: 1, Local: "srflx"}, {Peer: 2}, {Peer: 4}}})
	send(t, c, &Telemetry{Now: now, Ops: []OpEvent{{Op: "barrier", Start: now, End: now}}})
	f := follow(t, srv, "links")
	f.until(func(seen []Event) bool { return count(seen, EventOp) == 1 })
	require.Equal(t, 2, count(f.seen, EventLink))
	v, _ := srv.View("links")
	require.Equal(t, []LinkView{
		{From: 0, To: 1, Local: "srflx", Updated: v.Links[0].Updated},
		{From: 0, To: 3, Local: "relay", Updated: v.Links[1].Updated},
	}, v.Links)
	// a known link's report updates it; on the same path, within
	// linkEventInterval, it is no event
	send(t, c, &Telemetry{Now: time.Now().UnixMicro(), Links: []LinkStat{{Peer: 3, Local: "relay", Sent: 99}, {Peer: 1, Local: "host"}},
		Ops: []OpEvent{{Op: "barrier", Start: now, End: now}}})
	f.until(func(seen []Event) bool { return count(seen, EventOp) == 2 })
	require.Equal(t, 3, count(f.seen, EventLink), "the path change of 0→1 only")
	v, _ = srv.View("links")
	require.Equal(t, int64(99), v.Links[1].Sent)
	require.Equal(t, "host", v.Links[0].Local)
}

// A rank declared failed on a peer's report is failed in the view, with
// the declaration's reason; a seated job whose rank leaves before it
// formed is failed, the rank that left failed and the others sent away.
func TestRankStateFailures(t *testing.T) {
	srv, url := startServer(t, nil)
	cs := joinAll(t, url, "declared", 2)
	send(t, cs[0], &Suspect{Rank: 1, Reason: "ICE did not reconnect"})
	expectClosedWith(t, cs[1], CodeDeclaredFailed)
	f := follow(t, srv, "declared")
	f.until(func(seen []Event) bool { return len(rankStates(seen, 1)) == 3 })
	require.Equal(t, []string{RankJoined, RankReady, RankFailed}, rankStates(f.seen, 1))
	v, _ := srv.View("declared")
	require.Contains(t, v.Ranks[1].Reason, "declared failed: rank 0 lost its link to it (ICE did not reconnect)")
	require.Equal(t, RankReady, v.Ranks[0].State)
	require.Equal(t, JobFormed, v.State)

	toks := seats(t, "seated", 3)
	a := dial(t, url, "seated", toks[0], &DialOptions{Rank: intp(0)})
	b := dial(t, url, "seated", toks[1], &DialOptions{Rank: intp(1)})
	require.NoError(t, b.ws.closeNow())
	expectClosedWith(t, a, CodeJobFailed)
	f = follow(t, srv, "seated")
	f.until(func(seen []Event) bool { return count(seen, EventJob) == 1 })
	require.Equal(t, JobFailed, f.seen[len(f.seen)-1].State)
	require.Equal(t, []string{RankJoined, RankLeft}, rankStates(f.seen, 0))
	require.Equal(t, []string{RankJoined, RankFailed}, rankStates(f.seen, 1))
	v, _ = srv.View("seated")
	require.Equal(t, JobFailed, v.State)
	require.Contains(t, v.Reason, "rank 1 left before the job formed")
	require.Zero(t, v.Present)
}

// BenchmarkTelemetryIngest measures the server's cost of a batch of 256
// ops from a rank, from the client's send to the events a viewer reads:
// a 64-rank job reporting every 250 ms sends 256 such batches a second.
func BenchmarkTelemetryIngest(b *testing.B) {
	srv, err := NewServer(Config{Secret: testSecret, MessageRate: 1e6, MessageBurst: 1 << 20})
	require.NoError(b, err)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	defer srv.Close()
	url := "ws" + strings.TrimPrefix(hs.URL, "http") + "/ws"
	tok, err := MintToken(testSecret, "bench", 1, time.Now().Add(time.Hour))
	require.NoError(b, err)
	c, err := Dial(context.Background(), url, "bench", tok, nil)
	require.NoError(b, err)
	defer c.Close()
	now := time.Now().UnixMicro()
	batch := &Telemetry{Now: now, Ops: make([]OpEvent, 256)}
	for i := range batch.Ops {
		peer := i % 64
		batch.Ops[i] = OpEvent{Op: "send", Comm: "world", Peer: &peer, Bytes: 8, Start: now - 20, End: now}
	}
	data, err := Encode(batch)
	require.NoError(b, err)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var next uint64
	buf := make([]Event, 1024)
	for b.Loop() {
		require.NoError(b, c.Send(context.Background(), batch))
		for seen := 0; seen < len(batch.Ops); {
			evs, n, wake, _ := srv.Events("bench", next, buf)
			seen += count(evs, EventOp)
			next = n
			if seen < len(batch.Ops) {
				<-wake
			}
		}
	}
}

// A 64-rank job whose ranks all report at once (the bar: 64 join
// pages): a viewer follows every event, the view holds every rank and
// every link, and the job's record stays within its bound.
func TestTelemetry64Ranks(t *testing.T) {
	const ranks, batches, ops = 64, 3, 64
	srv, url := startServer(t, func(c *Config) {
		c.MessageRate, c.MessageBurst = 1000, 1000
		c.TelemetryEvents = 32768 // all of this test's events: no gap, however slow the viewer
	})
	tok := mint(t, "class", ranks)
	cs := make([]*Client, ranks)
	for i := range cs {
		cs[i] = dial(t, url, "class", tok, &DialOptions{Kind: KindBrowser, Agent: fmt.Sprintf("tab %d", i)})
	}
	for _, c := range cs {
		recvAs[*Ready](t, c)
	}
	var wg sync.WaitGroup
	errs := make(chan error, ranks)
	for r, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range batches {
				now := time.Now().UnixMicro()
				m := &Telemetry{Now: now, Ops: make([]OpEvent, ops),
					Console: []ConsoleLine{{Stream: StreamOut, Text: fmt.Sprintf("rank %d batch %d", r, b)}}}
				for i := range m.Ops {
					m.Ops[i] = OpEvent{Op: "allreduce", Comm: "world", Bytes: 8, Start: now - 50, End: now - 10}
				}
				if b == 0 {
					for p := range ranks {
						if p != r {
							m.Links = append(m.Links, LinkStat{Peer: p, Local: "host", Remote: "host", RTTMicros: 200, Sent: 1, Received: 1})
						}
					}
				}
				if err := c.Send(context.Background(), m); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	f := follow(t, srv, "class")
	f.buf = make([]Event, 1024)
	f.until(func(seen []Event) bool { return count(seen, EventConsole) == ranks*batches })
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Zero(t, count(f.seen, EventGap))
	require.Equal(t, ranks*batches*ops, count(f.seen, EventOp))
	require.Equal(t, ranks*(ranks-1), count(f.seen, EventLink))
	v, ok := srv.View("class")
	require.True(t, ok)
	require.Len(t, v.Ranks, ranks)
	require.Len(t, v.Links, ranks*(ranks-1))
	require.Equal(t, ranks, v.Present)
	for r, rv := range v.Ranks {
		require.Equal(t, fmt.Sprintf("tab %d", r), rv.Agent)
		require.Len(t, rv.Console, batches)
	}
	st := srv.Stats()
	require.LessOrEqual(t, st.RecordBytes, int64(8<<20))
	t.Logf("a 64-rank job's record after %d events: %d KB", v.Seq, st.RecordBytes>>10)
}
