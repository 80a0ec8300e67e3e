//go:build !js

package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// Watch bounds: events per message, the coalescing window, viewers per
// server, and the wait while the signaling server does not hold a job
// (nobody joined it yet).
const (
	watchBatch    = 1024
	watchCoalesce = 100 * time.Millisecond
	maxWatchers   = 512
	watchAbsent   = 250 * time.Millisecond
	watchPing     = 20 * time.Second
	watchWrite    = 10 * time.Second
)

// watchers counts the open watch websockets of every Jobs.
var watchers atomic.Int64

// viewMessage is a watch message with the job's whole view.
type viewMessage struct {
	Type string  `json:"type"` // "view"
	View jobView `json:"view"`
	Info JobInfo `json:"info"`
}

// eventsMessage is a watch message with the events since the last one.
type eventsMessage struct {
	Type   string  `json:"type"` // "events"
	Events []event `json:"events"`
}

// viewOf returns the server's view of j, or one of the registry's when
// the server does not hold the job.
func (js *Jobs) viewOf(r *http.Request, j *uiJob, org bool) viewMessage {
	s := js.snap(j, time.Now(), true)
	v := s.view
	if !s.hasView {
		v = jobView{Job: s.sig, Size: j.size, Max: j.max, State: s.state}
	}
	if v.Ranks == nil {
		v.Ranks = []rankView{}
	}
	return viewMessage{Type: "view", View: v, Info: js.info(r, s, org)}
}

// view answers GET /api/jobs/{id}/view: the JobView with the JobInfo as
// "info".
func (js *Jobs) view(w http.ResponseWriter, r *http.Request) {
	j, org := js.viewerOr403(w, r)
	if j == nil {
		return
	}
	m := js.viewOf(r, j, org)
	writeJSON(w, http.StatusOK, struct {
		jobView
		Info JobInfo `json:"info"`
	}{m.View, m.Info})
}

// watch streams a job to a dashboard: its view, then its events as they
// come, at most one message per watchCoalesce, and the view again after a
// gap (the viewer fell behind the server's ring).
func (js *Jobs) watch(w http.ResponseWriter, r *http.Request) {
	j, org := js.viewerOr403(w, r)
	if j == nil {
		return
	}
	if watchers.Add(1) > maxWatchers {
		watchers.Add(-1)
		writeError(w, http.StatusServiceUnavailable, "busy", "too many dashboards are open on this server")
		return
	}
	defer watchers.Add(-1)
	c, err := websocket.Accept(w, r, nil) // same-origin pages only
	if err != nil {
		return
	}
	defer c.CloseNow()
	ctx := c.CloseRead(r.Context())
	err = js.stream(ctx, c, r, j, org)
	if errors.Is(err, context.Canceled) || websocket.CloseStatus(err) != -1 {
		return
	}
	c.Close(websocket.StatusGoingAway, "")
}

func (js *Jobs) stream(ctx context.Context, c *websocket.Conn, r *http.Request, j *uiJob, org bool) error {
	send := func(v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		wctx, cancel := context.WithTimeout(ctx, watchWrite)
		defer cancel()
		return c.Write(wctx, websocket.MessageText, b)
	}
	sendView := func() (uint64, error) {
		m := js.viewOf(r, j, org)
		return m.View.Seq, send(m)
	}
	if _, err := sendView(); err != nil {
		return err
	}
	// then the ring's events from its start, for the dashboard's
	// timeline (the view has no operations); the page applies those the
	// view covers already (seq ≤ the view's) only for what the view
	// lacks
	var after uint64
	replay := true
	srv := js.srv.Load()
	buf := make([]event, 0, watchBatch)
	ping := time.NewTicker(watchPing)
	defer ping.Stop()
	var last time.Time // the last events message
	sig := js.sigOf(j)
	for {
		if now := js.sigOf(j); now != sig {
			// the job restarted under a new signaling id: its view,
			// and its events from the start
			sig, after, replay = now, 0, true
			if _, err := sendView(); err != nil {
				return err
			}
		}
		changed := js.changes()
		evs, next, wake, ok := jobEvents(srv, sig, after, buf[:cap(buf)])
		if !ok {
			// the server does not hold the job: nobody joined yet, or
			// it was forgotten; look again shortly
			t := time.NewTimer(watchAbsent)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-changed:
				t.Stop()
			case <-t.C:
			case <-ping.C:
				t.Stop()
				if err := pingConn(ctx, c); err != nil {
					return err
				}
			}
			continue
		}
		if len(evs) > 0 && evs[0].Kind == "gap" {
			// the ring overwrote events after the cursor: the view again
			// (not for the replay, whose view is fresh), then what the
			// ring holds
			if !replay {
				if _, err := sendView(); err != nil {
					return err
				}
			}
			evs = evs[1:]
		}
		replay = false
		if len(evs) > 0 {
			if err := send(eventsMessage{Type: "events", Events: evs}); err != nil {
				return err
			}
			last = time.Now()
		}
		after = next
		if len(evs) > 0 && len(evs)+1 >= cap(buf) {
			continue // more may be waiting
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ping.C:
			if err := pingConn(ctx, c); err != nil {
				return err
			}
			continue
		case <-changed: // the registry changed: the job may have restarted
			continue
		case <-wake:
		}
		// coalesce: at most one events message per watchCoalesce
		if d := watchCoalesce - time.Since(last); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
		}
	}
}

func pingConn(ctx context.Context, c *websocket.Conn) error {
	pctx, cancel := context.WithTimeout(ctx, watchWrite)
	defer cancel()
	return c.Ping(pctx)
}
