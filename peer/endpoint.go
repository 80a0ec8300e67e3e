package peer

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/meshmpi/meshmpi/op"
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
	posted    opList
	unexp     msgList
	slots     []*Op
	slotGen   []uint32
	freeSlots []uint32
	closed    error
	msgs      []*Message           // idle unexpected-queue entries
	bufs      [bufClasses][][]byte // idle unexpected payloads by size class

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

	nwatch   atomic.Int32
	watchMu  sync.Mutex
	watchers []chan struct{}
}

// NewEndpoint returns an endpoint with no links attached.
func NewEndpoint(cfg Config) (*Endpoint, error) {
	if cfg.Size < 1 || cfg.Rank < 0 || cfg.Rank >= cfg.Size {
		return nil, fmt.Errorf("peer: rank %d of a world of %d", cfg.Rank, cfg.Size)
	}
	if cfg.EagerLimit == 0 {
		cfg.EagerLimit = DefaultEagerLimit
	}
	e := &Endpoint{rank: cfg.Rank, size: cfg.Size, eagerLimit: cfg.EagerLimit,
		conns: make([]atomic.Pointer[conn], cfg.Size), dialer: cfg.Dialer}
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
	go func() {
		l, err := e.dialer.Dial(e.dialCtx, rank)
		if err == nil {
			if err = c.setLink(l); err != nil {
				l.Close()
			}
		}
		if err != nil {
			c.fail(fmt.Errorf("connect to rank %d: %w: %w", rank, ErrProcFailed, err))
		}
	}()
	return c
}

// newLinklessConn returns a conn for rank with no link yet: blocked, so
// that sends queue until setLink.
func (e *Endpoint) newLinklessConn(rank int) *conn {
	c := &conn{ep: e, rank: rank, eagerMax: min(e.eagerLimit, LazyFrame-HeaderLen)}
	c.blocked.Store(true)
	return c
}

// unreachable reports whether operations with rank must fail at once: its
// link failed, or it has none and none can be dialed.
func (e *Endpoint) unreachable(rank int) bool {
	c := e.conns[rank].Load()
	return c == nil && e.dialer == nil || c != nil && c.dead.Load()
}

// spareOps is how many idle Ops an endpoint keeps outside its locked
// pool: enough for the transfers a small collective has in flight.
const spareOps = 4

// GetOp returns an idle Op from the pool.
func (e *Endpoint) GetOp() *Op {
	for i := range e.spare {
		if e.spare[i].Load() != nil {
			if op := e.spare[i].Swap(nil); op != nil {
				return op
			}
		}
	}
	e.poolMu.Lock()
	if n := len(e.ops); n > 0 {
		op := e.ops[n-1]
		e.ops = e.ops[:n-1]
		e.poolMu.Unlock()
		return op
	}
	e.poolMu.Unlock()
	return &Op{ep: e, done: make(chan struct{}, 1)}
}

// PutOp returns an Op that is not active to the pool.
func (e *Endpoint) PutOp(op *Op) {
	op.buf, op.completer, op.res, op.auto = nil, nil, Result{}, false
	op.state.Store(opIdle)
	for i := range e.spare {
		if e.spare[i].Load() == nil && e.spare[i].CompareAndSwap(nil, op) {
			return
		}
	}
	e.poolMu.Lock()
	e.ops = append(e.ops, op)
	e.poolMu.Unlock()
}

// Detach gives up the caller's interest in an active op (MPI_Request_free on
// an active request): the op runs to completion and then returns to the pool.
func (e *Endpoint) Detach(op *Op) {
	for {
		switch op.state.Load() {
		case opActive:
			if op.state.CompareAndSwap(opActive, opDetached) {
				return
			}
		case opCompleting:
			// the completer is between its CAS and publishing; it is brief
		default:
			e.PutOp(op)
			return
		}
	}
}

func (e *Endpoint) checkPeer(rank int, any bool) error {
	if rank >= 0 && rank < e.size || any && rank == AnySource {
		return nil
	}
	return fmt.Errorf("peer: rank %d outside a world of %d", rank, e.size)
}

// StartSend starts sending buf to world rank dst. It returns an error only
// for arguments the endpoint cannot accept; a send that fails later (lost
// peer) completes op with the error.
func (e *Endpoint) StartSend(op *Op, mode Mode, dst int, ctx uint32, tag int32, buf []byte) error {
	if err := e.checkPeer(dst, false); err != nil {
		return err
	}
	if op.Active() {
		return errors.New("peer: op already active")
	}
	op.arm(opSend, dst, ctx, tag, buf)
	op.mode = mode
	c := e.conn(dst)
	if c == nil {
		e.complete(op, fmt.Errorf("no link to rank %d: %w", dst, ErrProcFailed))
		return nil
	}
	op.phase = phaseEager
	// an empty message is eager even when every other one is not: a
	// rendezvous for it would only add a CTS the receiver must still send
	// after its receive completed (and perhaps after it closed its links)
	if mode == Synchronous || len(buf) > max(c.eagerMax, 0) {
		op.phase = phaseRTS
		e.mu.Lock()
		e.register(op)
		e.mu.Unlock()
	}
	c.enqueue(op, &c.queue)
	return nil
}

// SendNotify starts a send on an Op of the endpoint's own, which reports
// its completion to c.Complete(id, …) and goes back to the pool: the
// collective engine's transfers, with nothing for the caller to release.
func (e *Endpoint) SendNotify(mode Mode, dst int, ctx uint32, tag int32, buf []byte, c Completer, id int32) error {
	op := e.GetOp()
	op.completer, op.cid, op.auto = c, id, true
	if err := e.StartSend(op, mode, dst, ctx, tag, buf); err != nil {
		e.PutOp(op)
		return err
	}
	return nil
}

// RecvNotify is SendNotify for a receive. It matches messages whose tag
// agrees with tag in the bits of mask (-1: all bits); a match that differs
// in the other bits fails with ErrTagMismatch. The collective engine keeps
// a signature of each call's arguments there, so ranks that disagree see an
// error instead of taking each other's data.
func (e *Endpoint) RecvNotify(src int, ctx uint32, tag, mask int32, buf []byte, c Completer, id int32) error {
	op := e.GetOp()
	op.completer, op.cid, op.auto = c, id, true
	if err := e.startRecv(op, src, ctx, tag, mask, buf, accumulator{}); err != nil {
		e.PutOp(op)
		return err
	}
	return nil
}

// StartRecvMasked starts a receive on op that matches tags as
// RecvNotify's does, in the bits of mask: a collective's transfer on an
// Op its schedule keeps from one start to the next.
func (e *Endpoint) StartRecvMasked(op *Op, src int, ctx uint32, tag, mask int32, buf []byte) error {
	return e.startRecv(op, src, ctx, tag, mask, buf, accumulator{})
}

// StartRecvAccumulateMasked is StartRecvMasked for an accumulating
// receive (StartRecvAccumulate).
func (e *Endpoint) StartRecvAccumulateMasked(o *Op, src int, ctx uint32, tag, mask int32, buf []byte, red *op.Op, t op.Type) error {
	acc, err := newAccumulator(buf, red, t)
	if err != nil {
		return err
	}
	return e.startRecv(o, src, ctx, tag, mask, buf, acc)
}

// StartRecv starts a receive into buf from world rank src (or AnySource)
// with tag (or AnyTag) in context ctx.
func (e *Endpoint) StartRecv(op *Op, src int, ctx uint32, tag int32, buf []byte) error {
	return e.startRecv(op, src, ctx, tag, -1, buf, accumulator{})
}

func (e *Endpoint) startRecv(op *Op, src int, ctx uint32, tag, mask int32, buf []byte, acc accumulator) error {
	if err := e.checkPeer(src, true); err != nil {
		return err
	}
	if op.Active() {
		return errors.New("peer: op already active")
	}
	op.arm(opRecv, src, ctx, tag, buf)
	op.mask, op.acc = mask, acc
	e.mu.Lock()
	if m := e.unexp.match(ctx, src, tag, op.mask); m != nil {
		e.unexp.remove(m)
		e.receiveLocked(op, m) // unlocks
		return nil
	}
	var err error
	switch {
	case e.closed != nil:
		err = e.closed
	case src != AnySource && e.unreachable(src):
		err = fmt.Errorf("receive from rank %d: %w", src, ErrProcFailed)
	default:
		op.inPosted = true
		e.posted.push(op)
	}
	e.mu.Unlock()
	if err != nil {
		e.complete(op, err)
	}
	return nil
}

// CancelTagged completes with err every pending operation in context ctx
// whose tag agrees with tag in the bits of mask: posted receives, matched
// receives still waiting for data, and sends still waiting for their
// receiver to clear them. Sends already moving data finish. A failed
// collective withdraws its transfers this way, so nothing waits on a
// schedule that will not run. Unexpected messages with such tags are
// dropped too: nothing will receive them, and a persistent collective,
// whose tag is the same at every start, must not take them later.
func (e *Endpoint) CancelTagged(ctx uint32, tag, mask int32, err error) {
	var failed opList
	e.mu.Lock()
	for m := e.unexp.head; m != nil; {
		next := m.next
		if m.ctx == ctx && (m.tag^tag)&mask == 0 {
			e.unexp.remove(m)
			e.putMessageLocked(m)
		}
		m = next
	}
	for op := e.posted.head; op != nil; {
		next := op.next
		if op.ctx == ctx && (op.tag^tag)&mask == 0 {
			e.posted.remove(op)
			op.inPosted = false
			failed.push(op)
		}
		op = next
	}
	for _, op := range e.slots {
		if op == nil || op.ctx != ctx || (op.tag^tag)&mask != 0 {
			continue
		}
		switch {
		case op.copying:
			op.abandon = err // its data is being copied: the copier fails it after
		case op.kind == opRecv, op.phase == phaseWaitCTS:
			// a receive waiting for data, a send waiting for its CTS: what
			// the peer still sends for them is dropped as stale
			e.unregister(op)
			failed.push(op)
		case op.abandon == nil:
			op.abandon = err // its RTS is still queued: the writer drops it
		}
	}
	e.mu.Unlock()
	for op := failed.pop(); op != nil; op = failed.pop() {
		e.complete(op, err)
	}
}

// Envelope describes a message found by a probe.
type Envelope struct {
	Source int // world rank
	Tag    int
	Len    int // bytes
}

// Iprobe looks for a message that a receive with these arguments would match,
// without receiving it (MPI_Iprobe).
func (e *Endpoint) Iprobe(src int, ctx uint32, tag int32) (Envelope, bool, error) {
	if err := e.checkPeer(src, true); err != nil {
		return Envelope{}, false, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if m := e.unexp.match(ctx, src, tag, -1); m != nil {
		return m.envelope(), true, nil
	}
	if e.closed != nil {
		return Envelope{}, false, e.closed
	}
	if src != AnySource && e.unreachable(src) {
		return Envelope{}, false, fmt.Errorf("probe rank %d: %w", src, ErrProcFailed)
	}
	return Envelope{}, false, nil
}

// Improbe is Iprobe that also removes the message from matching, so only
// StartMrecv can receive it (MPI_Improbe).
func (e *Endpoint) Improbe(src int, ctx uint32, tag int32) (*Message, error) {
	if err := e.checkPeer(src, true); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if m := e.unexp.match(ctx, src, tag, -1); m != nil {
		e.unexp.remove(m)
		return m, nil
	}
	if e.closed != nil {
		return nil, e.closed
	}
	if src != AnySource && e.unreachable(src) {
		return nil, fmt.Errorf("probe rank %d: %w", src, ErrProcFailed)
	}
	return nil, nil
}

// StartMrecv receives a message taken by Improbe. m must not be used after.
func (e *Endpoint) StartMrecv(op *Op, m *Message, buf []byte) error {
	if op.Active() {
		return errors.New("peer: op already active")
	}
	op.arm(opRecv, m.src, m.ctx, m.tag, buf)
	e.mu.Lock()
	e.receiveLocked(op, m)
	return nil
}

// Cancel cancels a receive that has not matched yet (MPI_Cancel) and reports
// whether it did; a cancelled op completes with Result.Cancelled set.
func (e *Endpoint) Cancel(op *Op) bool {
	e.mu.Lock()
	if !op.inPosted {
		e.mu.Unlock()
		return false
	}
	e.posted.remove(op)
	op.inPosted = false
	e.mu.Unlock()
	op.res.Cancelled = true
	e.complete(op, nil)
	return true
}

// receiveLocked delivers unexpected message m into op. Called with e.mu
// held; returns with it released.
func (e *Endpoint) receiveLocked(op *Op, m *Message) {
	e.deliverLocked(op, m.kind, m.src, m.tag, m.total, m.seq, m.data, m)
}

// deliverLocked gives a matched message to receive op: an eager payload is
// copied, a rendezvous is answered with a CTS. A message whose tag differs
// from the op's in the bits the op's mask ignores is refused (the sender's
// rendezvous is released with a zero-byte CTS) and fails the receive.
// Called with e.mu held; returns with it released. payload is not used
// after return. m, if not nil, is the unexpected message payload came from:
// it goes back to the pool before the lock is released.
func (e *Endpoint) deliverLocked(op *Op, kind Kind, src int, tag int32, total int, seq uint32, payload []byte, m *Message) {
	op.res.Source, op.res.Tag, op.res.Total = src, int(tag), total
	refuse := op.tag != AnyTag && tag != op.tag
	if kind == KindEager {
		n := 0
		if !refuse {
			n = op.land(0, len(op.buf), payload)
		}
		if m != nil {
			e.putMessageLocked(m)
		}
		e.mu.Unlock()
		e.finishRecv(op, n)
		return
	}
	op.want = min(len(op.buf), total)
	if refuse {
		op.want = 0
	}
	if op.want > 0 {
		e.register(op)
	}
	if m != nil {
		e.putMessageLocked(m)
	}
	// read under the lock: once registered, op may be withdrawn
	// (CancelTagged), completed and reused before the CTS is queued
	slot, want := op.slot, op.want
	e.mu.Unlock()
	e.clearToSend(e.conns[src].Load(), op, slot, want, seq)
}

// clearToSend answers a matched RTS for op, whose slot is registered if
// it wants data; op is only touched when it wants none (it is then
// neither posted nor registered, so no one else can complete it).
func (e *Endpoint) clearToSend(c *conn, op *Op, slot uint32, want int, seq uint32) {
	cts := e.GetOp()
	cts.kind, cts.seq, cts.rid, cts.want = opCTS, seq, slot, want
	c.enqueue(cts, &c.ctrl)
	if want == 0 {
		e.finishRecv(op, 0)
	}
}

func (e *Endpoint) finishRecv(op *Op, n int) {
	var err error
	if op.tag != AnyTag && int32(op.res.Tag) != op.tag {
		err = fmt.Errorf("message from rank %d tagged %#x where %#x was expected: %w", op.res.Source, uint32(op.res.Tag), uint32(op.tag), ErrTagMismatch)
	} else if op.res.Total > n {
		err = fmt.Errorf("%d-byte message from rank %d tag %d into a %d-byte buffer: %w",
			op.res.Total, op.res.Source, op.res.Tag, len(op.buf), ErrTruncate)
	}
	op.res.N = n
	e.complete(op, err)
}

// arrive matches an eager or RTS frame from c against the posted receives,
// or queues it as unexpected.
func (e *Endpoint) arrive(c *conn, h *Header, payload []byte) {
	e.mu.Lock()
	if op := e.posted.match(h.Context, c.rank, h.Tag); op != nil {
		e.posted.remove(op)
		op.inPosted = false
		e.deliverLocked(op, h.Kind, c.rank, h.Tag, int(h.Total), h.Seq, payload, nil)
		return
	}
	m := e.getMessageLocked(len(payload))
	m.kind, m.ctx, m.src, m.tag, m.total, m.seq = h.Kind, h.Context, c.rank, h.Tag, int(h.Total), h.Seq
	m.data = m.data[:copy(m.data[:len(payload)], payload)]
	e.unexp.push(m)
	e.mu.Unlock()
	e.wake()
}

// ctsArrived starts the data phase of the send that RTS seq announced.
func (e *Endpoint) ctsArrived(c *conn, h *Header) error {
	e.mu.Lock()
	op := e.lookup(h.Seq)
	if op == nil && e.stale(h.Seq) {
		e.mu.Unlock()
		return nil // for a send withdrawn by CancelTagged
	}
	if op == nil || op.kind != opSend || op.peer != c.rank || op.phase != phaseWaitCTS || h.Total > uint64(len(op.buf)) {
		e.mu.Unlock()
		return fmt.Errorf("%w: cts for unknown send %#x", ErrFrame, h.Seq)
	}
	e.unregister(op)
	e.mu.Unlock()
	if h.Total == 0 {
		e.complete(op, nil)
		return nil
	}
	op.phase, op.rid, op.want, op.off = phaseData, h.RID, int(h.Total), 0
	c.enqueue(op, &c.queue)
	return nil
}

// dataArrived copies rendezvous payload straight into the matched receive's
// buffer: the receiver never holds more of a large message than one frame.
func (e *Endpoint) dataArrived(c *conn, h *Header, payload []byte) error {
	e.mu.Lock()
	op := e.lookup(h.RID)
	if op == nil && e.stale(h.RID) {
		e.mu.Unlock()
		return nil // for a receive withdrawn by CancelTagged
	}
	if op == nil || op.kind != opRecv || op.res.Source != c.rank || h.Total != uint64(op.want) || h.Offset != uint64(op.off) {
		e.mu.Unlock()
		return fmt.Errorf("%w: data for unknown receive %#x", ErrFrame, h.RID)
	}
	// copy without the lock; while copying is set, a withdrawal
	// (CancelTagged, a failed peer) leaves op to this goroutine
	op.copying = true
	off := op.off
	e.mu.Unlock()
	n := op.land(off, op.want, payload)
	e.mu.Lock()
	op.copying = false
	op.off += n
	if err := op.abandon; err != nil || op.off == op.want {
		e.unregister(op)
		e.mu.Unlock()
		if err != nil {
			e.complete(op, err)
		} else {
			e.finishRecv(op, op.want)
		}
		return nil
	}
	e.mu.Unlock()
	return nil
}

// complete publishes op's result and wakes whoever waits for it.
func (e *Endpoint) complete(op *Op, err error) {
	if op.completer != nil && !op.auto {
		// an op its owner restarts only once told (a collective's
		// channel): nobody reads the result but the completer, so one
		// atomic step ends it instead of two
		if !op.state.CompareAndSwap(opActive, opDone) {
			return
		}
		n := op.res.N
		if op.kind == opSend && err == nil {
			n = len(op.buf)
		}
		op.res.Err, op.res.N = err, n
		op.completer.Complete(op.cid, n, err)
		e.wake()
		return
	}
	if !op.state.CompareAndSwap(opActive, opCompleting) {
		if op.state.CompareAndSwap(opDetached, opIdle) {
			e.PutOp(op)
		}
		return
	}
	op.res.Err = err
	if op.kind == opSend {
		op.res.N = len(op.buf)
		if err != nil {
			op.res.N = 0
		}
	}
	// once opDone is visible the owner may recycle op: read what we need first
	c, id, n, auto := op.completer, op.cid, op.res.N, op.auto
	if auto {
		// nobody observes an op the endpoint owns: straight back to the
		// pool (one atomic store, not two)
		e.PutOp(op)
	} else {
		op.state.Store(opDone)
	}
	if c != nil {
		c.Complete(id, n, err)
	} else {
		select {
		case op.done <- struct{}{}:
		default:
		}
	}
	e.wake()
}

// Watch registers ch to receive a token (non-blocking) whenever any
// operation of this endpoint completes or an unexpected message arrives;
// Waitany, Waitsome and blocking probes sleep on it.
func (e *Endpoint) Watch(ch chan struct{}) {
	e.watchMu.Lock()
	e.watchers = append(e.watchers, ch)
	e.nwatch.Add(1)
	e.watchMu.Unlock()
}

// Unwatch removes ch registered by Watch.
func (e *Endpoint) Unwatch(ch chan struct{}) {
	e.watchMu.Lock()
	for i, w := range e.watchers {
		if w == ch {
			e.watchers = append(e.watchers[:i], e.watchers[i+1:]...)
			e.nwatch.Add(-1)
			break
		}
	}
	e.watchMu.Unlock()
}

// Wake pokes every watcher; completions of operations outside the endpoint
// (collective schedules) call it too.
func (e *Endpoint) Wake() { e.wake() }

func (e *Endpoint) wake() {
	if e.nwatch.Load() == 0 {
		return
	}
	e.watchMu.Lock()
	for _, w := range e.watchers {
		select {
		case w <- struct{}{}:
		default:
		}
	}
	e.watchMu.Unlock()
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

// Linger waits until every peer that has a live link closes it, or ctx
// ends. A rank whose last messages may still be in flight calls it before
// Close, so closing does not cut them off: the peers close once they have
// received everything.
func (e *Endpoint) Linger(ctx context.Context) error {
	ch := make(chan struct{}, 1)
	e.Watch(ch) // a lost peer wakes the watchers (peerFailed)
	defer e.Unwatch(ch)
	for {
		live := false
		for i := range e.conns {
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
		e.pollers.Add(1)
		return
	}
	e.pollers.Add(-1)
	e.Poll()
}

// Poll hands this rank the frames its memory links queued while it
// polled. Links of other kinds deliver by themselves.
func (e *Endpoint) Poll() {
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
	for m := e.unexp.head; m != nil; m = e.unexp.head {
		e.unexp.remove(m)
	}
	e.mu.Unlock()
	for op := failed.pop(); op != nil; op = failed.pop() {
		e.complete(op, err)
	}
	e.wake()
}

// peerFailed completes every operation waiting on rank with err: posted
// receives from it or from AnySource (ULFM's pending semantics: a wildcard
// receive cannot know the failed rank will not be its sender) and
// rendezvous transfers in either direction.
func (e *Endpoint) peerFailed(rank int, err error) {
	var failed opList
	e.mu.Lock()
	for op := e.posted.head; op != nil; {
		next := op.next
		if op.peer == rank || op.peer == AnySource {
			e.posted.remove(op)
			op.inPosted = false
			failed.push(op)
		}
		op = next
	}
	for _, op := range e.slots {
		if op != nil && (op.kind == opSend && op.peer == rank || op.kind == opRecv && op.res.Source == rank) {
			if op.copying {
				op.abandon = err // the copier fails it after
				continue
			}
			e.unregister(op)
			failed.push(op)
		}
	}
	e.mu.Unlock()
	for op := failed.pop(); op != nil; op = failed.pop() {
		e.complete(op, err)
	}
	e.wake()
}

// Slot ids name rendezvous operations on the wire: the low 20 bits index
// the slot table (plus one, so 0 is never an id), the high 12 bits are the
// slot's generation, so a stale frame cannot reach the slot's next tenant.
const slotBits = 20

func (e *Endpoint) register(op *Op) {
	var i uint32
	if n := len(e.freeSlots); n > 0 {
		i = e.freeSlots[n-1]
		e.freeSlots = e.freeSlots[:n-1]
	} else {
		i = uint32(len(e.slots))
		e.slots = append(e.slots, nil)
		e.slotGen = append(e.slotGen, 0)
	}
	e.slots[i] = op
	op.slot = e.slotGen[i]<<slotBits | (i + 1)
	if op.kind == opSend {
		op.phase = phaseRTS
	}
}

func (e *Endpoint) lookup(id uint32) *Op {
	i := id&(1<<slotBits-1) - 1
	if int(i) >= len(e.slots) || e.slotGen[i] != id>>slotBits {
		return nil
	}
	return e.slots[i]
}

// stale reports whether id names a slot that exists but has moved on to a
// later generation: a frame for an operation withdrawn by CancelTagged,
// which the peer could not know about when it sent it.
func (e *Endpoint) stale(id uint32) bool {
	i := id&(1<<slotBits-1) - 1
	return id&(1<<slotBits-1) != 0 && int(i) < len(e.slots) && e.slotGen[i] != id>>slotBits
}

func (e *Endpoint) unregister(op *Op) {
	i := op.slot&(1<<slotBits-1) - 1
	e.slots[i] = nil
	e.slotGen[i] = (e.slotGen[i] + 1) & (1<<(32-slotBits) - 1)
	e.freeSlots = append(e.freeSlots, i)
	op.slot = 0
}

// Message is a message removed from matching by Improbe (MPI_Message), and
// the unexpected queue's entry type. An eager message holds its payload; a
// rendezvous message holds only its announcement.
type Message struct {
	kind       Kind
	ctx        uint32
	src        int
	tag        int32
	total      int
	seq        uint32
	data       []byte
	prev, next *Message
}

// Envelope describes m.
func (m *Message) envelope() Envelope { return Envelope{Source: m.src, Tag: int(m.tag), Len: m.total} }

// Envelope returns the source, tag and length of m.
func (m *Message) Envelope() Envelope { return m.envelope() }

type msgList struct{ head, tail *Message }

func (l *msgList) push(m *Message) {
	m.next, m.prev = nil, l.tail
	if l.tail == nil {
		l.head = m
	} else {
		l.tail.next = m
	}
	l.tail = m
}

func (l *msgList) remove(m *Message) {
	if m.prev == nil {
		l.head = m.next
	} else {
		m.prev.next = m.next
	}
	if m.next == nil {
		l.tail = m.prev
	} else {
		m.next.prev = m.prev
	}
	m.prev, m.next = nil, nil
}

// match returns the oldest unexpected message a receive (src, tag) in ctx
// takes: arrival order is what makes matching non-overtaking.
func (l *msgList) match(ctx uint32, src int, tag, mask int32) *Message {
	for m := l.head; m != nil; m = m.next {
		if m.ctx == ctx && (src == AnySource || m.src == src) && (tag == AnyTag || (m.tag^tag)&mask == 0) {
			return m
		}
	}
	return nil
}

// match returns the oldest posted receive that takes a message (src, tag) in ctx.
func (l *opList) match(ctx uint32, src int, tag int32) *Op {
	for op := l.head; op != nil; op = op.next {
		if op.ctx == ctx && (op.peer == AnySource || op.peer == src) && (op.tag == AnyTag || (op.tag^tag)&op.mask == 0) {
			return op
		}
	}
	return nil
}

// Unexpected payloads come from per-size-class free lists (powers of two
// from 64 B), so a steady stream of unexpected eager messages allocates
// nothing.
const (
	bufMinShift = 6
	bufClasses  = 32 - bufMinShift
)

func bufClass(n int) int {
	if n <= 1<<bufMinShift {
		return 0
	}
	return bits.Len(uint(n-1)) - bufMinShift
}

// getMessageLocked returns an idle unexpected-queue entry with room for n
// payload bytes. Called with e.mu held, as putMessageLocked: every entry is
// taken and returned inside a matching step that holds it already.
func (e *Endpoint) getMessageLocked(n int) *Message {
	cl := bufClass(n)
	var m *Message
	if k := len(e.msgs); k > 0 {
		m = e.msgs[k-1]
		e.msgs = e.msgs[:k-1]
	} else {
		m = new(Message)
	}
	if n > 0 {
		if k := len(e.bufs[cl]); k > 0 {
			m.data = e.bufs[cl][k-1]
			e.bufs[cl] = e.bufs[cl][:k-1]
		} else {
			m.data = make([]byte, 1<<(cl+bufMinShift))
		}
	}
	return m
}

func (e *Endpoint) putMessageLocked(m *Message) {
	if cap(m.data) > 0 {
		cl := bufClass(cap(m.data))
		e.bufs[cl] = append(e.bufs[cl], m.data[:cap(m.data)])
	}
	*m = Message{}
	e.msgs = append(e.msgs, m)
}
