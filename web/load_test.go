//go:build !js

package web

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/signaling"
)

// 64 ranks report telemetry four times a second each, 64 operations a
// batch (16k events a second, the ring wrapping every second); a
// dashboard's websocket keeps up: every batch's events reach it, or a
// gap's fresh view does. The test logs how far behind the server's
// receipt the viewer got them (issue 17's bar: at most a second), and
// asserts no time.
func TestWatch64Ranks(t *testing.T) {
	if testing.Short() {
		t.Skip("a load test")
	}
	e := startJobs(t, nil)
	o := e.browser()
	o.login("organizer-pw")
	const n, batches, ops = 64, 12, 64
	in := o.mustCreate(map[string]string{"example": "hello", "size": "64"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	w := e.watch(ctx, in.ID, viewKey(t, in))
	require.Equal(t, "view", w.next(ctx).Type)
	cs := make([]*signaling.Client, n)
	for i := range cs {
		cs[i] = e.joinRank(ctx, in.Invite)
	}
	// the job's events so far (joins, formed, ready): the reports' ops
	// follow them
	var base uint64
	for formed := false; !formed; {
		m := w.next(ctx)
		for _, ev := range m.Events {
			formed = formed || ev.Kind == signaling.EventJob && ev.State == signaling.JobFormed
		}
	}
	v, ok := e.srv.View(in.ID)
	require.True(t, ok)
	base = v.Seq
	target := base + n*batches*ops

	var lags []time.Duration
	var mu sync.Mutex
	got, views := 0, 0
	seen := base
	read := make(chan error, 1)
	go func() {
		for seen < target {
			_, b, err := w.c.Read(ctx)
			if err != nil {
				read <- err
				return
			}
			now := time.Now().UnixMicro()
			var m watchMsg
			if err := json.Unmarshal(b, &m); err != nil {
				read <- err
				return
			}
			mu.Lock()
			if m.Type == "view" {
				views++
			}
			for _, ev := range m.Events {
				seen = max(seen, ev.Seq)
				if ev.Kind == signaling.EventOp {
					got++
					lags = append(lags, time.Duration(now-ev.Time)*time.Microsecond)
				}
			}
			if m.Type == "view" { // after a gap: it stands for what the ring dropped
				seen = max(seen, m.View.Seq)
			}
			mu.Unlock()
		}
		read <- nil
	}()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var wg sync.WaitGroup
	for range batches {
		<-tick.C
		for _, c := range cs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				now := time.Now().UnixMicro()
				m := &signaling.Telemetry{Now: now}
				for i := range ops {
					m.Ops = append(m.Ops, signaling.OpEvent{Op: "allreduce", Comm: "world", Bytes: 8, Start: now - int64(ops-i)*100, End: now - int64(ops-i)*100 + 50})
				}
				if err := c.Send(ctx, m); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
	}
	require.NoError(t, <-read)
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(lags)
	if len(lags) > 0 {
		t.Logf("%d ranks, %d op events a second: the viewer got %d of %d op events, %d fresh views after gaps; lag behind the server p50 %v, p99 %v, max %v",
			n, n*ops*4, got, n*batches*ops, views, lags[len(lags)/2], lags[len(lags)*99/100], lags[len(lags)-1])
	}
}
