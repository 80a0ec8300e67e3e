//go:build unix

package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/meshmpi/meshmpi/signaling"
)

// formReport is what form measured.
type formReport struct {
	kind          string
	servers       int
	n             int
	joined, ready int
	formTime      time.Duration // first join to last Ready
	errs          string
	formSent      uint64 // messages the servers sent from the first join to the last Ready
	leaveSent     uint64 // messages they sent while the ranks left
	departures    uint64
	perServer     []uint64 // formSent by server
	countsOK      bool     // the servers told their counters
}

func (r *formReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "mode: form (servers: %d, %s)\n", r.servers, r.kind)
	fmt.Fprintf(&b, "ranks: %d; joined %d, ready %d; first join to last Ready: %v; join errors: %s\n", r.n, r.joined, r.ready, r.formTime.Round(time.Millisecond), r.errs)
	if r.countsOK && r.n > 0 {
		fmt.Fprintf(&b, "formation: the servers received %d joins and sent %d messages (%.2f per rank; by server %v)\n", r.joined, r.formSent, float64(r.formSent)/float64(r.n), r.perServer)
		fmt.Fprintf(&b, "departures: %d ranks left; the servers sent %d messages (%.2f per rank)\n", r.departures, r.leaveSent, float64(r.leaveSent)/float64(r.n))
	}
	return b.String()
}

// runForm forms one job of cfg.n ranks, rank r joining through server r
// mod the servers, then has every rank leave.
func runForm(ctx context.Context, cfg config, stderr io.Writer) (*formReport, error) {
	f, err := startFleet(ctx, cfg, cfg.servers, stderr)
	if err != nil {
		return nil, err
	}
	defer f.stop()
	urls := f.urls()
	rep := &formReport{kind: f.kind, servers: len(urls), n: cfg.n}
	job := "form-" + runID()
	tokens, err := signaling.MintSeats(f.secret, signaling.Claims{Job: job, Size: cfg.n, Expires: expiry()})
	if err != nil {
		return rep, err
	}
	before, err := f.sampleAll(ctx, false)
	if err != nil {
		return rep, err
	}
	jctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	d := newDialer(cfg.inflight)
	start := time.Now()
	ranks := d.joinAll(jctx, cfg.n, func(ctx context.Context, i int) (*signaling.Client, error) {
		return signaling.Dial(ctx, urls[i%len(urls)], job, tokens[i], dialOptions(&i))
	})
	closed := false
	defer func() {
		if !closed {
			closeAll(ranks, cfg.inflight)
		}
	}()
	for _, r := range ranks {
		if r != nil {
			rep.joined++
		}
	}
	var last time.Time
	rep.ready, last = waitReady(jctx, ranks)
	rep.formTime, rep.errs = last.Sub(start), d.errs.String()
	if rep.ready < cfg.n {
		return rep, fmt.Errorf("%d of %d ranks ready (join errors: %s)", rep.ready, cfg.n, rep.errs)
	}
	formed, err := f.sampleAll(ctx, false)
	if err != nil {
		return rep, err
	}
	rep.countsOK = true
	for i := range formed {
		sent := formed[i].sent - before[i].sent
		rep.formSent += sent
		rep.perServer = append(rep.perServer, sent)
	}
	closeAll(ranks, cfg.inflight)
	closed = true
	// the servers announce the last departures in batches: wait until
	// they counted every rank gone and sent nothing more (bounded)
	deadline := time.Now().Add(cfg.timeout)
	var prev uint64
	for {
		after, err := f.sampleAll(ctx, false)
		if err != nil {
			return rep, err
		}
		rep.departures, rep.leaveSent = 0, 0
		for i := range after {
			rep.departures += after[i].departures - formed[i].departures
			rep.leaveSent += after[i].sent - formed[i].sent
		}
		if rep.departures >= uint64(cfg.n) && rep.leaveSent == prev || time.Now().After(deadline) {
			break
		}
		prev = rep.leaveSent
		time.Sleep(200 * time.Millisecond) // polling another process's counters; a batch waits up to a second
	}
	if rep.departures < uint64(cfg.n) {
		return rep, fmt.Errorf("the servers counted %d of %d departures", rep.departures, cfg.n)
	}
	return rep, nil
}
