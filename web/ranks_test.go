//go:build !js

package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/signaling"
)

// Native ranks of the root package join a job of the registry from its
// invite (net=loopback, telemetry=1 from the job's settings), run
// collectives and point-to-point; the dashboard's websocket sees their
// operations and links, and the trace has one event per collective per
// rank.
func TestRealRanksTrace(t *testing.T) {
	e := startJobs(t, func(c *JobsConfig) { c.Loopback = true })
	o := e.browser()
	o.login("organizer-pw")
	const n, rounds = 3, 4
	in := o.mustCreate(map[string]string{"example": "hello", "size": "3"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	w := e.watch(ctx, in.ID, viewKey(t, in))
	require.Equal(t, "view", w.next(ctx).Type)

	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		st, a, ae := e.joinInvite(in.Invite)
		require.Equal(t, http.StatusOK, st, ae.Message)
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- runRank(ctx, meshmpi.JobSpec{Signal: e.wsURL(), Job: a.Job, Token: a.Token, Rank: a.Rank}, rounds)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	// the watch saw every rank's operations and its links' path types
	ops := map[int]int{}
	paths := map[string]bool{}
	states := map[int]string{}
	finalized := 0
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	for finalized < n || len(ops) < n || ops[0] < rounds || ops[1] < rounds || ops[2] < rounds {
		_, b, err := w.c.Read(wctx)
		if err != nil {
			var v json.RawMessage
			o.getJSON("/api/jobs/"+in.ID+"/view", &v)
			t.Fatalf("watching: %v; allreduces %v, finalized %d, states %v; the view: %s", err, ops, finalized, states, v)
		}
		var m watchMsg
		require.NoError(t, json.Unmarshal(b, &m))
		for _, ev := range m.Events {
			if ev.RankView != nil {
				states[ev.Rank] += "," + ev.RankView.State
			}
			switch ev.Kind {
			case signaling.EventOp:
				if ev.Op.Op == "allreduce" {
					ops[ev.Rank]++
				}
			case signaling.EventLink:
				paths[ev.Link.Local] = true
			case signaling.EventRank:
				if ev.RankView.State == signaling.RankFinalized {
					finalized++
				}
			}
		}
	}
	require.NotEmpty(t, paths)

	resp, err := http.Get(e.url + in.Trace + "?key=" + url.QueryEscape(viewKey(t, in)))
	require.NoError(t, err)
	defer resp.Body.Close()
	var tr traceFile
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&tr))
	per := map[int]int{}
	for _, ev := range tr.TraceEvents {
		if ev.Ph == "X" && ev.Name == "allreduce" {
			require.Equal(t, "coll", ev.Cat)
			require.Equal(t, "world", ev.Args["comm"])
			per[ev.Tid]++
		}
	}
	require.Equal(t, map[int]int{0: rounds, 1: rounds, 2: rounds}, per)

	// every rank finalized: the job is over, and its invite says so
	st, _, ae := e.joinInvite(in.Invite)
	require.Equal(t, http.StatusGone, st)
	require.Equal(t, "job-ended", ae.Code)
	require.Contains(t, ae.Message, "every rank has left")
	var list jobsList
	o.getJSON("/api/jobs", &list)
	require.Equal(t, "over", list.Jobs[0].State)
}

// runRank is one rank: rounds Allreduces and a ring exchange.
func runRank(ctx context.Context, spec meshmpi.JobSpec, rounds int) error {
	s, err := meshmpi.Join(ctx, spec)
	if err != nil {
		return err
	}
	world := s.World()
	for i := range rounds {
		out := []int64{0}
		if err := meshmpi.Allreduce(world, []int64{int64(world.Rank() + i)}, out, meshmpi.Sum); err != nil {
			s.Abort(err)
			return err
		}
	}
	next, prev := (world.Rank()+1)%world.Size(), (world.Rank()+world.Size()-1)%world.Size()
	req, err := meshmpi.Isend(world, []byte("hi"), next, 7)
	if err != nil {
		s.Abort(err)
		return err
	}
	buf := make([]byte, 2)
	if _, err := meshmpi.Recv(world, buf, prev, 7); err != nil {
		s.Abort(err)
		return err
	}
	if _, err := req.Wait(ctx); err != nil {
		s.Abort(err)
		return err
	}
	return s.Finalize()
}
