//go:build unix || windows

package main

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/signaling"
)

// departureWait bounds how long meshrun waits, once every rank has
// exited, for its embedded server's record of how the failed ones left:
// a rank's exit and the server's sight of its closed connection race.
const departureWait = 2 * time.Second

// departureLog is what meshrun's embedded server announced of the job's
// departures (signaling.Config.Departed), by rank: how and when each rank
// left, and whether the server declared it failed.
type departureLog struct {
	mu   sync.Mutex
	deps map[int]signaling.Departure
	more chan struct{} // cap 1: deps grew
}

func newDepartureLog() *departureLog {
	return &departureLog{deps: map[int]signaling.Departure{}, more: make(chan struct{}, 1)}
}

// add implements signaling.Config.Departed: it runs under the server's
// lock, and only records.
func (d *departureLog) add(x signaling.Departure) {
	d.mu.Lock()
	d.deps[x.Rank] = x
	d.mu.Unlock()
	select {
	case d.more <- struct{}{}:
	default:
	}
}

// get returns rank's departure, waiting for it until deadline.
func (d *departureLog) get(rank int, deadline time.Time) (signaling.Departure, bool) {
	for {
		d.mu.Lock()
		x, ok := d.deps[rank]
		d.mu.Unlock()
		left := time.Until(deadline)
		if ok || left <= 0 {
			return x, ok
		}
		t := time.NewTimer(left)
		select {
		case <-d.more:
		case <-t.C:
		}
		t.Stop()
	}
}

// keepGoingResult is meshrun's exit status under --keep-going, once
// every rank has ended: the worst status of the ranks that did not fail,
// the program's own result. A rank failed if the server declared it
// failed, or if it ended with a nonzero status (or stopped responding)
// without leaving the job cleanly (Finalize): it crashed, was killed, or
// exited without Finalize. One that left cleanly did not fail, whatever
// ended its process after that.
// (For a job on another server, whose departures meshrun does not see,
// and for a WASI rank, whose host leaves the job cleanly for it however
// the guest ended, a nonzero status is a failure.) Each failed rank is listed with how it
// ended and when the job was told. With no survivor at all the status is
// the worst of every rank's.
func (j *job) keepGoingResult() int {
	deadline := time.Now().Add(departureWait)
	var failed []string
	survivors, worst, all := 0, 0, 0
	for _, r := range j.ranks {
		if r.stopped {
			continue
		}
		all = max(all, r.status)
		var (
			dep   signaling.Departure
			known bool
		)
		if j.l.deps != nil && j.l.cfg.first != meshmpi.AnyRank {
			wait := time.Time{} // none for a rank that succeeded
			if r.status != 0 || r.killedFrozen {
				wait = deadline
			}
			dep, known = j.l.deps.get(j.l.cfg.first+r.seat, wait)
		}
		// a WASI rank's host leaves the job cleanly for it however the
		// guest ended: only a process's clean departure says it finalized
		clean := known && dep.Clean && r.cmd != nil
		// a rank that left cleanly lost the job nothing, however its
		// process ended after that: its status is the program's
		fails := dep.Declared || !clean && (r.killedFrozen || r.status != 0)
		if !fails {
			survivors++
			worst = max(worst, r.status)
			continue
		}
		how := r.how
		if r.killedFrozen {
			how = "stopped responding; meshrun killed it"
		}
		line := fmt.Sprintf("rank %s failed: %s", r.label, how)
		if known {
			what := "left the job"
			reason := dep.Reason
			if dep.Declared {
				what = "declared failed"
				reason = strings.TrimPrefix(reason, "declared failed: ")
			}
			line += fmt.Sprintf("; %s at %s", what, dep.At.Format("15:04:05.000"))
			if reason != "" {
				line += " (" + reason + ")"
			}
		}
		failed = append(failed, r.label)
		j.l.fail("%s", line)
	}
	if len(failed) == 0 {
		return worst
	}
	if survivors == 0 {
		j.l.fail("--keep-going: every rank failed")
		return all
	}
	j.l.fail("--keep-going: rank(s) %s failed; the %d other rank(s) exited with status %d at worst", strings.Join(failed, ", "), survivors, worst)
	return worst
}
