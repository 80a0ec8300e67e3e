package meshmpi

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meshmpi/meshmpi/coll"
	"github.com/meshmpi/meshmpi/peer"
)

const headerLen = peer.HeaderLen

// proc is one rank's runtime: its endpoint and what its communicators share.
type proc struct {
	ep    *peer.Endpoint
	world *Comm

	mu       sync.Mutex
	ctxUsed  ctxMask // context ids this rank's live communicators hold
	maskLent bool    // ctxUsed is lent to a construction in progress
	waiting  []int   // parent ids of the constructions in progress

	finalized atomic.Bool
	// endCause is why the rank ended other than by Finalize (its own
	// Abort, another rank's, its failure under --keep-going): its later
	// calls fail with it (Comm.check), as its pending ones do (endWith)
	endCause atomic.Pointer[error]
	// finalizing: the rank is in Finalize, where peers that finished it
	// close their links: a closed link fails only what waits on that
	// peer, not every collective of the communicators it belongs to
	finalizing atomic.Bool

	fail failures // what the rank knows of failed ranks (ft.go)
	// leave, if set, tells the job this rank is finalizing, before it
	// closes its links (so they are not taken for failures)
	leave func()
	// keepGoing: a failed rank does not end the world (Run's KeepGoing,
	// a job run with --keep-going); Finalize is then a fault-tolerant
	// barrier among the survivors
	keepGoing bool

	blockMu sync.Mutex
	blocked blockedIn // what the rank is parked in (block.go)
	// timedOut is set when EnvTimeout ran out (Session.limitRun): a
	// parked call then never returns, so the process's exit is the
	// timeout's (124), not that of an error a peer's own timeout exit
	// raised while this rank lingered.
	timedOut atomic.Bool

	self     *Comm // Comm.Self's, made on first use
	selfOnce sync.Once

	ports ports       // the ports this process opened (port.go)
	names nameService // where port names are published; nil: nowhere
	// late: the process joined its job after it formed; its world is
	// itself alone (Comm.Late)
	late bool

	// abort, if set, carries out Comm.Abort for this rank's way of
	// running (a Run world, a session); when it returns, the process
	// exits.
	abort func(*AbortError)

	collAlgorithms [coll.NumColls]string // job-wide algorithm choices
	wait           waitPolicy            // in-process ranks wait actively
	// oversubscribed: the world's ranks are goroutines of this process
	// over memory links, more than its cores (coll.Args.Oversubscribed)
	oversubscribed bool

	// rec records the rank's operations for its telemetry reporter; nil
	// when the job's telemetry is off (telemetry.go)
	rec *recorder
}

// newProc makes rank's runtime in a world of size ranks. dialer connects
// links on demand; nil means the caller attaches them all.
func newProc(rank, size int, cfg config, dialer peer.Dialer) (*proc, error) {
	return newJobProc(rank, size, size, false, cfg, dialer)
}

// newJobProc makes the runtime of rank of a job of size ranks that may
// grow to limit: a late rank (one that joined after the job formed) has
// a world of itself alone, the others the job's first size ranks.
func newJobProc(rank, size, limit int, late bool, cfg config, dialer peer.Dialer) (*proc, error) {
	return newSelfProc(rank, size, limit, late, cfg, dialer, peer.NewLoopbackLink(cfg.frameSize))
}

// newSelfProc is newJobProc with self as the rank's link to itself, or
// none yet if nil (the caller attaches it).
func newSelfProc(rank, size, limit int, late bool, cfg config, dialer peer.Dialer, self peer.Link) (*proc, error) {
	ep, err := peer.NewEndpoint(peer.Config{Rank: rank, Size: limit, EagerLimit: cfg.eagerLimit, UnexpectedLimit: cfg.unexpected, Dialer: dialer})
	if err != nil {
		return nil, err
	}
	if self != nil {
		if err := ep.Attach(rank, self); err != nil {
			return nil, err
		}
	}
	p := &proc{ep: ep, collAlgorithms: cfg.collAlgs, keepGoing: cfg.keepGoing, late: late}
	if cfg.telemetry.on {
		p.rec = newRecorder(cfg.telemetry.withDefaults().ops)
	}
	p.fail.known = make([]bool, limit)
	notice := make(chan struct{})
	p.fail.notice.Store(&notice)
	// a communicator acts on confirmed failures only (the job's authority
	// declared them, or the world is in-process): two live ranks whose
	// link broke must not each go on without the other
	ep.OnPeerDeclared(p.peerFailed)
	p.ctxUsed.set(worldContext)
	p.ctxUsed.set(selfContext)
	world := identityRanks(size)
	if late {
		world = []int{rank}
	}
	p.world = newComm(p, worldContext, world, worldNonce)
	p.world.name = "world"
	return p, nil
}

func identityRanks(n int) []int {
	r := make([]int, n)
	for i := range r {
		r[i] = i
	}
	return r
}

// finalizeLinger bounds how long a rank of the finalize barrier waits for
// the ranks it passed the decision to to close their links.
const finalizeLinger = 10 * time.Second

// finalize ends a rank cleanly: a barrier over the world, so no rank closes
// its links while another still talks to it, then the links close. The
// barrier is an agreement (agree.Group.StartBarrier: contributions up a
// tree over the live ranks to the lowest, its decision back down), so
// ranks that failed before or during it do not hang it, it works on a
// revoked world, and no rank talks to more than its parent and children
// (a linear gather had every rank dial rank 0 at once). A rank has all it
// will receive once its barrier ends; the decision it passed on to its
// children may still be in flight, so it waits for them to close first.
func (p *proc) finalize() error {
	p.finalizing.Store(true)
	lost := p.world.failedMembers() // the ranks that failed before the barrier ended
	// the world's collectives that completed before their agreement
	// tokens came: every rank sent its tokens before it came here, so
	// they come (colltrail.go)
	trailErr := p.world.sweepTrails(true)
	// the barrier also compares the ranks' counts of world collectives:
	// the AND of every count and of every complement gives back a rank's
	// own only if all are equal, so every rank sees a difference
	seq := p.world.seq.Load()
	vec := binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, seq), ^seq)
	res, _, err := p.world.agreeOn(vec, "Finalize", true)
	for _, m := range res.Missing {
		if !slices.Contains(lost, m) {
			lost = append(lost, m)
		}
	}
	// where ranks failed, or the world was revoked, the survivors' counts
	// differ by the collectives the failure broke: no error then
	intact := !p.keepGoing && len(lost) == 0 && !p.world.IsRevoked()
	if err == nil && intact && (binary.LittleEndian.Uint32(res.Vec) != seq || binary.LittleEndian.Uint32(res.Vec[4:]) != ^seq) {
		err = fmt.Errorf("the ranks made a different number of collective calls on %s (a collective only some ranks called): %w", commName(p.world), ErrArg)
	}
	p.finalized.Store(true)
	if p.leave != nil {
		p.leave() // the links this rank closes next are no failure
	}
	if err == nil && len(res.Sent) > 0 {
		children := make([]int, len(res.Sent))
		for i, m := range res.Sent {
			children[i] = p.world.ranks[m]
		}
		ctx, cancel := context.WithTimeout(context.Background(), finalizeLinger)
		_ = p.ep.Linger(ctx, children) // a rank that never closes is no reason to fail
		cancel()
	}
	p.ep.Close(nil)
	if err == nil && !p.keepGoing && len(lost) > 0 {
		// the survivors ended together, but a world that does not keep
		// going has lost ranks: that is the job's failure (the links of
		// ranks that finalized first are closed by now, not failed)
		slices.Sort(lost)
		err = fmt.Errorf("%s failed: %w", rankList(lost), ErrProcFailed)
	}
	if err == nil {
		err = trailErr
	}
	if err != nil {
		return fmt.Errorf("finalize: %w", err)
	}
	return nil
}

// Run starts an in-process world of n ranks, each a goroutine running fn with
// its world communicator, over memory links (or, WithJob, over the WebRTC
// mesh of a job). It is for tests, teaching and one-machine jobs; the ranks
// share nothing but the links.
//
// When every fn returns nil, each rank finalizes (a world barrier) and Run
// returns nil. When a rank returns an error or panics, the world is aborted
// as MPI's default error handler would: every pending and later operation
// of every rank fails with ErrProcFailed, so no rank hangs. Run returns the
// ranks' errors joined, each prefixed with its rank, in the order the ranks
// failed: the first is the rank that failed first, usually the cause, and
// the others mostly its consequences.
func Run(n int, fn func(world *Comm) error, opts ...Option) error {
	if n < 1 {
		return fmt.Errorf("run %d ranks: %w", n, ErrArg)
	}
	if fn == nil {
		return fmt.Errorf("run: nil rank function: %w", ErrArg)
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	if cfg.job != nil {
		return runJob(n, fn, *cfg.job, cfg.timeout, opts)
	}
	procs := make([]*proc, n)
	names := newLocalNames()
	// memory links that cannot carry a lazily connected link's frames
	// (a test's small frames) are wired up front, as small worlds are
	lazy := n >= lazyLinksFrom && (cfg.frameSize == 0 || cfg.frameSize >= peer.LazyFrame)
	var w *memWorld
	if lazy {
		w = &memWorld{}
	}
	for i := range procs {
		var dialer peer.Dialer
		var self peer.Link = peer.NewLoopbackLink(cfg.frameSize)
		if lazy {
			dialer, self = &memDialer{w: w, from: i}, nil
		}
		if procs[i], err = newSelfProc(i, n, n, false, cfg, dialer, self); err != nil {
			return fmt.Errorf("run: %w", err)
		}
		procs[i].wait = inProcessWait(n, true)
		procs[i].oversubscribed = oversubscribed(n)
		procs[i].names = names
	}
	if lazy {
		if err := w.init(procs, cfg.frameSize); err != nil {
			return fmt.Errorf("run: %w", err)
		}
	} else {
		for i := range n {
			for j := i + 1; j < n; j++ {
				a, b := peer.NewMemoryLinks(cfg.frameSize)
				if err := errors.Join(procs[i].ep.Attach(j, a), procs[j].ep.Attach(i, b)); err != nil {
					return fmt.Errorf("run: %w", err)
				}
			}
		}
	}
	if runHook != nil {
		runHook(procs, w)
	}
	return runRanks(procs, fn, cfg.timeout,
		func(i int) error { return procs[i].finalize() },
		func(cause error) {
			if w != nil {
				w.aborted.Store(true)
			}
			for _, q := range procs {
				q.ep.Close(cause)
			}
		})
}

// endWith ends the rank for cause, not by Finalize: its pending
// operations fail with cause, and so do its later calls.
func (p *proc) endWith(cause error) {
	p.endCause.CompareAndSwap(nil, &cause)
	p.finalized.Store(true)
	p.ep.Close(cause)
}

// runHook, if set (by tests), sees an in-process world's ranks and, if
// its links are wired lazily, its memWorld, before they run.
var runHook func(procs []*proc, w *memWorld)

// runJob is Run over a job's mesh: the ranks join concurrently (a job forms
// only when all are present), then run as Run's do.
func runJob(n int, fn func(*Comm) error, spec JobSpec, timeout time.Duration, opts []Option) error {
	d, err := joinTimeout()
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	sessions := make([]*Session, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			s := spec
			s.Rank = i
			sessions[i], errs[i] = Join(ctx, s, opts...)
			if errs[i] != nil {
				errs[i] = fmt.Errorf("rank %d: %w", i, errs[i])
				cancel() // the job cannot form: stop the others waiting
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, s := range sessions {
			if s != nil {
				s.Abort(err)
			}
		}
		return fmt.Errorf("run: %w", err)
	}
	procs := make([]*proc, n)
	for i, s := range sessions {
		procs[i] = s.p
		procs[i].wait = inProcessWait(n, false)
	}
	return runRanks(procs, fn, timeout,
		func(i int) error { return sessions[i].Finalize() },
		func(cause error) {
			for _, s := range sessions {
				s.Abort(cause)
			}
		})
}

// timeoutGrace is how long a Run past its timeout waits for its aborted
// ranks to return before it reports without them.
const timeoutGrace = 2 * time.Second

// runRanks runs fn on every proc, finalizing those that succeed and
// aborting the world at the first failure, or when timeout (if not 0)
// passes first. The ranks' errors are joined in the order they failed.
func runRanks(procs []*proc, fn func(*Comm) error, timeout time.Duration, finalize func(i int) error, abortAll func(cause error)) error {
	var (
		wg       sync.WaitGroup
		errsMu   sync.Mutex
		errs     []error // in the order the ranks failed: the first is the likely cause
		abort    sync.Once
		aborted  atomic.Bool
		called   atomic.Pointer[AbortError] // the first rank that called Abort
		hung     atomic.Pointer[error]      // the timeout's report
		timedOut = make(chan struct{})
		ended    = make([]atomic.Bool, len(procs))
		failed   = make([]atomic.Pointer[error], len(procs)) // each rank's error, for the report
	)
	if timeout > 0 {
		t := time.AfterFunc(timeout, func() {
			report := hangReport(procs, ended, failed, timeout) // before the abort wakes them
			abort.Do(func() {
				aborted.Store(true)
				hung.Store(&report)
				close(timedOut)
				abortAll(fmt.Errorf("the world ran past its timeout: %w", ErrProcFailed))
			})
		})
		defer t.Stop()
	}
	for _, p := range procs {
		p.abort = func(e *AbortError) {
			if called.CompareAndSwap(nil, e) {
				abort.Do(func() {
					aborted.Store(true)
					abortAll(fmt.Errorf("the job ends: %w: %w", e, ErrProcFailed))
				})
			}
			runtime.Goexit() // the rank's deferred calls run; wg.Go's Done too
		}
	}
	for i, p := range procs {
		wg.Go(func() {
			defer ended[i].Store(true)
			record := func(err error) {
				failed[i].Store(&err)
				errsMu.Lock()
				errs = append(errs, fmt.Errorf("rank %d: %w", i, err))
				errsMu.Unlock()
			}
			err := runRank(p, fn)
			switch {
			case err == nil:
				// a rank that finished its work is not to blame for an
				// abort that breaks its final barrier
				if ferr := finalize(i); !aborted.Load() && ferr != nil {
					record(ferr)
				}
			case p.keepGoing:
				// the rank fails alone, as a crashed process would: its
				// links drop and the survivors carry on. Its error is
				// recorded first: the others' come of it
				record(err)
				p.ep.Close(fmt.Errorf("rank %d failed: %w", i, ErrProcFailed))
			default:
				record(err)
				abort.Do(func() {
					aborted.Store(true)
					abortAll(fmt.Errorf("world aborted by rank %d: %w", i, ErrProcFailed))
				})
			}
		})
	}
	all := make(chan struct{})
	go func() { wg.Wait(); close(all) }()
	select {
	case <-all:
	case <-timedOut:
		// the abort ends every rank blocked in the library at once; a
		// rank busy in its own code cannot be stopped, and is left
		// running rather than keeping Run from reporting
		grace := time.NewTimer(timeoutGrace)
		defer grace.Stop()
		select {
		case <-all:
		case <-grace.C:
			return fmt.Errorf("%w\n(ranks still in their own code after %v are left running)", *hung.Load(), timeoutGrace)
		}
	}
	if e := called.Load(); e != nil {
		return e // the other ranks' errors are its consequences
	}
	if h := hung.Load(); h != nil {
		return *h
	}
	return errors.Join(errs...)
}

// runRank runs fn, turning a panic into an error: nothing panics across the API.
func runRank(p *proc, fn func(*Comm) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	return fn(p.world)
}

var global struct {
	mu        sync.Mutex
	p         *proc
	session   *Session // when the process joined a job
	finalized bool
}

// Init starts this process's rank and returns its world communicator
// (MPI_Init). A process started without a launcher is a world of one rank,
// as in MPI ("singleton init"). Init may be called once per process.
//
// A launcher (meshrun, a lab page) starts ranks with the job in the
// environment (EnvSignal, EnvJob, EnvToken, EnvRank, see JobFromEnv); Init
// then joins that job through its signaling server and returns once every
// rank is present, or fails after EnvJoinTimeout (DefaultJoinTimeout).
//
// Call Finalize before main returns (defer meshmpi.Finalize() right after
// Init): Go has no exit hook a library could finalize from, and a rank
// that exits without it drops its links at once, so ranks still talking
// to it fail with ErrProcFailed ("the remote ended the link at once: its
// process exited, or it closed the link without Finalize"; the signaling
// server reports its departure as "its process ended without Finalize,
// crashed, or lost its network"). Main finalizes for you.
func Init(opts ...Option) (*Comm, error) {
	global.mu.Lock()
	defer global.mu.Unlock()
	if global.p != nil || global.finalized {
		return nil, fmt.Errorf("init: already initialized: %w", ErrArg)
	}
	spec, launched, err := JobFromEnv()
	if err != nil {
		return nil, fmt.Errorf("init: %w", err)
	}
	if launched {
		s, err := initJob(spec, opts)
		if err != nil {
			return nil, fmt.Errorf("init: %w", err)
		}
		if err := s.ownProcess(); err != nil {
			return nil, fmt.Errorf("init: %w", err)
		}
		global.p, global.session = s.p, s
		return s.p.world, nil
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, fmt.Errorf("init: %w", err)
	}
	p, err := newProc(0, 1, cfg, nil)
	if err != nil {
		return nil, fmt.Errorf("init: %w", err)
	}
	p.names = newLocalNames()
	global.p = p
	return p.world, nil
}

// Finalize ends the rank started by Init (MPI_Finalize): it waits for every
// rank of the world, then closes the rank's links.
func Finalize() error {
	global.mu.Lock()
	defer global.mu.Unlock()
	if global.p == nil {
		return fmt.Errorf("finalize: not initialized: %w", ErrArg)
	}
	p, s := global.p, global.session
	global.p, global.session, global.finalized = nil, nil, true
	if s != nil {
		return s.Finalize()
	}
	return p.finalize()
}
