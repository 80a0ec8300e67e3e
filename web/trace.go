//go:build !js

package web

import (
	"fmt"
	"net/http"
	"slices"
	"time"
)

// The trace download: the job's recorded operations in the Chrome
// trace-event format (the "JSON Object Format" of Google's Trace Event
// Format document), which Perfetto (ui.perfetto.dev) and chrome://tracing
// open: one complete ("X") event per operation on the thread of its rank,
// metadata ("M") events naming each rank's thread, and instant ("i")
// events for departures and failed operations.

// traceFile is the trace download.
type traceFile struct {
	TraceEvents     []traceEvent `json:"traceEvents"`
	DisplayTimeUnit string       `json:"displayTimeUnit"`
	OtherData       traceOther   `json:"otherData"`
}

type traceOther struct {
	Job     string `json:"job"`
	Start   int64  `json:"start"`   // unix µs of ts 0 (on the server's clock)
	Dropped bool   `json:"dropped"` // the server's ring had dropped older events
}

// traceEvent is one event of the trace.
type traceEvent struct {
	Name  string         `json:"name"`
	Cat   string         `json:"cat,omitempty"`
	Ph    string         `json:"ph"`
	Ts    int64          `json:"ts"` // µs from the job's first event
	Dur   *int64         `json:"dur,omitempty"`
	Pid   int            `json:"pid"`
	Tid   int            `json:"tid"`
	Scope string         `json:"s,omitempty"` // of an instant event: "t", the thread
	Args  map[string]any `json:"args,omitempty"`
}

// traceEvents reads every event the server still holds of the job.
func (js *Jobs) allEvents(j *uiJob) (evs []event, dropped bool) {
	srv := js.srv.Load()
	sig := js.sigOf(j)
	buf := make([]event, 0, watchBatch)
	var after uint64
	for {
		got, next, _, ok := jobEvents(srv, sig, after, buf[:cap(buf)])
		if !ok || len(got) == 0 {
			return evs, dropped
		}
		for _, e := range got {
			if e.Kind == "gap" {
				dropped = true
				continue
			}
			evs = append(evs, e)
		}
		after = next
		if len(evs) > 1<<20 { // far beyond any ring: a server that never stops
			return evs, true
		}
	}
}

// buildTrace turns a job's events into a trace.
func buildTrace(job string, view jobView, evs []event, dropped bool) traceFile {
	t0 := int64(0)
	for _, e := range evs {
		ts := e.Time
		if e.Kind == "op" && e.Op != nil {
			ts = min(ts, e.Op.Start)
		}
		if t0 == 0 || ts < t0 {
			t0 = ts
		}
	}
	out := traceFile{DisplayTimeUnit: "ms", TraceEvents: []traceEvent{},
		OtherData: traceOther{Job: job, Start: t0, Dropped: dropped}}
	add := func(e traceEvent) { out.TraceEvents = append(out.TraceEvents, e) }
	add(traceEvent{Name: "process_name", Ph: "M", Pid: 1, Args: map[string]any{"name": "job " + job}})
	kinds := map[int]string{}
	for _, rv := range view.Ranks {
		if rv.State != "" {
			kinds[rv.Rank] = string(rv.Kind)
		}
	}
	for _, e := range evs {
		if e.Kind == "rank" && e.RankView != nil && e.RankView.Kind != "" {
			kinds[e.Rank] = string(e.RankView.Kind)
		}
	}
	ranks := make([]int, 0, len(kinds))
	for _, e := range evs {
		if _, ok := kinds[e.Rank]; !ok && (e.Kind == "op" || e.Kind == "rank") {
			kinds[e.Rank] = ""
		}
	}
	for r := range kinds {
		ranks = append(ranks, r)
	}
	slices.Sort(ranks)
	for _, r := range ranks {
		name := fmt.Sprintf("rank %d", r)
		if k := kinds[r]; k != "" {
			name += " (" + k + ")"
		}
		add(traceEvent{Name: "thread_name", Ph: "M", Pid: 1, Tid: r, Args: map[string]any{"name": name}})
		add(traceEvent{Name: "thread_sort_index", Ph: "M", Pid: 1, Tid: r, Args: map[string]any{"sort_index": r}})
	}
	for _, e := range evs {
		switch {
		case e.Kind == "op" && e.Op != nil:
			op := e.Op
			dur := max(0, op.End-op.Start)
			args := map[string]any{}
			cat := "coll"
			if op.Comm != "" {
				args["comm"] = op.Comm
			}
			if op.Peer != nil && *op.Peer >= 0 {
				cat = "p2p"
				args["peer"] = *op.Peer
			}
			if op.Bytes != 0 {
				args["bytes"] = op.Bytes
			}
			if op.Err != "" {
				args["err"] = op.Err
			}
			add(traceEvent{Name: op.Op, Cat: cat, Ph: "X", Ts: op.Start - t0, Dur: &dur, Pid: 1, Tid: e.Rank, Args: args})
			if op.Err != "" {
				add(traceEvent{Name: op.Op + " failed", Cat: "error", Ph: "i", Scope: "t", Ts: op.End - t0, Pid: 1, Tid: e.Rank,
					Args: map[string]any{"err": op.Err}})
			}
		case e.Kind == "rank" && e.RankView != nil:
			switch st := e.RankView.State; st {
			case "finalized", "failed", "aborted", "left":
				args := map[string]any{"state": st}
				if e.RankView.Reason != "" {
					args["reason"] = e.RankView.Reason
				}
				if st == "aborted" {
					args["code"] = e.RankView.Code
				}
				cat := "departure"
				if st == "failed" || st == "aborted" {
					cat = "error"
				}
				add(traceEvent{Name: fmt.Sprintf("rank %d %s", e.Rank, st), Cat: cat, Ph: "i", Scope: "t", Ts: e.Time - t0,
					Pid: 1, Tid: e.Rank, Args: args})
			}
		}
	}
	return out
}

// trace answers GET /api/jobs/{id}/trace.json.
func (js *Jobs) trace(w http.ResponseWriter, r *http.Request) {
	j, _ := js.viewerOr403(w, r)
	if j == nil {
		return
	}
	var view jobView
	if srv := js.srv.Load(); srv != nil {
		view, _ = viewJob(srv, js.sigOf(j))
	}
	evs, dropped := js.allEvents(j)
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="meshmpi-%s-%s.trace.json"`, j.id, time.Now().UTC().Format("20060102-150405")))
	writeJSON(w, http.StatusOK, buildTrace(j.id, view, evs, dropped))
}
