//go:build !js

package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/signaling"
)

// The trace download is Chrome trace-event JSON with one complete event
// per operation per rank, on the thread of its rank, named by its kind.
func TestTraceJSON(t *testing.T) {
	e := startJobs(t, nil)
	o := e.browser()
	o.login("organizer-pw")
	in := o.mustCreate(map[string]string{"example": "hello", "size": "3"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w := e.watch(ctx, in.ID, viewKey(t, in))
	w.next(ctx)
	var cs []*signaling.Client
	for range 3 {
		cs = append(cs, e.joinRank(ctx, in.Invite))
	}
	for _, c := range cs {
		telemetry(t, ctx, c, 5)
	}
	// a rank fails an operation and leaves without Finalize
	peer := 0
	bad := &signaling.Telemetry{Now: time.Now().UnixMicro(), Ops: []signaling.OpEvent{{Op: "recv", Comm: "world", Peer: &peer,
		Start: time.Now().UnixMicro() - 10, End: time.Now().UnixMicro(), Err: "rank 0 failed"}}}
	require.NoError(t, cs[2].Send(ctx, bad))
	ops := 0
	for ops < 3*6+1 {
		for _, ev := range w.next(ctx).Events {
			if ev.Kind == signaling.EventOp {
				ops++
			}
		}
	}
	_ = cs[2].Close()
	for left := false; !left; {
		for _, ev := range w.next(ctx).Events {
			left = left || ev.Kind == signaling.EventRank && ev.Rank == 2 && ev.RankView.State != signaling.RankReady
		}
	}

	resp, err := http.Get(e.url + in.Trace + "?key=" + url.QueryEscape(viewKey(t, in)))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, resp.Header.Get("Content-Disposition"), "attachment")
	var tr struct {
		TraceEvents []struct {
			Name string         `json:"name"`
			Cat  string         `json:"cat"`
			Ph   string         `json:"ph"`
			Ts   *float64       `json:"ts"`
			Dur  *float64       `json:"dur"`
			Pid  int            `json:"pid"`
			Tid  int            `json:"tid"`
			Args map[string]any `json:"args"`
		} `json:"traceEvents"`
		DisplayTimeUnit string `json:"displayTimeUnit"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&tr))
	require.Equal(t, "ms", tr.DisplayTimeUnit)
	type key struct {
		rank int
		op   string
	}
	count := map[key]int{}
	threads := map[int]string{}
	instants := 0
	for _, ev := range tr.TraceEvents {
		require.Equal(t, 1, ev.Pid)
		switch ev.Ph {
		case "X":
			require.NotNil(t, ev.Ts)
			require.NotNil(t, ev.Dur)
			require.GreaterOrEqual(t, *ev.Ts, 0.0)
			count[key{ev.Tid, ev.Name}]++
			require.Equal(t, "world", ev.Args["comm"])
			if ev.Name == "allreduce" {
				require.Equal(t, "coll", ev.Cat)
				require.InDelta(t, 400, *ev.Dur, 0.5)
				require.EqualValues(t, 8, ev.Args["bytes"])
			} else {
				require.Equal(t, "p2p", ev.Cat)
				require.Contains(t, ev.Args, "peer")
			}
		case "M":
			if ev.Name == "thread_name" {
				threads[ev.Tid] = ev.Args["name"].(string)
			}
		case "i":
			instants++
		}
	}
	for r := range 3 {
		require.Equal(t, 5, count[key{r, "allreduce"}], "rank %d", r)
		require.Equal(t, 1, count[key{r, "send"}], "rank %d", r)
		require.Equal(t, "rank "+string(rune('0'+r))+" (native)", threads[r])
	}
	require.Equal(t, 1, count[key{2, "recv"}])
	require.GreaterOrEqual(t, instants, 2, "the failed recv and rank 2's departure")
}

// buildTrace of no events is a valid, empty trace.
func TestTraceEmpty(t *testing.T) {
	tr := buildTrace("j", jobView{}, nil, false)
	b, err := json.Marshal(tr)
	require.NoError(t, err)
	require.Contains(t, string(b), `"traceEvents":[`)
}
