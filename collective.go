package meshmpi

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/meshmpi/meshmpi/coll"
	"github.com/meshmpi/meshmpi/op"
	"github.com/meshmpi/meshmpi/peer"
)

// inPlace is the memory InPlace slices point at; 16-byte aligned, so a view
// of it is valid for every element type.
var inPlace [2]complex128

// InPlace returns the marker that stands for a send (or, for Scatter at the
// root, a receive) buffer in a collective that works in place
// (MPI_IN_PLACE): Allreduce(c, InPlace[float64](), buf, Sum) reduces buf
// in place. It is an empty slice that no other slice aliases.
func InPlace[T Element]() []T { return unsafe.Slice((*T)(unsafe.Pointer(&inPlace)), 0)[:0:0] }

func isInPlace(b []byte) bool {
	return len(b) == 0 && cap(b) == 0 && unsafe.SliceData(b) == (*byte)(unsafe.Pointer(&inPlace))
}

// viewBytes views an InPlace marker of any type as bytes, keeping its
// identity (op.Bytes drops the pointer of empty slices).
func viewBytes[T Element](s []T) []byte {
	if len(s) == 0 {
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), 0)[:0:0]
	}
	return op.Bytes(s)
}

// Hint tunes one collective call (MPI_Info hints). Hints never change a
// result, only how it is computed; every rank must pass the same ones.
type Hint func(*hints)

type hints struct {
	algorithm string
	segment   int
}

// Algorithm forces the named algorithm for this call (see coll.Algorithms);
// if its restrictions do not hold the call fails with ErrAlgorithm.
func Algorithm(name string) Hint { return func(h *hints) { h.algorithm = name } }

// Segment bounds the bytes of one message in algorithms that segment or
// pipeline large messages.
func Segment(bytes int) Hint { return func(h *hints) { h.segment = bytes } }

func applyHints(hs []Hint) hints {
	var h hints
	for _, f := range hs {
		if f != nil {
			f(&h)
		}
	}
	return h
}

// collRequest is a collective operation driven by a Request: a Run of the
// collective's plan, started once (nonblocking) or at each Start
// (persistent).
type collRequest struct {
	c          *Comm
	seq        uint32
	run        *coll.Run
	pl         planned // where run goes back when done (not persistent)
	send, recv []byte
	persistent bool
	kind       coll.Coll // the collective, for telemetry
	// t0 is when the recorder saw it start (unix µs); 0 when telemetry is
	// off (see recorder)
	t0 int64
	// broken is set once a start of a persistent collective found that
	// the ranks disagree: its arguments are fixed at init, so every later
	// start fails at once, without a message (see start).
	broken bool
}

func (q *collRequest) start() error {
	if rec := q.c.p.rec; rec != nil {
		q.t0 = rec.now()
	}
	q.c.hold()
	if err := q.run.Bind(q.send, q.recv); err != nil {
		q.c.drop()
		return fmt.Errorf("%s on %s: %w: %w", q.run.Plan().Name, q.c, ErrBuffer, err)
	}
	if err := q.c.collectiveErr(); err != nil {
		// revoked, or a member failed: it cannot complete, so it fails
		// before it issues a transfer
		q.run.Abort(err)
	}
	if q.broken {
		// failed before it issues a transfer. The ranks' starts do not
		// line up after a mismatch (one may have finished start N before
		// the notice came, another failed it), and the tag is the same at
		// every start: any message would meet another start's. Abandon
		// drops what other ranks sent since.
		q.run.Abort(errMismatchEarlier)
	}
	// start, then register (a persistent run is registered already): a
	// notice that arrives before the run is registered is kept in
	// c.aborted and applied by enter
	if err := q.run.Start(); err != nil {
		q.c.drop()
		return fmt.Errorf("%s on %s: %w: %w", q.run.Plan().Name, q.c, ErrRequest, err)
	}
	if !q.persistent {
		q.c.enter(q.run, q.seq, false)
	}
	if q.c.revoked.Load() {
		// revoked while this started: Revoke's cancel may have come
		// before its transfers were posted (see p2pRequest.start)
		q.c.cancelRevoked()
	} else if err := q.c.collectiveErr(); err != nil {
		// a member failed while this started: failCollectives may have
		// run after the check above and before the run was registered
		// and its transfers posted, and would never wake it
		q.run.Abort(err)
	}
	return nil
}

// finished reports whether the collective completed here: its run
// finished or, unless it is persistent, settled (coll.Run.Settled) while
// the communicator has room for another trail (colltrail.go).
func (q *collRequest) finished() bool {
	if q.persistent {
		return q.run.Finished()
	}
	return q.run.Finished() || q.run.Settled() && q.c.ntrails.Load() < maxTrails
}

func (q *collRequest) done() <-chan struct{} {
	if q.persistent || q.c.ntrails.Load() >= maxTrails {
		return q.run.Done()
	}
	return q.run.SettledDone()
}

func (q *collRequest) endpoint() *peer.Endpoint { return q.c.p.ep }

func (q *collRequest) result(keep bool) (Status, error) {
	if !keep && !q.run.Finished() {
		// settled: only its agreement tokens are left, and the run stays
		// as a trail; with no room for one (or if it is just ending),
		// this waits for them
		if q.c.addTrail(q) {
			err := q.settledResult()
			q.run = nil
			if err != nil {
				return Status{Err: err}, err
			}
			return Status{}, nil
		}
		q.c.p.parkUntil(q.run, q.block())
	}
	err := q.run.Err()
	if q.t0 != 0 {
		q.recordDone(err)
	}
	name := q.run.Plan().Name
	if !keep { // a persistent run stays registered until its request is freed
		q.c.leave(q.run, err == nil)
	}
	q.c.drop()
	if !keep {
		q.pl.putRun(q.run)
		q.run = nil
	} else if err != nil && isMismatch(err) {
		q.broken = true
	}
	if err != nil {
		// an error reported here answers any earlier notice, and any
		// disagreement a trail found. Recorded first (a blocking call's
		// leave did): a notice about an earlier collective that comes
		// after the mark is cleared must find it and mark nothing.
		if keep {
			q.c.failedAt(q.seq)
		}
		q.c.takeLate(q.seq)
		if q.c.ntrails.Load() > 0 {
			_ = q.c.sweepTrails(false)
		}
		err = fmt.Errorf("%s on %s: %w", name, q.c, collErr(err))
		return Status{Err: err}, err
	}
	if !keep {
		// an earlier collective was found mismatched after it had
		// completed here: this one, pending when that came out, fails
		if err = q.c.earlierFailed(name, q.seq); err != nil {
			return Status{Err: err}, err
		}
	}
	return Status{}, nil
}

// settledResult is result for a collective that completes settled, its
// run left as a trail (colltrail.go).
func (q *collRequest) settledResult() error {
	if q.t0 != 0 {
		q.recordDone(nil) // settled: a success so far
	}
	return q.c.earlierFailed(q.run.Plan().Name, q.seq)
}

// earlierFailed fails collective seq (k) if an earlier one was found
// mismatched after it had completed here: by another rank, which sent a
// notice (collcontrol.go), or by this rank's trail (colltrail.go).
func (c *Comm) earlierFailed(k string, seq uint32) error {
	if s, ok := c.takeLate(seq); ok {
		return c.failLate(k, seq, s)
	}
	return c.trailsFailed(k, seq)
}

// collErr gives engine errors their MPI class, and says a disagreement
// in the user's terms: which rank called the collective differently (the
// engine's tags, which carry the arguments' signature, mean nothing to
// the user).
func collErr(err error) error {
	var tm *peer.TagMismatchError
	if errors.As(err, &tm) {
		return fmt.Errorf("rank %d called it with other arguments (count, datatype, root or operation) than this rank: %w: %w", tm.Source, ErrArg, coll.ErrMismatch)
	}
	if isMismatch(err) {
		return fmt.Errorf("%w: %w", ErrArg, err)
	}
	return err
}

func (q *collRequest) cancel() error {
	return fmt.Errorf("cancel: collectives cannot be cancelled: %w", ErrRequest)
}

func (q *collRequest) detach() error {
	return fmt.Errorf("free: an active collective cannot be freed: %w", ErrRequest)
}

// release unregisters a persistent collective and gives back its
// channels (its Ops). A broken one also drops the messages other ranks
// sent it since its last start.
func (q *collRequest) release() {
	if q.run != nil {
		q.c.leave(q.run, !q.broken && q.run.Err() == nil)
		q.run.Release()
		if q.broken {
			q.c.p.ep.CancelTagged(q.c.collContext(), int32(coll.Tag(q.seq, 0)), collSeqMask, errFreed)
		}
	}
}

type collForm uint8

const (
	blocking collForm = iota
	nonblocking
	persistent
)

// collective runs or prepares one collective: it takes the call's sequence
// number (every rank does, whatever happens next, so the ranks' numbers
// never drift apart), validates, selects the algorithm, gets the plan
// (cached by shape) and then runs it to completion (blocking), starts it
// (nonblocking) or keeps it for Start (persistent).
func (c *Comm) collective(form collForm, a coll.Args, send, recv []byte, hs []Hint) (*Request, error) {
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", a.Coll, err)
	}
	seq := c.seq.Add(1) - 1
	if form != persistent {
		// an earlier collective was found mismatched after it had
		// completed here: this call fails instead
		if err := c.earlierFailed(a.Coll.String(), seq); err != nil {
			return nil, err
		}
	}
	// refuse fails the call before it sends anything: the other ranks
	// would wait for this one's part, so they are told (collcontrol.go)
	refuse := func(err error) (*Request, error) {
		c.notify(seq, false)
		return nil, err
	}
	var h hints
	if len(hs) > 0 {
		h = applyHints(hs)
	}
	if h.segment < 0 {
		return refuse(fmt.Errorf("%s on %s: segment %d: %w", a.Coll, c, h.segment, ErrArg))
	}
	a.Rank, a.Size, a.Segment = c.rank, len(c.ranks), h.segment
	a.RemoteSize = c.RemoteSize()
	a.Oversubscribed = c.p.oversubscribed
	force := h.algorithm
	if force == "" && a.RemoteSize == 0 { // job-wide choices are intracommunicator algorithms
		force = c.p.collAlgorithms[a.Coll]
	}
	pl, err := c.plan(&a, force)
	if err != nil {
		return refuse(err)
	}
	plan, tag := pl.plan, coll.Tag(seq, pl.sig)
	if len(send) < plan.Need[coll.BufSend] || len(recv) < plan.Need[coll.BufRecv] {
		return refuse(fmt.Errorf("%s on %s: needs %d-byte send and %d-byte receive buffers, got %d and %d: %w",
			a.Coll, c, plan.Need[coll.BufSend], plan.Need[coll.BufRecv], len(send), len(recv), ErrCount))
	}
	if overlap(send[:plan.Need[coll.BufSend]], recv[:plan.Need[coll.BufRecv]]) {
		// the engine reads send while it writes recv, in any order: an
		// aliased pair reduces or forwards data it has already overwritten
		// (MPI-4.1 §2.3; InPlace is the way to share one buffer)
		return refuse(fmt.Errorf("%s on %s: send and receive buffers overlap (use InPlace): %w", a.Coll, c, ErrBuffer))
	}
	t := c.engineTransport()
	switch form {
	case blocking:
		if len(plan.Steps) == 0 && c.p.rec == nil {
			return nil, c.emptyCollective(plan.Name, seq)
		}
		run := pl.getRun(t, tag, nil)
		q := collRequest{c: c, seq: seq, run: run, pl: pl, send: send, recv: recv, kind: a.Coll}
		// the rank stays in the library from the start to the end of its
		// spin: its peers' frames wait for it (waitPolicy)
		w, ep := c.p.wait, c.p.ep
		w.enter(ep)
		err := q.start()
		if err == nil {
			w.spin(ep, run.Settled)
		}
		w.leave(ep)
		if err != nil {
			return nil, err
		}
		c.p.parkUntil(settledRun{run}, q.block())
		_, err = q.result(false)
		return nil, err
	case nonblocking:
		r := &Request{state: Active, wait: c.p.wait}
		r.coll = collRequest{c: c, seq: seq, run: pl.getRun(t, tag, c.p.ep), pl: pl, send: send, recv: recv, kind: a.Coll}
		r.impl = &r.coll
		if err := r.begin(); err != nil {
			return nil, err
		}
		return r, nil
	default:
		r := &Request{persistent: true, wait: c.p.wait}
		r.coll = collRequest{c: c, seq: seq, run: coll.NewRun(plan, t, tag, c.p.ep), send: send, recv: recv, persistent: true, kind: a.Coll}
		r.impl = &r.coll
		c.enter(r.coll.run, seq, true)
		return r, nil
	}
}

// emptyCollective completes blocking collective seq, whose plan has no
// step on this rank (nothing to send or receive here: a zero count), with
// no run: it fails only if the communicator cannot run collectives, and it
// counts as completed here, so that a mismatch another rank reports about
// it later marks the communicator as for any other (collcontrol.go).
func (c *Comm) emptyCollective(name string, seq uint32) error {
	if err := c.collectiveErr(); err != nil {
		return fmt.Errorf("%s on %s: %w", name, c, err)
	}
	c.activeMu.Lock()
	c.late.done[c.late.n%recentSeqs] = seq
	c.late.n++
	c.activeMu.Unlock()
	return nil
}

func elemArgs[T Element](k coll.Coll) coll.Args {
	return coll.Args{Coll: k, ElemSize: op.SizeOf[T](), Type: op.TypeOf[T]()}
}

func (c *Comm) checkRoot(k coll.Coll, root int) error {
	if c == nil || root < 0 || root >= len(c.ranks) {
		return fmt.Errorf("%s on %s: root %d: %w", k, c, root, ErrRoot)
	}
	return nil
}

func checkOp(k coll.Coll, o *Op, t op.Type) error {
	switch {
	case o == nil:
		return fmt.Errorf("%s: no operation given (nil): %w", k, ErrOp)
	case !o.Defined(t):
		return fmt.Errorf("%s: %v is not defined on %s: %w", k, o, t, ErrOp)
	}
	return nil
}

// countOf returns len(b)/n elements, or an error if n does not divide it.
func countOf(k coll.Coll, what string, elems, n int) (int, error) {
	if n == 0 || elems%n != 0 {
		return 0, fmt.Errorf("%s: %s of %d elements is not %d equal blocks: %w", k, what, elems, n, ErrCount)
	}
	return elems / n, nil
}
