//go:build unix

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/meshmpi/meshmpi/signaling"
)

// idleReport is what idle measured.
type idleReport struct {
	kind          string // the server's: child, embedded or url
	n, jobs       int
	joined, ready int
	joinTime      time.Duration // first join to last Ready
	errs          string
	before, after sample
	cpu           time.Duration // the server's CPU over the idle period
	idle          time.Duration // the idle period
	dropped       int           // ranks whose connection ended while idle
	departures    uint64        // the server's departures while idle
	debug         string
}

func (r *idleReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "mode: idle (server: %s)\n", r.kind)
	fmt.Fprintf(&b, "ranks: %d in %d jobs; joined %d, ready %d in %v; join errors: %s\n", r.n, r.jobs, r.joined, r.ready, r.joinTime.Round(time.Millisecond), r.errs)
	fmt.Fprintf(&b, "held: %v; dropped while idle: %d; server departures while idle: %d; server ranks at the end: %d\n", r.idle.Round(time.Millisecond), r.dropped, r.departures, r.after.ranks)
	if r.after.memOK && r.joined > 0 {
		n := float64(r.joined)
		heap := (float64(r.after.heap) - float64(r.before.heap)) / n
		stack := (float64(r.after.stack) - float64(r.before.stack)) / n
		when := "after a forced GC"
		if !r.after.gcd {
			when = "as /metrics last saw them, no forced GC"
		}
		fmt.Fprintf(&b, "server memory per joined connection (%s): heap %s + stacks %s = %s\n", when, kib(heap), kib(stack), kib(heap+stack))
		if r.after.rss > 0 {
			fmt.Fprintf(&b, "server RSS per joined connection: %s (RSS %.1f MiB, %.1f MiB before)\n",
				kib((float64(r.after.rss)-float64(r.before.rss))/n), float64(r.after.rss)/(1<<20), float64(r.before.rss)/(1<<20))
		}
		fmt.Fprintf(&b, "server goroutines per joined connection: %.2f\n", (float64(r.after.goroutines)-float64(r.before.goroutines))/n)
	} else {
		fmt.Fprintf(&b, "server memory: not measured (an embedded server shares this process)\n")
	}
	if r.after.cpuOK && r.idle > 0 {
		who := "server"
		if r.kind == serverEmbedded {
			who = "this process (server and clients)"
		}
		fmt.Fprintf(&b, "%s CPU while idle: %v over %v = %.2f%% of one core\n", who, r.cpu.Round(time.Millisecond), r.idle.Round(time.Millisecond), 100*r.cpu.Seconds()/r.idle.Seconds())
	}
	if r.debug != "" {
		fmt.Fprintf(&b, "server pprof: %s\n", r.debug)
	}
	return b.String()
}

// runIdle joins cfg.n ranks in jobs of cfg.jobSize through one server,
// holds them cfg.duration, and measures the server.
func runIdle(ctx context.Context, cfg config, stderr io.Writer) (*idleReport, error) {
	f, err := startFleet(ctx, cfg, 1, stderr)
	if err != nil {
		return nil, err
	}
	defer f.stop()
	s := f.servers[0]
	rep := &idleReport{kind: f.kind, n: cfg.n, debug: s.debug}
	if rep.before, err = s.probe(ctx, true); err != nil {
		return rep, err
	}
	// jobs of jobSize, the last one smaller; one open token each
	var tokens, jobs []string
	id := runID()
	for left := cfg.n; left > 0; left -= cfg.jobSize {
		job := fmt.Sprintf("idle-%s-%d", id, len(jobs))
		tok, err := signaling.Mint(f.secret, signaling.Claims{Job: job, Size: min(left, cfg.jobSize), Expires: expiry()})
		if err != nil {
			return rep, err
		}
		jobs, tokens = append(jobs, job), append(tokens, tok)
	}
	rep.jobs = len(jobs)
	jctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	d := newDialer(cfg.inflight)
	start := time.Now()
	ranks := d.joinAll(jctx, cfg.n, func(ctx context.Context, i int) (*signaling.Client, error) {
		j := i / cfg.jobSize
		return signaling.Dial(ctx, s.url, jobs[j], tokens[j], dialOptions(nil))
	})
	defer closeAll(ranks, cfg.inflight)
	for _, r := range ranks {
		if r != nil {
			rep.joined++
		}
	}
	var last time.Time
	rep.ready, last = waitReady(jctx, ranks)
	rep.joinTime, rep.errs = last.Sub(start), d.errs.String()
	if cfg.verbose {
		fmt.Fprintf(stderr, "signalload: %d joined, %d ready in %v\n", rep.joined, rep.ready, rep.joinTime)
	}
	if rep.ready < cfg.n {
		return rep, fmt.Errorf("%d of %d ranks ready (join errors: %s)", rep.ready, cfg.n, rep.errs)
	}
	t0, err := s.probe(ctx, false)
	if err != nil {
		return rep, err
	}
	began := time.Now()
	profiled := make(chan error, 1)
	if cfg.profile != "" && s.debug != "" {
		secs := max(1, int(cfg.duration.Seconds())-1)
		go func() {
			profiled <- saveProfile(ctx, s.debug+"profile?seconds="+strconv.Itoa(secs), filepath.Join(cfg.profile, "cpu.pprof"))
		}()
	} else {
		profiled <- nil
	}
	select {
	case <-time.After(cfg.duration):
	case <-ctx.Done():
		return rep, ctx.Err()
	}
	rep.idle = time.Since(began)
	if err := <-profiled; err != nil {
		return rep, err
	}
	if cfg.profile != "" && s.debug != "" {
		for _, p := range []string{"heap", "goroutine"} {
			if err := saveProfile(ctx, s.debug+p, filepath.Join(cfg.profile, p+".pprof")); err != nil {
				return rep, err
			}
		}
	}
	if rep.after, err = s.probe(ctx, true); err != nil {
		return rep, err
	}
	rep.cpu, rep.departures = rep.after.cpu-t0.cpu, rep.after.departures-t0.departures
	for _, r := range ranks {
		select {
		case <-r.done:
			rep.dropped++
		default:
		}
	}
	if rep.dropped > 0 || rep.departures > 0 {
		return rep, fmt.Errorf("%d ranks dropped, %d departures while idle", rep.dropped, rep.departures)
	}
	return rep, nil
}

// saveProfile saves the profile at u to file.
func saveProfile(ctx context.Context, u, file string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("profile: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("profile %s: %s", u, resp.Status)
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	out, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, resp.Body); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}
