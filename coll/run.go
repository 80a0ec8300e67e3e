package coll

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/meshmpi/meshmpi/op"
)

// ErrMismatch means ranks called a collective with arguments that do not
// fit together (counts, root, op or algorithm): a message of the wrong size
// arrived.
var ErrMismatch = errors.New("collective arguments differ across ranks")

// Run is one execution of a Plan: its buffers, counters, tag and outcome.
// A persistent collective keeps one Run and Resets it at every start.
type Run struct {
	plan *Plan
	t    Transport
	rr   RecvReducer // t, when it can run fused receive-reduce steps itself
	// ch holds each transfer step's channel: its own when t is Channels
	// (and the plan small), else &direct. chFrom is the t they are for.
	ch     []Channel
	chFrom Transport
	direct directChannel
	tag    uint32
	bufs   [numBufs][]byte

	mu        sync.Mutex
	pending   []int32 // unmet dependencies per step
	ready     []int32 // issued by whoever drains
	issue     []int32 // the drainer's batch of transfers to start unlocked
	draining  bool
	inflight  int32 // steps issued and not complete
	left      int32 // steps not complete
	core      int32 // steps not complete that are not trailing (runGraph.trail)
	err       error
	ended     bool  // finish was called for this start (or none was made)
	abortNext error // an Abort while not active: fails the next start
	// abandoning: the transport was told of the error (Abandon) once
	abandoning bool

	finished atomic.Bool
	// settled: every step but the trailing ones has completed without
	// error (Settled). Written under mu, so a late writer never marks
	// the next start.
	settled atomic.Bool
	// parked: a waiter asked for Done since the start; only then does a
	// completion put a token in done, a channel operation under a lock
	// that the completing rank, often on another core, otherwise skips
	parked atomic.Bool
	done   chan struct{} // one token per completion a waiter asked for
	waker  Waker         // woken after every completion, e.g. Waitany's watchers
}

// Waker is told whenever a Run completes.
type Waker interface{ Wake() }

// NewRun binds plan to a transport and tag. Scratch is allocated here, once.
func NewRun(plan *Plan, t Transport, tag uint32, w Waker) *Run {
	// the counters and the two step lists share one allocation: a
	// completion touches all three, often from another rank's goroutine
	// on another core, and a small plan's fit in a cache line or two
	n := len(plan.Steps)
	state := make([]int32, 3*n)
	r := &Run{plan: plan, tag: tag, waker: w,
		pending: state[:n:n],
		ready:   state[n : n : 2*n],
		issue:   state[2*n : 2*n : 3*n],
		done:    make(chan struct{}, 1)}
	if plan.Scratch > 0 {
		r.bufs[BufScratch] = make([]byte, plan.Scratch)
	}
	r.bind(t)
	r.ended = true // not active: an Abort now fails the first start
	r.finished.Store(true)
	return r
}

// maxChannels bounds the transfer steps of a plan whose Runs keep
// channels: small collectives, whose latency the per-message pool traffic
// shows in; a large plan's Runs would hold many idle operations each.
const maxChannels = 64

// bind makes t the run's transport and gives each transfer step a
// channel: one of t's own if t makes them, else direct, which starts
// transfers on t. Channels t made earlier are kept.
func (r *Run) bind(t Transport) {
	r.t = t
	r.rr, _ = t.(RecvReducer)
	r.direct = directChannel{t, r.rr}
	if r.ch != nil && r.chFrom == t {
		return
	}
	r.Release()
	cs, own := t.(Channels)
	own = own && r.plan.transfers <= maxChannels
	if r.ch == nil {
		r.ch = make([]Channel, len(r.plan.Steps))
	}
	for i, s := range r.plan.Steps {
		switch {
		case !s.Kind.transfer():
		case own:
			r.ch[i] = cs.NewChannel()
		default:
			r.ch[i] = &r.direct
		}
	}
	r.chFrom = t
}

// Release gives back the channels the run's transport made for it; the
// run must not be active. A later Start makes new ones.
func (r *Run) Release() {
	for i, ch := range r.ch {
		if ch != nil && ch != Channel(&r.direct) {
			ch.Release()
		}
		r.ch[i] = nil
	}
	r.chFrom = nil
}

// directChannel starts transfers on a Transport, which takes an
// operation from its pool for each.
type directChannel struct {
	t  Transport
	rr RecvReducer
}

func (d *directChannel) Send(peer int, tag uint32, p []byte, c Completer, id int32) error {
	return d.t.Send(peer, tag, p, c, id)
}

func (d *directChannel) Recv(peer int, tag uint32, p []byte, c Completer, id int32) error {
	return d.t.Recv(peer, tag, p, c, id)
}

func (d *directChannel) RecvReduce(peer int, tag uint32, p []byte, o *op.Op, t op.Type, c Completer, id int32) error {
	return d.rr.RecvReduce(peer, tag, p, o, t, c, id)
}

func (d *directChannel) Release() {}

// Bind sets the caller's buffers for the next start. They must be at least
// as long as the plan needs.
func (r *Run) Bind(send, recv []byte) error {
	if len(send) < r.plan.Need[BufSend] || len(recv) < r.plan.Need[BufRecv] {
		return fmt.Errorf("%s needs %d-byte send and %d-byte receive buffers, got %d and %d",
			r.plan.Name, r.plan.Need[BufSend], r.plan.Need[BufRecv], len(send), len(recv))
	}
	r.bufs[BufSend], r.bufs[BufRecv] = send, recv
	return nil
}

// Plan returns the run's plan.
func (r *Run) Plan() *Plan { return r.plan }

// Done returns a channel that receives a token when the run completes; a
// token may be stale, so check Finished. A waiter that checks Finished
// first and then blocks on Done misses nothing: if the run completed in
// between, Done returns a closed channel.
func (r *Run) Done() <-chan struct{} {
	// finish swaps finished, then loads parked: one of the two sees the
	// other's write. A swap, not a store: a read-modify-write is a full
	// barrier everywhere, while a store-release then a load-acquire may be
	// reordered where arm64 is emulated (qemu-user on x86 let the load
	// pass the store, and a waiter slept through its completion)
	r.parked.Swap(true)
	if r.finished.Load() {
		return closedDone
	}
	return r.done
}

// closedDone is Done's answer once the run has completed.
var closedDone = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Finished reports whether the run is not active.
func (r *Run) Finished() bool { return r.finished.Load() }

// Err returns the outcome of the last completed start.
func (r *Run) Err() error { return r.err }

// Reset rearms the counters (MPIR_TSP_sched_reset); the run must not be active.
func (r *Run) Reset() {
	copy(r.pending, r.plan.run.ndeps)
	r.ready = r.ready[:0]
	r.inflight, r.left, r.err, r.ended, r.abandoning = 0, r.plan.run.live, nil, false, false
	r.core = r.plan.run.live - r.plan.run.ntrail
	r.settled.Store(false)
	if r.parked.Swap(false) { // only a parked waiter's completion leaves a token
		select {
		case <-r.done:
		default:
		}
	}
}

// Progress says how far an active run is, for a report on a rank that
// waits in it: its steps done and in all, and the peers (plan ranks) of
// its transfers in flight — receives waiting for a message, sends waiting
// for the receiver — each in step order.
func (r *Run) Progress() (done, total int, recvFrom, sendTo []int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	total = int(r.plan.run.live)
	done = total - int(r.left)
	for i, p := range r.pending {
		if p != stepIssued {
			continue
		}
		switch s := &r.plan.Steps[i]; s.Kind {
		case StepRecv, StepRecvReduce:
			recvFrom = append(recvFrom, int(s.Peer))
		case StepSend:
			sendTo = append(sendTo, int(s.Peer))
		}
	}
	return done, total, recvFrom, sendTo
}

// Start resets the run and issues its first steps. An empty plan completes
// at once.
func (r *Run) Start() error {
	if !r.finished.Load() {
		return errors.New("collective already active")
	}
	if r.chFrom == nil { // Released
		r.bind(r.t)
	}
	r.mu.Lock() // an Abort may come while the run is idle (see Abort)
	r.Reset()
	r.err, r.abortNext = r.abortNext, nil
	r.finished.Store(false)
	if r.left == 0 {
		r.ended = true
		r.mu.Unlock()
		r.finish()
		return nil
	}
	r.ready = append(r.ready, r.plan.run.roots...)
	r.drainLocked()
	return nil
}

// Complete implements Completer for the run's transfers.
func (r *Run) Complete(id int32, n int, err error) {
	s := &r.plan.Steps[id]
	if err == nil && (s.Kind == StepRecv || s.Kind == StepRecvReduce) && n != s.A.Len {
		err = fmt.Errorf("%s step %d: received %d bytes from rank %d, expected %d: %w", r.plan.Name, id, n, s.Peer, s.A.Len, ErrMismatch)
	}
	if err == nil && s.Kind == StepRecvReduce && r.rr == nil {
		// received into scratch: reduce here, on the completing goroutine
		// (the step owns B until it completes, as the reduce step did)
		if err = r.plan.Op.Reduce(r.plan.Type, r.ref(s.A), r.ref(s.B)); err != nil {
			err = fmt.Errorf("%s step %d: %w", r.plan.Name, id, err)
		}
	}
	r.mu.Lock()
	r.inflight--
	r.stepDone(id, err)
	r.drainLocked()
}

// A step's pending count, once it has none left, records where the step
// is (nothing decrements it after it is ready), so Progress can say what a
// run waits for without more state.
const (
	stepIssued = -1 // a transfer started and not complete
	stepDone   = -2
)

// stepDone records a completed step and readies its successors. Called
// with r.mu held.
func (r *Run) stepDone(id int32, err error) {
	r.pending[id] = stepDone
	r.left--
	if !r.plan.run.trailing(id) {
		r.core--
	}
	if err != nil && r.err == nil {
		r.err = err
	}
	g := &r.plan.run
	for _, s := range g.succ[g.off[id]:g.off[id+1]] {
		if r.pending[s]--; r.pending[s] == 0 {
			r.ready = append(r.ready, s)
		}
	}
}

// drainLocked issues ready steps until none is left; if another goroutine
// is already draining it leaves the work to it. Called with r.mu held;
// returns with it released. Local steps run under the lock; the ready
// transfers are taken as one batch and started without it, since their
// completion may come back inside the call: one unlock and relock per
// batch (a round's sends and receives) instead of per transfer.
func (r *Run) drainLocked() { r.drainWith(nil) }

// drainWith is drainLocked; with later non-nil, a withdrawal the drain
// starts (Transport.Abandon) is left in *later for the caller instead of
// run here (AbortHeld).
func (r *Run) drainWith(later *Abandonment) {
	if r.draining {
		r.mu.Unlock()
		return
	}
	r.draining = true
	for len(r.ready) > 0 && r.err == nil {
		for len(r.ready) > 0 && r.err == nil {
			id := r.ready[len(r.ready)-1]
			r.ready = r.ready[:len(r.ready)-1]
			s := &r.plan.Steps[id]
			switch s.Kind {
			case StepSend, StepRecv, StepRecvReduce:
				r.inflight++
				r.pending[id] = stepIssued
				r.issue = append(r.issue, id)
			case StepReduce:
				err := r.plan.Op.Reduce(r.plan.Type, r.ref(s.A), r.ref(s.B))
				if err != nil {
					err = fmt.Errorf("%s step %d: %w", r.plan.Name, id, err)
				}
				r.stepDone(id, err)
			case StepCopy:
				copy(r.ref(s.B), r.ref(s.A))
				r.stepDone(id, nil)
			default:
				r.stepDone(id, nil)
			}
		}
		if len(r.issue) == 0 {
			break
		}
		// only the drainer touches issue. Transfers start in the order
		// they left ready; one that completes inside its call readies its
		// successors for the next batch.
		r.mu.Unlock()
		failed := -1
		var ferr error
		for i, id := range r.issue {
			if ferr = r.start(id); ferr != nil {
				failed = i
				break
			}
		}
		r.mu.Lock()
		if failed >= 0 {
			// a transfer that did not start gets no completion, and after
			// an error nothing new is issued: the rest of the batch is not
			// in flight either
			r.inflight -= int32(len(r.issue) - failed)
			r.stepDone(r.issue[failed], ferr)
		}
		r.issue = r.issue[:0]
	}
	r.draining = false
	// after an error nothing new is issued, the transport withdraws the
	// transfers in flight, and the run ends when they have completed
	end := !r.ended && (r.left == 0 || r.err != nil && r.inflight == 0)
	r.ended = r.ended || end
	abandon := r.err != nil && !r.abandoning
	r.abandoning = r.abandoning || abandon
	// only trailing steps left: settled, marked under the lock (a Reset
	// of the next start, once the run has finished, is too)
	settle := !r.ended && r.err == nil && r.core == 0 && !r.settled.Load()
	if settle {
		r.settled.Swap(true) // a full barrier before parked's load (see Done)
	}
	// read under the lock: once the run ends its owner may recycle it
	err, t, tag, w := r.err, r.t, r.tag, r.waker
	r.mu.Unlock()
	if abandon {
		if later != nil {
			*later = Abandonment{t, tag, err}
		} else {
			t.Abandon(tag, err)
		}
	}
	if settle {
		// may be stale by now (the run finished and started again),
		// which Done's waiters and wakers allow
		r.tell(w)
	}
	if end {
		r.finish()
	}
}

// Settled reports whether the run has finished, or has only trailing
// steps left: agreement-token receives that nothing waits for (agree.go).
// A settled run has done everything the caller's buffers take part in,
// and its result so far is success; a trailing step may still fail it
// (the ranks disagree), which its Err then says once it has finished.
// A blocking collective returns once its run is settled and looks at the
// rest later, so a rank whose part needs no other rank's (a Bcast root)
// does not wait for the others to arrive.
func (r *Run) Settled() bool { return r.settled.Load() || r.finished.Load() }

// SettledDone is Done for a waiter of Settled.
func (r *Run) SettledDone() <-chan struct{} {
	r.parked.Swap(true)
	if r.Settled() {
		return closedDone
	}
	return r.done
}

// SetWaker makes w the run's waker for the rest of this start, unless it
// has ended already (false).
func (r *Run) SetWaker(w Waker) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return false
	}
	r.waker = w
	return true
}

// start starts transfer step id on its channel, without r.mu.
func (r *Run) start(id int32) error {
	s := &r.plan.Steps[id]
	ch := r.ch[id]
	var err error
	tag := r.tag
	if s.Sig != 0 { // a token of an intercommunicator: its role, not the call's signature
		tag = tag&SeqMask | uint32(s.Sig)
	}
	switch {
	case s.Kind == StepSend:
		err = ch.Send(int(s.Peer), tag, r.ref(s.A), r, id)
	case s.Kind == StepRecvReduce && r.rr != nil:
		err = ch.RecvReduce(int(s.Peer), tag, r.ref(s.B), r.plan.Op, r.plan.Type, r, id)
	default:
		err = ch.Recv(int(s.Peer), tag, r.ref(s.A), r, id)
	}
	if err != nil {
		return fmt.Errorf("%s step %d (%s rank %d): %w", r.plan.Name, id, s.Kind, s.Peer, err)
	}
	return nil
}

// Abort fails an active run with err (another rank reported that the
// ranks disagree on this collective): its pending transfers are withdrawn
// and it completes with err.
//
// On a run that is not active, Abort fails its next start instead: a
// persistent collective's notice may come between two starts (or before
// the first), and its run stays registered with its communicator all
// along. Runs that go back to a pool drop such an abort (PutRun).
//
// Abort reports whether it came too late for the last start: the run
// had completed without error.
func (r *Run) Abort(err error) (late bool) {
	if ended, late := r.abortLocked(err); ended {
		return late
	}
	r.drainLocked()
	return false
}

// abortLocked takes r.mu and fails the run with err: if it has ended,
// its next start (ended; late as Abort's), and r.mu is released; else
// now, and r.mu is held for the drain that withdraws its transfers.
func (r *Run) abortLocked(err error) (ended, late bool) {
	r.mu.Lock()
	if r.ended {
		late = r.err == nil
		if r.abortNext == nil {
			r.abortNext = err
		}
		r.mu.Unlock()
		return true, late
	}
	if r.err == nil {
		r.err = err
	}
	return false, false
}

// AbortHeld is Abort for a caller that holds a lock which the
// transport's withdrawal may need: withdrawing writes to links (a credit
// grant, a notice), a write may find its link lost, and a lost link tells
// the run's communicator, which fails its collectives under that same
// lock (a rank of examples/resilient deadlocked on itself so). The
// withdrawal, if the abort starts one, is returned for the caller to Run
// once it has let go; until then the run waits for its transfers as
// ever.
func (r *Run) AbortHeld(err error) (late bool, later Abandonment) {
	if ended, late := r.abortLocked(err); ended {
		return late, later
	}
	r.drainWith(&later)
	return false, later
}

// Abandonment is a run's withdrawal of its transfers (Transport.Abandon)
// that AbortHeld left to its caller. The zero value withdraws nothing.
// It holds the transport and tag, not the run, which may be recycled by
// the time it runs.
type Abandonment struct {
	t   Transport
	tag uint32
	err error
}

// Run withdraws the transfers, if there is anything to withdraw.
func (a Abandonment) Run() {
	if a.t != nil {
		a.t.Abandon(a.tag, a.err)
	}
}

func (r *Run) finish() {
	// once finished is visible the owner may recycle r (PutRun): read the
	// waker first
	w := r.waker
	if r.finished.Swap(true) {
		return
	}
	// parked may already be the next start's (the owner saw finished and
	// restarted): a token for it is stale, which Done's waiters allow
	r.tell(w)
}

// tell gives a parked waiter a token and wakes w, if any: the run
// completed or settled.
func (r *Run) tell(w Waker) {
	if r.parked.Load() {
		select {
		case r.done <- struct{}{}:
		default:
		}
	}
	if w != nil {
		w.Wake()
	}
}

func (r *Run) ref(x Ref) []byte { return r.bufs[x.Buf][x.Off : x.Off+x.Len : x.Off+x.Len] }

// GetRun returns an idle Run of p bound to t and tag, reusing one a
// previous call returned with PutRun: nonblocking collectives of a cached
// shape then allocate no schedule state.
func (p *Plan) GetRun(t Transport, tag uint32, w Waker) *Run {
	var r *Run
	if p.spare.Load() != nil {
		r = p.spare.Swap(nil)
	}
	if r == nil {
		p.poolMu.Lock()
		if n := len(p.pool); n > 0 {
			r = p.pool[n-1]
			p.pool = p.pool[:n-1]
		}
		p.poolMu.Unlock()
	}
	if r == nil {
		return NewRun(p, t, tag, w)
	}
	r.tag, r.waker = tag, w
	r.bind(t)
	return r
}

// PutRun gives back a finished Run from GetRun, dropping a pending abort
// as RunCache.Put does. It keeps nothing of the run's transport: plans are
// shared by communicators (and worlds).
func (p *Plan) PutRun(r *Run) {
	r.Release()
	r.bufs[BufSend], r.bufs[BufRecv], r.t, r.waker, r.abortNext = nil, nil, nil, nil, nil
	r.direct = directChannel{}
	if p.spare.CompareAndSwap(nil, r) {
		return
	}
	p.poolMu.Lock()
	if len(p.pool) < maxPooledRuns {
		p.pool = append(p.pool, r)
	}
	p.poolMu.Unlock()
}

// RunCache keeps a few idle Runs of a plan for one transport (a
// communicator's memo of the plan): they keep their channels from one
// call to the next, which a Run in the plan's pool, shared by every
// transport, cannot. A blocking call uses one at a time, but one whose
// run is left settled (Run.Settled) takes the next while it finishes.
// The zero value is ready.
type RunCache struct {
	spare [cachedRuns]atomic.Pointer[Run]
}

// cachedRuns is how many idle Runs a RunCache keeps.
const cachedRuns = 4

// Get is p.GetRun that takes a cached Run first; p is the plan the
// cache is for.
func (c *RunCache) Get(p *Plan, t Transport, tag uint32, w Waker) *Run {
	for i := range c.spare {
		if c.spare[i].Load() == nil {
			continue
		}
		if r := c.spare[i].Swap(nil); r != nil {
			r.tag, r.waker = tag, w
			r.bind(t)
			return r
		}
	}
	return p.GetRun(t, tag, w)
}

// Put gives back a finished Run from Get: to the cache if it has room,
// else to the plan's pool. Its owner no longer lets Abort reach it, so a
// pending abort is dropped.
func (c *RunCache) Put(r *Run) {
	r.bufs[BufSend], r.bufs[BufRecv], r.waker, r.abortNext = nil, nil, nil, nil
	for i := range c.spare {
		if c.spare[i].CompareAndSwap(nil, r) {
			return
		}
	}
	r.plan.PutRun(r)
}

// maxPooledRuns bounds the idle Runs a plan keeps.
const maxPooledRuns = 64
