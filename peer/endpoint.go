package peer

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// DefaultEagerLimit is the largest message sent eagerly unless configured
// otherwise; each link lowers it to what fits one frame.
const DefaultEagerLimit = 64 << 10

// Dialer connects an endpoint to a rank on demand: links connect lazily, a
// pair on its first message, so a job with sparse traffic does not pay for
// N(N-1)/2 connections. The endpoint calls Dial from a goroutine of its
// own, once per rank, and queues that rank's messages until it returns.
// The Dialer resolves glare: if the rank is connecting to this endpoint at
// the same time (and Attaches its link here first), Dial returns that same
// link. ctx ends when the endpoint closes.
type Dialer interface {
	Dial(ctx context.Context, rank int) (Link, error)
}

// LazyFrame is the smallest frame a lazily connected link must carry: the
// endpoint picks eager or rendezvous before the link exists, so eager
// messages of a connecting rank are limited to what every link (a browser's
// data channel included) accepts.
const LazyFrame = 16 << 10

// Config describes an endpoint.
type Config struct {
	Rank, Size int // this endpoint's world rank and the world's size
	// Dialer connects to ranks with no link on their first message; nil
	// means every link is attached up front and a rank without one is
	// unreachable.
	Dialer Dialer
	// EagerLimit is the largest message, in bytes, sent without a
	// rendezvous; 0 means DefaultEagerLimit, a negative value sends every
	// message by rendezvous. An unexpected message buffers at most this
	// much at the receiver.
	EagerLimit int
	// UnexpectedLimit bounds, in bytes, the unexpected eager messages the
	// endpoint holds (payload buffers and queue entries): each peer gets
	// an equal share as eager credit (credit.go), and a sender past its
	// share sends by rendezvous. 0 means DefaultUnexpectedLimit. A share
	// is never below InitialCredit, so the bound is at least that much per
	// rank. A quarter of it bounds the idle buffers kept for reuse.
	UnexpectedLimit int64
	// LinkUnexpectedLimit caps one peer's share of UnexpectedLimit; 0
	// means no cap beyond the equal share.
	LinkUnexpectedLimit int64
}

// Endpoint is one rank's point-to-point engine: MPI matching over a posted
// receive queue and an unexpected message queue (MPI-4.1 §3.5, non-overtaking
// per source and context), the eager and rendezvous protocols, and one Link
// per peer rank. It is safe for concurrent use.
type Endpoint struct {
	rank, size int
	eagerLimit int
	conns      []atomic.Pointer[conn]
	dialer     Dialer
	dialCtx    context.Context
	stopDials  context.CancelFunc

	mu        sync.Mutex // matching state below
	posted    postedQueue
	unexp     unexpQueue
	slots     []*Op
	slotGen   []uint32
	freeSlots []uint32
	closed    error
	// shut is set with closed, under mu: sends check it without the lock
	shut atomic.Bool
	// unexpected-queue accounting (credit.go): the limits, the credit
	// held by unexpected eager messages and its peak, and the bound on
	// one peer's unexpected rendezvous announcements
	unexpLimit, linkLimit int64
	unexpBytes, unexpPeak int64
	rtsLimit              int
	slotLimit             int                  // maxSlots; lower in tests
	msgs                  []*Message           // idle unexpected-queue entries
	bufs                  [bufClasses][][]byte // idle unexpected payloads by size class
	poolBytes             int64                // bytes in bufs
	poolLimit             int64                // bound on poolBytes

	// spare holds a few idle Ops outside poolMu: a collective's transfers
	// take and return an Op per message, and one atomic swap costs less
	// than a lock and an unlock (on memory links the return often happens
	// on the peer's goroutine, so the lock's cache line would bounce too).
	spare  [spareOps]atomic.Pointer[Op]
	poolMu sync.Mutex
	ops    []*Op

	// pollers counts goroutines of this rank in a wait loop that calls
	// Poll: while there is one, memory links queue small frames for it.
	pollers atomic.Int32
	// polls holds the links a waiting goroutine polls itself
	// (same-host shared memory: poll.go); Poll and SpinPoll poll them.
	polls pollSet

	nwatch   atomic.Int32
	watchMu  sync.Mutex
	watchers []chan struct{}

	hookMu    sync.Mutex
	hooks     []func(rank int, err error) // OnPeerFailed
	declHooks []func(rank int, err error) // OnPeerDeclared
}

// NewEndpoint returns an endpoint with no links attached.
func NewEndpoint(cfg Config) (*Endpoint, error) {
	if cfg.Size < 1 || cfg.Rank < 0 || cfg.Rank >= cfg.Size {
		return nil, fmt.Errorf("peer: rank %d of a world of %d", cfg.Rank, cfg.Size)
	}
	if cfg.EagerLimit == 0 {
		cfg.EagerLimit = DefaultEagerLimit
	}
	if cfg.UnexpectedLimit < 0 || cfg.LinkUnexpectedLimit < 0 {
		return nil, fmt.Errorf("peer: unexpected-message limits %d and %d", cfg.UnexpectedLimit, cfg.LinkUnexpectedLimit)
	}
	if cfg.UnexpectedLimit == 0 {
		cfg.UnexpectedLimit = DefaultUnexpectedLimit
	}
	if cfg.LinkUnexpectedLimit == 0 {
		cfg.LinkUnexpectedLimit = cfg.UnexpectedLimit
	}
	e := &Endpoint{rank: cfg.Rank, size: cfg.Size, eagerLimit: cfg.EagerLimit,
		conns: make([]atomic.Pointer[conn], cfg.Size), dialer: cfg.Dialer,
		unexpLimit: cfg.UnexpectedLimit, linkLimit: cfg.LinkUnexpectedLimit, rtsLimit: maxSlots, slotLimit: maxSlots,
		poolLimit: cfg.UnexpectedLimit / 4}
	e.dialCtx, e.stopDials = context.WithCancel(context.Background())
	return e, nil
}

// Rank returns the endpoint's world rank.
func (e *Endpoint) Rank() int { return e.rank }

// Size returns the world's size.
func (e *Endpoint) Size() int { return e.size }

// Attach makes l the link to rank, binding it to the endpoint. A rank being
// dialed lazily takes l as its link (the remote connected first).
func (e *Endpoint) Attach(rank int, l Link) error {
	if rank < 0 || rank >= e.size {
		return fmt.Errorf("peer: attach rank %d of %d", rank, e.size)
	}
	if l.MaxFrame() <= HeaderLen {
		return fmt.Errorf("peer: link to rank %d carries %d-byte frames, need more than %d", rank, l.MaxFrame(), HeaderLen)
	}
	c := &conn{ep: e, rank: rank, link: l, maxData: l.MaxFrame() - HeaderLen}
	c.eagerMax = min(e.eagerLimit, c.maxData)
	c.credit.Store(InitialCredit)
	if e.conns[rank].CompareAndSwap(nil, c) {
		l.Bind(c)
		return nil
	}
	return e.conns[rank].Load().setLink(l)
}

// conn returns the conn of rank, dialing it if there is none and the
// endpoint has a Dialer; nil if the rank is unreachable.
func (e *Endpoint) conn(rank int) *conn {
	if c := e.conns[rank].Load(); c != nil || e.dialer == nil {
		return c
	}
	// a connecting conn: writes wait (blocked) until setLink
	c := e.newLinklessConn(rank)
	if !e.conns[rank].CompareAndSwap(nil, c) {
		return e.conns[rank].Load()
	}
	if e.shut.Load() {
		// Close sets shut and then fails the conns it finds, so one made
		// since fails here instead of dialing (an in-process world's
		// dialer links at once: a send to a rank of an aborted world went
		// through)
		c.fail(e.closeCause())
		return c
	}
	go func() {
		l, err := e.dialer.Dial(e.dialCtx, rank)
		if err == nil {
			if err = c.setLink(l); err != nil {
				l.Close()
			}
		}
		if err != nil {
			c.fail(Failure(fmt.Sprintf("connect to rank %d", rank), err))
		}
	}()
	return c
}

// closeCause is what Close was given, once shut is set.
func (e *Endpoint) closeCause() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closed
}

// newLinklessConn returns a conn for rank with no link yet: blocked, so
// that sends queue until setLink.
func (e *Endpoint) newLinklessConn(rank int) *conn {
	c := &conn{ep: e, rank: rank, eagerMax: min(e.eagerLimit, LazyFrame-HeaderLen)}
	c.credit.Store(InitialCredit)
	c.blocked.Store(true)
	return c
}

// unreachable reports whether operations with rank must fail at once: its
// link failed, or it has none and none can be dialed.
func (e *Endpoint) unreachable(rank int) bool {
	c := e.conns[rank].Load()
	return c == nil && e.dialer == nil || c != nil && c.dead.Load()
}

// Lost reports whether rank's connection failed (its link was lost or it
// was declared failed): nothing more arrives from it.
func (e *Endpoint) Lost(rank int) bool {
	if rank < 0 || rank >= e.size || rank == e.rank {
		return false
	}
	c := e.conns[rank].Load()
	return c != nil && c.dead.Load()
}

// FailPeer declares rank lost (a departure the signaling server announced,
// say): every pending operation involving it completes with err, later ones
// fail with it, and its link, if any, closes. A rank with no link yet is
// never dialed.
func (e *Endpoint) FailPeer(rank int, err error) {
	if rank < 0 || rank >= e.size || rank == e.rank {
		return
	}
	c := e.conns[rank].Load()
	if c == nil {
		c = e.newLinklessConn(rank)
		if !e.conns[rank].CompareAndSwap(nil, c) {
			c = e.conns[rank].Load()
		}
	}
	c.fail(err)
	c.closeLink()
	e.mu.Lock()
	local := e.closed != nil
	e.mu.Unlock()
	if !local {
		e.declare(rank, err)
	}
}

// LinkPath reports how the link to rank reaches it; false if rank has no
// link (yet), or its link cannot say.
func (e *Endpoint) LinkPath(rank int) (Path, bool) {
	if rank < 0 || rank >= e.size || rank == e.rank {
		return Path{}, false
	}
	c := e.conns[rank].Load()
	if c == nil {
		return Path{}, false
	}
	c.mu.Lock()
	l := c.link
	c.mu.Unlock()
	pr, ok := l.(PathReporter)
	if !ok {
		return Path{}, false
	}
	return pr.Path(), true
}

// Links counts the ranks other than this one that have a link (connected,
// live or since lost): with lazy links, the peer connections a job opened.
func (e *Endpoint) Links() int {
	n := 0
	for i := range e.conns {
		if c := e.conns[i].Load(); i != e.rank && c != nil && c.hasLink() {
			n++
		}
	}
	return n
}

// Linger waits until every peer of ranks that has a live link closes
// it, or ctx ends. A rank whose last messages may still be in flight
// calls it before Close, so closing does not cut them off: the peers close
// once they have received everything.
func (e *Endpoint) Linger(ctx context.Context, ranks []int) error {
	ch := make(chan struct{}, 1)
	e.Watch(ch) // a lost peer wakes the watchers (peerFailed)
	defer e.Unwatch(ch)
	for {
		live := false
		for _, i := range ranks {
			if c := e.conns[i].Load(); i != e.rank && c != nil && c.hasLink() && !c.dead.Load() {
				live = true
				break
			}
		}
		if !live {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// Polling tells the endpoint that a goroutine of this rank enters (on)
// or leaves a stretch in the library during which it calls Poll often,
// as in-process ranks wait. Meanwhile the rank's memory links queue small
// frames for it instead of handling them on the writer's goroutine, so
// each rank's matching and schedules run on its own core. Leaving hands
// over what was queued; every on must be followed by an off, and a
// goroutine must not park in between.
func (e *Endpoint) Polling(on bool) {
	if on {
		if e.pollers.Add(1) == 1 {
			e.polls.pollersChanged(true)
		}
		return
	}
	e.leave(false)
}

// leave ends a poller's stretch; lazy leaves the readers aside for a
// while (pollSet.left), else the last poller re-arms them.
func (e *Endpoint) leave(lazy bool) {
	if e.pollers.Add(-1) == 0 {
		if lazy {
			e.polls.eager.Store(false)
			e.polls.left.Add(1)
		} else {
			e.polls.eager.Store(true)
			e.polls.pollersChanged(false)
		}
	}
	e.Poll()
}

// Poll hands this rank the frames its memory links queued while it
// polled, and those its polled links (poll.go) hold. Links of other
// kinds deliver by themselves.
func (e *Endpoint) Poll() {
	e.polls.poll()
	for i := range e.conns {
		if c := e.conns[i].Load(); c != nil {
			if l := c.inbox.Load(); l != nil && l.queued.Load() != 0 {
				l.drain(c)
			}
		}
	}
}

// Close shuts the endpoint down: every link closes, every pending operation
// completes with err (ErrClosed if nil), and later operations fail with it.
func (e *Endpoint) Close(err error) {
	if err == nil {
		err = ErrClosed
	}
	e.mu.Lock()
	if e.closed != nil {
		e.mu.Unlock()
		return
	}
	e.closed = err
	e.shut.Store(true)
	e.mu.Unlock()
	e.stopDials()
	for i := range e.conns {
		if c := e.conns[i].Load(); c != nil {
			c.fail(err)
			c.closeLink()
		}
	}
	e.mu.Lock()
	var failed opList
	for op := e.posted.pop(); op != nil; op = e.posted.pop() {
		op.inPosted = false
		failed.push(op)
	}
	for m := e.unexp.head(); m != nil; m = e.unexp.head() {
		e.unexp.remove(m)
	}
	e.mu.Unlock()
	for op := failed.pop(); op != nil; op = failed.pop() {
		e.complete(op, err)
	}
	e.wake()
}
