//go:build !js

package web

import "github.com/meshmpi/meshmpi/signaling"

// The signaling server's view of a job, as the registry, the dashboard's
// API and the trace read it.
type (
	jobView  = signaling.JobView
	rankView = signaling.RankView
	event    = signaling.Event
)

// viewJob is srv.View; false for a nil server.
func viewJob(srv *signaling.Server, job string) (jobView, bool) {
	if srv == nil {
		return jobView{}, false
	}
	return srv.View(job)
}

// endJob is srv.EndJob.
func endJob(srv *signaling.Server, job, reason string) error {
	if srv == nil {
		return nil
	}
	return srv.EndJob(job, reason)
}

// jobEvents is srv.Events; false for a nil server.
func jobEvents(srv *signaling.Server, job string, after uint64, buf []event) ([]event, uint64, <-chan struct{}, bool) {
	if srv == nil {
		return buf[:0], after, nil, false
	}
	return srv.Events(job, after, buf)
}
