package meshmpi

import (
	"runtime"

	"github.com/meshmpi/meshmpi/peer"
)

// waitPolicy is how a rank waits for an operation before it parks on the
// operation's channel. The zero policy is a rank alone in its process,
// whose operations complete on network goroutines: it polls its same-host
// (shm) links a while itself, as MPI_Wait does in MPICH, and parks
// (peer.Endpoint.SpinPoll; at once when it has none).
type waitPolicy struct {
	// yields is how many times a waiting rank lets other goroutines run
	// before it parks, in a process that runs several ranks of a job
	// (inProcessYields).
	yields int
	// poll: the rank has a core to itself (no more ranks than GOMAXPROCS)
	// and its links are memory links. It then polls between yields and
	// while it is in the library (peer's Polling): its peers' frames wait
	// for it in its inbox and it handles them on its own core.
	poll bool
}

// inProcessYields is how many times a waiting rank of Run's world lets
// other goroutines run before it parks. With more ranks than cores, the
// rank that completes this one's operation does it on its own goroutine
// (a memory link delivers synchronously) and is often runnable right now:
// yielding lets it run without the cost of parking and waking this one,
// the way Open MPI yields when it knows it is oversubscribed instead of
// spinning (MPICH) or sleeping at once. With a core per rank the rank
// polls between yields instead (spinPolls), as MPICH does; a parked rank
// would leave its core idle and the completer would pay for a futex wake
// on every operation. Measured on the 2-core machine, 8 B Allreduce at
// 8 ranks: 32 yields are 15–30% faster than parking after 8, 16 are in
// between, 50 and 100 are no better than 32; parking at once or after 2
// is 40–50% slower.
const inProcessYields = 32

// spinPolls is how many times a polling rank looks between two yields.
// runtime.Gosched costs some 200 ns when both cores are busy (the run
// queue's lock moves between them), longer than a message takes to
// arrive: looking only once per yield made a 2-rank Allreduce 20–30%
// slower than 64 looks (measured: 8 B, blocking, nonblocking and
// persistent). 32 yields of 64 looks keep a rank spinning some 20–40 µs
// before it parks.
const spinPolls = 64

// inProcessWait is the policy of the ranks of an n-rank world in one
// process. memory says their links are memory links.
func inProcessWait(n int, memory bool) waitPolicy {
	if n < 2 {
		return waitPolicy{}
	}
	return waitPolicy{yields: inProcessYields, poll: memory && !oversubscribed(n)}
}

// oversubscribed reports whether n ranks in this process share fewer
// cores than they are.
func oversubscribed(n int) bool { return n > runtime.GOMAXPROCS(0) }

// enter marks the rank as in the library (peer's Polling) if it polls;
// leave must follow. ep is nil for an operation with no peer (ProcNull),
// which has nothing to poll.
func (w waitPolicy) enter(ep *peer.Endpoint) {
	if w.poll && ep != nil {
		ep.Polling(true)
	}
}

// leave ends enter, handing over what the rank's inbox holds.
func (w waitPolicy) leave(ep *peer.Endpoint) {
	if w.poll && ep != nil {
		ep.Polling(false)
	}
}

// spin waits up to w.yields rounds for finished, polling if w says so
// (the caller has entered); the caller parks after it if the operation
// has not finished.
func (w waitPolicy) spin(ep *peer.Endpoint, finished func() bool) {
	looks := 1
	if w.poll {
		looks = spinPolls
	}
	for range w.yields {
		for range looks {
			if w.poll {
				ep.Poll()
			}
			if finished() {
				return
			}
		}
		runtime.Gosched()
	}
}

// wait spins for finished between enter and leave, unless it is already.
func (w waitPolicy) wait(ep *peer.Endpoint, finished func() bool) {
	if ep == nil || finished() {
		return
	}
	if w.yields == 0 {
		// a rank alone in its process: poll its same-host links a while
		// (nothing to poll without one)
		ep.SpinPoll(finished)
		return
	}
	w.enter(ep)
	w.spin(ep, finished)
	w.leave(ep)
}

// completion is an operation a blocking call waits for: a peer.Op or a
// coll.Run.
type completion interface {
	Finished() bool
	Done() <-chan struct{}
}
