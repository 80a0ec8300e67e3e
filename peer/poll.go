package peer

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// A polled link is one whose frames a waiting goroutine of its own rank
// can take, as MPICH's progress engine works: the thread in MPI_Wait
// reads the shared-memory queues itself, so a message that completes its
// request costs no hand-over from another thread. The shared-memory link
// (link_shm_linux.go) is one: without a poller its reader goroutine
// delivers, and while a goroutine of the rank polls, that reader stands
// aside (parks without asking its remote for wake-ups) and the poller
// takes the frames. A one-consumer token in the link keeps the two from
// ever handling frames at once, so HandleFrame calls stay one at a time
// and in order.

// pollLink is a link a waiting goroutine can poll.
type pollLink interface {
	// poll hands the link's handler the frames that arrived and moves
	// frames that waited for room into the link; it reports whether it
	// did anything. It never blocks: if another goroutine holds the
	// link's consumer token, it returns false at once.
	poll() bool
	// pollersChanged says that the endpoint's pollers went from none to
	// some (on) or back (off): the link silences or re-arms its reader's
	// wake-ups. A poller that leaves because its operation finished
	// (pollSet.left) says nothing: its caller is likely back soon.
	pollersChanged(on bool)
	// waiting reports whether frames wait for room in the remote's
	// ring: someone must stay ready to move them.
	waiting() bool
}

// pollSet is an endpoint's polled links: copy on write, so that Poll,
// the hot path, reads it with one atomic load.
type pollSet struct {
	mu    sync.Mutex
	links atomic.Pointer[[]pollLink]
	// threads is the bell of the locked callers' threads waiting past
	// SpinPoll's budget (poll_thread.go)
	threads threadBell
	// own says the rank and its polled links' remotes have a core each
	// (links+1 ≤ cores): SpinPoll's longer budget, and the lazy leave
	// below
	own atomic.Bool
	// left counts the lazy leaves, those of a last poller whose
	// operation finished; eager says the last leave was not one (a
	// waiter went to sleep and needs the readers)
	left  atomic.Uint64
	eager atomic.Bool
}

// A poller that leaves because its operation finished does not re-arm
// the readers' bells, as one whose budget ran out must: its caller
// returns to the program, which in a ping-pong calls again within a
// microsecond. Re-arming there raced the remote's next write, which then
// rang the bell: a futex wake on the writer's path and the reader's
// thread woken on the core the rank polls on (perf: 0.08 futex calls a
// round trip, 16,000 context switches in a run of 200,000). So the
// readers stay aside, napping (shmAsideNap), and take over only once a
// whole nap passed with no poller and no lazy leave.
//
// Meanwhile nothing moves frames the rank did not poll for: the
// remote's CTS, an eager-credit grant, a frame for a goroutine that
// waits on its request's channel. They wait for the rank's next call or
// the reader's nap, up to two naps. That is MPI's progress rule, and
// MPICH's without a progress thread: a C program waits for the library
// only inside MPI calls, which poll. A Go program's goroutines may wait
// on a request's channel while nothing polls, and Go ranks keep the
// reader at hand. So pollers leave lazily only in processes whose
// callers are C threads (SetLockedCallers: libmpi_abi.so), and only when
// the rank has a core of its own (own): with more links than cores
// every reader's naps would cost more than the rings they save.
// Measured, 8 B one-way over the shm link, medians of 10 interleaved
// runs (abi's TestOSULatency pairs, load ~1): C ranks 1.02 → 0.65 µs
// (Go ranks with the same rule: 0.64 → 0.46 µs); context switches a
// run 16,000 → 1,650.

// lazy reports whether the rank's pollers may leave lazily at all.
func (s *pollSet) lazy() bool { return s.own.Load() && lockedCallers.Load() }

// leaveLazily reports whether a poller whose operation finished may
// leave the readers aside now: not while frames wait for room, which
// only a poller or a reader moves (a send finishes once its frames are
// in the link's overflow).
func (s *pollSet) leaveLazily() bool {
	if !s.lazy() {
		return false
	}
	if p := s.links.Load(); p != nil {
		for _, l := range *p {
			if l.waiting() {
				return false
			}
		}
	}
	return true
}

// aside reports whether a reader should stay aside for a poller that
// is likely back soon: a lazy leave since the reader last looked (seen)
// and no eager one after it.
func (s *pollSet) aside(seen *uint64) bool {
	if s.eager.Load() {
		return false
	}
	n := s.left.Load()
	if n == *seen {
		return false
	}
	*seen = n
	return true
}

func (s *pollSet) add(l pollLink) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ls []pollLink
	if p := s.links.Load(); p != nil {
		ls = append(ls, *p...)
	}
	ls = append(ls, l)
	s.links.Store(&ls)
	s.own.Store(len(ls)+1 <= runtime.NumCPU())
}

func (s *pollSet) remove(l pollLink) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.links.Load()
	if p == nil {
		return
	}
	ls := make([]pollLink, 0, len(*p))
	for _, x := range *p {
		if x != l {
			ls = append(ls, x)
		}
	}
	if len(ls) == 0 {
		s.links.Store(nil)
		s.own.Store(false)
		return
	}
	s.links.Store(&ls)
	s.own.Store(len(ls)+1 <= runtime.NumCPU())
}

// any reports whether the set has a link.
func (s *pollSet) any() bool { return s.links.Load() != nil }

// poll polls every link once; true if one did something.
func (s *pollSet) poll() bool {
	p := s.links.Load()
	if p == nil {
		return false
	}
	did := false
	for _, l := range *p {
		if l.poll() {
			did = true
		}
	}
	return did
}

func (s *pollSet) pollersChanged(on bool) {
	if p := s.links.Load(); p != nil {
		for _, l := range *p {
			l.pollersChanged(on)
		}
	}
}

// pollIdle is how long SpinPoll keeps polling once nothing arrives, when
// the rank's polled links and itself are no more than the host's cores:
// its peers then likely have cores of their own, as in MPICH's model,
// which polls for ever; a reply within it costs no wake-up. Past it the
// waiter parks and the link's reader takes over, waking it through the
// operation's channel: a futex wake on each side, which on a loaded
// machine waits for the scheduler (measured: 50 µs made a loaded
// 2-core machine's ping-pong 5–50× slower than MPICH's, whose ranks
// never sleep). pollIdleShared is the budget of a rank with more peers
// on its host than cores (oversubscribed, as Open MPI yields then):
// spinning there takes the core a peer needs to answer.
const (
	pollIdle       = time.Millisecond
	pollIdleShared = 20 * time.Microsecond
)

// pollLook is how many polls SpinPoll makes between two looks at the
// clock (some 20 ns each).
const pollLook = 64

// pollYield is how long SpinPoll polls between two yields. The rank's
// other goroutines must run while it waits (a timer, a sender), which
// they do on the other processors, but a yield is dear beyond its own
// 200 ns: runtime.Gosched wakes an idle processor's thread to look for
// work whenever one sleeps, and that thread spins on another core,
// which on a 2-core machine is the remote rank's. Yielding every 64
// polls (some 2 µs) made the waiting process use both cores. Yielding
// the thread to the OS too (sched_yield every 1024 polls, as MPICH's
// polls_before_yield) measured worse on the loaded 2-core machine: 8 B
// one-way median 1.96 µs against 1.06 without, 6 interleaved rounds.
const pollYield = 200 * time.Microsecond

// SpinPoll waits for finished by polling this endpoint's polled links
// (same-host shared memory), as MPI_Wait does in MPICH: the waiting
// goroutine handles the frames itself. It returns finished() once that
// is true or nothing arrived for a while (pollIdle), at once if the
// endpoint has no polled link; the caller then parks as usual, and the
// links' reader goroutines deliver meanwhile. In a process whose callers
// are locked to their threads (SetLockedCallers) it never yields and,
// once the budget is spent, sleeps on the thread a while before it
// returns (poll_thread.go). It does not allocate.
func (e *Endpoint) SpinPoll(finished func() bool) bool {
	if !e.polls.any() {
		return finished()
	}
	if finished() {
		return true
	}
	budget := pollIdleShared
	if e.polls.own.Load() {
		budget = pollIdle
	}
	e.Polling(true)
	// a locked caller never yields: its processor would go to another
	// thread and come back (poll_thread.go)
	yields := !lockedCallers.Load()
	var idle, yielded time.Time
	done := false
	for i := 1; ; i++ {
		if e.polls.poll() {
			idle = time.Time{}
		}
		if finished() {
			done = true
			break
		}
		if i%pollLook != 0 {
			continue
		}
		now := time.Now()
		if idle.IsZero() {
			idle = now
		} else if now.Sub(idle) > budget {
			break
		}
		if !yields {
			continue
		}
		if yielded.IsZero() {
			yielded = now
		} else if now.Sub(yielded) > pollYield {
			runtime.Gosched()
			yielded = now
		}
	}
	e.leave(done && e.polls.leaveLazily())
	if done {
		return true
	}
	if !yields {
		return e.polls.threads.wait(finished)
	}
	return finished()
}
