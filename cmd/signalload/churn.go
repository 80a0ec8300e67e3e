//go:build unix

package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/meshmpi/meshmpi/signaling"
)

// churnJobs is how many open jobs the churn's ranks spread over.
const churnJobs = 16

// churnReport is what churn measured.
type churnReport struct {
	kind        string
	servers     int
	rate        float64
	planned     int
	ok          int
	elapsed     time.Duration // first join to last leave
	p50, p99    time.Duration // join latency: dial to Welcome
	errs        string
	joins, left uint64 // the servers' joins and departures over the run
	cpu         time.Duration
	cpuOK       bool
}

func (r *churnReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "mode: churn (servers: %d, %s)\n", r.servers, r.kind)
	achieved := 0.0
	if r.elapsed > 0 {
		achieved = float64(r.ok) / r.elapsed.Seconds()
	}
	fmt.Fprintf(&b, "joins and leaves: %d of %d at %.0f/s asked, %.0f/s achieved over %v\n", r.ok, r.planned, r.rate, achieved, r.elapsed.Round(time.Millisecond))
	fmt.Fprintf(&b, "join latency: p50 %v, p99 %v\n", r.p50.Round(time.Microsecond), r.p99.Round(time.Microsecond))
	fmt.Fprintf(&b, "errors: %s\n", r.errs)
	fmt.Fprintf(&b, "servers counted: %d joins, %d departures\n", r.joins, r.left)
	if r.cpuOK && r.elapsed > 0 {
		who := "servers'"
		if r.kind == serverEmbedded {
			who = "this process's (servers and clients)"
		}
		fmt.Fprintf(&b, "%s CPU: %v = %.1f%% of one core\n", who, r.cpu.Round(time.Millisecond), 100*r.cpu.Seconds()/r.elapsed.Seconds())
	}
	return b.String()
}

// runChurn joins and at once leaves cfg.rate ranks a second for
// cfg.duration, over the servers in turn, in open jobs that never form.
func runChurn(ctx context.Context, cfg config, stderr io.Writer) (*churnReport, error) {
	f, err := startFleet(ctx, cfg, cfg.servers, stderr)
	if err != nil {
		return nil, err
	}
	defer f.stop()
	urls := f.urls()
	rep := &churnReport{kind: f.kind, servers: len(urls), rate: cfg.rate, planned: int(cfg.rate * cfg.duration.Seconds())}
	// jobs as large as the servers take never form: at most inflight
	// ranks are in them at once
	id := runID()
	var jobs, tokens [churnJobs]string
	for j := range churnJobs {
		jobs[j] = fmt.Sprintf("churn-%s-%d", id, j)
		if tokens[j], err = signaling.Mint(f.secret, signaling.Claims{Job: jobs[j], Size: cfg.maxJobSize, Expires: expiry()}); err != nil {
			return rep, err
		}
	}
	before, err := f.sampleAll(ctx, false)
	if err != nil {
		return rep, err
	}
	var (
		errs errCount
		mu   sync.Mutex
		lat  = make([]time.Duration, 0, rep.planned)
		wg   sync.WaitGroup
		sem  = make(chan struct{}, cfg.inflight)
	)
	rctx, cancel := context.WithTimeout(ctx, cfg.duration+cfg.timeout)
	defer cancel()
	start := time.Now()
	interval := time.Duration(float64(time.Second) / cfg.rate)
	for i := range rep.planned {
		if wait := time.Until(start.Add(time.Duration(i) * interval)); wait > 0 {
			time.Sleep(wait) // pacing the load, not waiting for an event
		}
		select {
		case sem <- struct{}{}: // a full window slows the schedule: the achieved rate says so
		case <-rctx.Done():
			errs.add(rctx.Err())
			continue
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			octx, ocancel := context.WithTimeout(rctx, 30*time.Second)
			defer ocancel()
			t := time.Now()
			c, err := signaling.Dial(octx, urls[i%len(urls)], jobs[i%churnJobs], tokens[i%churnJobs], dialOptions(nil))
			if err != nil {
				errs.add(err)
				return
			}
			d := time.Since(t)
			if err := c.Close(); err != nil {
				errs.add(fmt.Errorf("leave: %w", err))
				return
			}
			mu.Lock()
			lat = append(lat, d)
			mu.Unlock()
		}()
	}
	wg.Wait()
	rep.elapsed = time.Since(start)
	rep.ok, rep.errs = len(lat), errs.String()
	sortDurations(lat)
	rep.p50, rep.p99 = percentile(lat, 50), percentile(lat, 99)
	// the servers count a departure when they see the close: wait for
	// the last ones (bounded)
	var after []sample
	deadline := time.Now().Add(cfg.timeout)
	for {
		if after, err = f.sampleAll(ctx, false); err != nil {
			return rep, err
		}
		rep.joins, rep.left, rep.cpu, rep.cpuOK = 0, 0, 0, true
		for i := range after {
			rep.joins += after[i].joins - before[i].joins
			rep.left += after[i].departures - before[i].departures
			rep.cpu += after[i].cpu - before[i].cpu
			rep.cpuOK = rep.cpuOK && after[i].cpuOK
		}
		if rep.left >= rep.joins || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond) // polling another process's counters
	}
	if f.kind == serverEmbedded && rep.cpuOK {
		rep.cpu = after[0].cpu - before[0].cpu // one process: every server's sample is its whole CPU
	}
	if n := errs.total(); n > 0 {
		return rep, fmt.Errorf("%d of %d joins and leaves failed: %s", n, rep.planned, rep.errs)
	}
	return rep, nil
}
