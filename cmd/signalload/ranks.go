//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/meshmpi/meshmpi/signaling"
)

// dialOptions keep a lightweight rank's messages small: no host identity
// (a 1,000-rank job's Ready would carry 1,000 of them) and a short agent.
func dialOptions(rank *int) *signaling.DialOptions {
	return &signaling.DialOptions{Rank: rank, Host: "-", Agent: "signalload", Queue: 16}
}

// rank is one lightweight rank: its client, and a watcher that drains
// its messages and notes its Ready.
type rank struct {
	c       *signaling.Client
	ready   chan struct{} // closed at its Ready
	readyAt time.Time     // set before ready closes
	done    chan struct{} // closed when its messages end
}

func watch(c *signaling.Client) *rank {
	r := &rank{c: c, ready: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		seen := false
		for m := range c.Messages() {
			if _, ok := m.(*signaling.Ready); ok && !seen {
				seen = true
				r.readyAt = time.Now()
				close(r.ready)
			}
		}
	}()
	return r
}

// dialer joins ranks with at most inflight joins at once and counts the
// failures by kind.
type dialer struct {
	sem  chan struct{}
	errs errCount
}

func newDialer(inflight int) *dialer { return &dialer{sem: make(chan struct{}, inflight)} }

// joinAll joins n ranks, rank i through join(i), and returns those that
// joined (nil where rank i did not).
func (d *dialer) joinAll(ctx context.Context, n int, join func(ctx context.Context, i int) (*signaling.Client, error)) []*rank {
	ranks := make([]*rank, n)
	var wg sync.WaitGroup
	for i := range n {
		select {
		case d.sem <- struct{}{}:
		case <-ctx.Done():
			d.errs.add(ctx.Err())
			continue
		}
		wg.Add(1)
		go func() {
			defer func() { <-d.sem; wg.Done() }()
			c, err := join(ctx, i)
			if err != nil {
				d.errs.add(err)
				return
			}
			ranks[i] = watch(c)
		}()
	}
	wg.Wait()
	return ranks
}

// closeAll closes every rank, inflight at once, and waits for their
// watchers.
func closeAll(ranks []*rank, inflight int) {
	sem := make(chan struct{}, inflight)
	var wg sync.WaitGroup
	for _, r := range ranks {
		if r == nil {
			continue
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			_ = r.c.Close()
			<-r.done
		}()
	}
	wg.Wait()
}

// waitReady waits until every rank saw its Ready, or ctx ends; it
// returns how many did and the latest Ready.
func waitReady(ctx context.Context, ranks []*rank) (int, time.Time) {
	n, last := 0, time.Time{}
	for _, r := range ranks {
		if r == nil {
			continue
		}
		select {
		case <-r.ready:
			n++
			if r.readyAt.After(last) {
				last = r.readyAt
			}
		case <-r.done: // its connection ended first
		case <-ctx.Done():
			return n, last
		}
	}
	return n, last
}

// errCount counts errors by kind: the server's error code, a timeout,
// or the transport's, with one example each.
type errCount struct {
	mu      sync.Mutex
	n       int
	byKind  map[string]int
	example map[string]string
}

func (e *errCount) add(err error) {
	kind := "transport"
	var re *signaling.RemoteError
	switch {
	case errors.As(err, &re):
		kind = string(re.Code)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		kind = "timeout"
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.byKind == nil {
		e.byKind, e.example = make(map[string]int), make(map[string]string)
	}
	e.n++
	e.byKind[kind]++
	if _, ok := e.example[kind]; !ok {
		e.example[kind] = err.Error()
	}
}

func (e *errCount) total() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.n
}

func (e *errCount) String() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.n == 0 {
		return "none"
	}
	kinds := make([]string, 0, len(e.byKind))
	for k := range e.byKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var b strings.Builder
	for i, k := range kinds {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s %d (e.g. %s)", k, e.byKind[k], e.example[k])
	}
	return b.String()
}

// percentile is the p-th percentile (0 < p ≤ 100) of sorted ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	i := int(float64(len(ds))*p/100+0.5) - 1
	return ds[min(max(i, 0), len(ds)-1)]
}

func sortDurations(ds []time.Duration) { slices.Sort(ds) }

// runID tells this run's jobs from an earlier run's on the same servers.
func runID() string { return fmt.Sprintf("%x", time.Now().UnixNano()&0xffffffffff) }

// expiry is the tokens' expiry: past any run.
func expiry() int64 { return time.Now().Add(3 * time.Hour).Unix() }

func kib(b float64) string { return fmt.Sprintf("%.1f KiB", b/1024) }
