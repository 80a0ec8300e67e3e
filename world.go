package meshmpi

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"

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

	collAlgorithms [coll.NumColls]string // job-wide algorithm choices
	yields         int                   // see oversubscribedYields
}

func newProc(rank, size int, cfg config) (*proc, error) {
	ep, err := peer.NewEndpoint(peer.Config{Rank: rank, Size: size, EagerLimit: cfg.eagerLimit})
	if err != nil {
		return nil, err
	}
	p := &proc{ep: ep, collAlgorithms: cfg.collAlgs}
	p.ctxUsed.set(worldContext)
	p.world = newComm(p, worldContext, identityRanks(size))
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

// finalize ends a rank cleanly: a barrier over the world, so no rank closes
// its links while another still talks to it, then the links close.
func (p *proc) finalize() error {
	_, err := p.world.allgather(nil)
	p.finalized.Store(true)
	p.ep.Close(nil)
	if err != nil {
		return fmt.Errorf("finalize: %w", err)
	}
	return nil
}

// Run starts an in-process world of n ranks, each a goroutine running fn with
// its world communicator, over memory links. It is for tests, teaching and
// one-machine jobs; the ranks share nothing but the links.
//
// When every fn returns nil, each rank finalizes (a world barrier) and Run
// returns nil. When a rank returns an error or panics, the world is aborted
// as MPI's default error handler would: every pending and later operation
// of every rank fails with ErrProcFailed, so no rank hangs. Run returns the
// ranks' errors joined, each prefixed with its rank.
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
	procs := make([]*proc, n)
	for i := range procs {
		if procs[i], err = newProc(i, n, cfg); err != nil {
			return fmt.Errorf("run: %w", err)
		}
		if n > runtime.GOMAXPROCS(0) {
			procs[i].yields = oversubscribedYields
		}
	}
	for i := range n {
		if err := procs[i].ep.Attach(i, peer.NewLoopbackLink(cfg.frameSize)); err != nil {
			return fmt.Errorf("run: %w", err)
		}
		for j := i + 1; j < n; j++ {
			a, b := peer.NewMemoryLinks(cfg.frameSize)
			if err := errors.Join(procs[i].ep.Attach(j, a), procs[j].ep.Attach(i, b)); err != nil {
				return fmt.Errorf("run: %w", err)
			}
		}
	}
	var (
		wg      sync.WaitGroup
		errs    = make([]error, n)
		abort   sync.Once
		aborted atomic.Bool
	)
	for i, p := range procs {
		wg.Go(func() {
			err := runRank(p, fn)
			if err == nil {
				// a rank that finished its work is not to blame for an
				// abort that breaks its final barrier
				if ferr := p.finalize(); !aborted.Load() {
					err = ferr
				}
			} else {
				abort.Do(func() {
					aborted.Store(true)
					cause := fmt.Errorf("world aborted by rank %d: %w", i, ErrProcFailed)
					for _, q := range procs {
						q.ep.Close(cause)
					}
				})
			}
			if err != nil {
				errs[i] = fmt.Errorf("rank %d: %w", i, err)
			}
		})
	}
	wg.Wait()
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
	finalized bool
}

// Init starts this process's rank and returns its world communicator
// (MPI_Init). A process started without a launcher is a world of one rank,
// as in MPI ("singleton init"). Init may be called once per process.
//
// Launchers configure ranks through the environment; MESHMPI_SIGNAL names
// the signaling server of a job to join. Joining a job needs the WebRTC
// peer mesh, which this build does not have yet: Init reports
// ErrNotSupported rather than silently starting a singleton.
func Init(opts ...Option) (*Comm, error) {
	global.mu.Lock()
	defer global.mu.Unlock()
	if global.p != nil || global.finalized {
		return nil, fmt.Errorf("init: already initialized: %w", ErrArg)
	}
	if url := os.Getenv("MESHMPI_SIGNAL"); url != "" {
		return nil, fmt.Errorf("init: joining the job at %s: %w: no WebRTC mesh in this build", url, ErrNotSupported)
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, fmt.Errorf("init: %w", err)
	}
	p, err := newProc(0, 1, cfg)
	if err == nil {
		err = p.ep.Attach(0, peer.NewLoopbackLink(cfg.frameSize))
	}
	if err != nil {
		return nil, fmt.Errorf("init: %w", err)
	}
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
	p := global.p
	global.p, global.finalized = nil, true
	return p.finalize()
}
