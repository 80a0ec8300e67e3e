package meshmpi

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/meshmpi/meshmpi/peer"
)

// lazyLinksFrom is the world size from which Run wires its memory links
// on first use instead of up front. Below it every pair is wired at once:
// n(n-1)/2 pairs cost little there, and a pair wired up front sends
// eagerly up to the endpoint's full eager limit, where a lazily dialed
// one is held to peer.LazyFrame (the endpoint picks a message's protocol
// before the link exists). A variable, so tests can run small worlds
// lazily.
var lazyLinksFrom = 64

// memWorld is an in-process world whose memory links are made on first
// use: each rank's endpoint dials through a memDialer, which makes the
// pair's two ends once, attaches the far end to the remote's endpoint and
// returns the near one, so a 1,000-rank job that talks along a ring holds
// about 1,000 links, not half a million.
//
// With every link wired up front, a rank's end reached every other rank:
// closing it was how they all learned it failed. Here most ranks hold no
// link to it, so the world is the authority that tells them: a rank's
// self link tells the world its endpoint closed, and the world declares
// it failed (Endpoint.FailPeer) on every rank without a link to it; a
// rank with one learns from the link, in order behind the frames it
// still carries, and declares it itself (OnPeerFailed). Ranks that close
// as they finalize are not announced while no rank has failed: they all
// passed the final barrier, and announcing each to every other would
// cost n² calls.
type memWorld struct {
	frame int
	procs []*proc

	// the pairs made, by lo*n+hi: lo's end, hi's end; in shards, so
	// ranks that all dial at once (an Alltoall's first round) do not
	// queue on one lock
	shards [64]struct {
		mu    sync.Mutex
		pairs map[int][2]peer.Link
	}
	closed []atomic.Bool // the rank's endpoint closed: no new links to it

	// failed: some rank ended without finalizing; from then on every
	// rank that closes is announced, as its links would have told
	failed atomic.Bool
	// aborted: the whole world is closing; nothing to announce
	aborted atomic.Bool
}

// init makes w the world of procs, whose endpoints dial through w and
// have no self link yet.
func (w *memWorld) init(procs []*proc, frame int) error {
	w.frame, w.procs, w.closed = frame, procs, make([]atomic.Bool, len(procs))
	for i := range w.shards {
		w.shards[i].pairs = map[int][2]peer.Link{}
	}
	for i, p := range procs {
		// the self link stands for the endpoint: Close closes it
		if err := p.ep.Attach(i, &selfLink{Link: peer.NewLoopbackLink(frame), w: w, rank: i}); err != nil {
			return err
		}
		p.ep.OnPeerFailed(func(rank int, err error) {
			// in-process, a lost link is the remote's end: nobody else
			// will confirm it
			p.ep.FailPeer(rank, err)
		})
	}
	return nil
}

// pair returns the key of the pair of a and b and which end of it is a's.
func (w *memWorld) pair(a, b int) (key, end int) {
	if a < b {
		return a*len(w.procs) + b, 0
	}
	return b*len(w.procs) + a, 1
}

// memDialer is one rank's way into a memWorld.
type memDialer struct {
	w    *memWorld
	from int
}

// Dial makes the pair of from and to, or returns from's end of it if to
// dialed first: one link per pair, whichever end dials, both at once
// included (the endpoint takes the same link twice without fuss).
func (d *memDialer) Dial(_ context.Context, to int) (peer.Link, error) {
	w := d.w
	key, end := w.pair(d.from, to)
	sh := &w.shards[key%len(w.shards)]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if ends, ok := sh.pairs[key]; ok {
		return ends[end], nil
	}
	if w.closed[to].Load() {
		return nil, fmt.Errorf("link rank %d to rank %d: rank %d has ended: %w", d.from, to, to, ErrProcFailed)
	}
	a, b := peer.NewMemoryLinks(w.frame)
	ends := [2]peer.Link{a, b}
	// the far end is attached before the near one is returned
	if err := w.procs[to].ep.Attach(d.from, ends[1-end]); err != nil {
		return nil, fmt.Errorf("link rank %d to rank %d: %w", d.from, to, err)
	}
	sh.pairs[key] = ends
	return ends[end], nil
}

// links counts the pairs made so far.
func (w *memWorld) links() int {
	n := 0
	for i := range w.shards {
		sh := &w.shards[i]
		sh.mu.Lock()
		n += len(sh.pairs)
		sh.mu.Unlock()
	}
	return n
}

// ended takes note that rank's endpoint closed and, unless the world is
// aborting or the rank finalized in a world where nobody failed, tells
// every other rank: those without a link to it are declared it failed,
// and its end of every link it has is closed (again: a link made while
// its endpoint was closing would otherwise stay open), so the far ends
// learn it behind the frames they still carry.
func (w *memWorld) ended(rank int) {
	w.closed[rank].Store(true)
	p := w.procs[rank]
	if w.aborted.Load() || p.finalized.Load() && !w.failed.Load() {
		return
	}
	if !p.finalized.Load() {
		w.failed.Store(true)
	}
	err := peer.Failure(fmt.Sprintf("rank %d ended", rank), nil)
	for k := range w.procs {
		if k == rank {
			continue
		}
		key, end := w.pair(rank, k)
		sh := &w.shards[key%len(w.shards)]
		sh.mu.Lock()
		ends, ok := sh.pairs[key]
		sh.mu.Unlock()
		if ok {
			ends[end].Close()
		} else {
			w.procs[k].ep.FailPeer(rank, err)
		}
	}
}

// selfLink is a rank's link to itself that tells its world when the
// rank's endpoint closes it.
type selfLink struct {
	peer.Link
	w    *memWorld
	rank int
	once atomic.Bool
}

func (l *selfLink) Close() error {
	err := l.Link.Close()
	if !l.once.Swap(true) {
		l.w.ended(l.rank)
	}
	return err
}
