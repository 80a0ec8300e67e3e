package peer

import (
	"sync/atomic"
	"time"
)

// A C rank's MPI calls run on goroutines locked to the C program's
// threads (every cgo callback is), and the Go runtime hands such a
// goroutine's processor over only by switching threads: a
// runtime.Gosched of a locked goroutine costs some 8 µs (45 µs on a
// loaded machine) against 53 ns unlocked, a park and wake-up 34 µs
// against 257 ns (abi's BenchmarkLockedThread). SpinPoll's yield every
// pollYield and its callers' park on the operation's channel once the
// budget is spent are cheap for a Go rank and dear there: each wakes
// other threads (the one the processor goes to, a spinning one looking
// for work), which on a 2-core machine take the core the remote rank
// answers on, so the waits grow, more of them pass the yield's period,
// and a whole run falls into a slow mode of 100–400 µs a message
// (perf: ~4 context switches a round trip, 62% under runtime.gosched_m).
//
// So in a process whose callers are locked to their threads (the C
// binding's libmpi_abi.so says so: SetLockedCallers) SpinPoll never
// yields, and once its budget is spent the thread sleeps on a futex of
// its own, not the goroutine on the operation's channel: every
// completion of the endpoint's operations (and every Wake) rings it
// (threadBell.ring, from Endpoint.wake), so the link's reader, which
// delivers meanwhile, costs one thread wake-up and no hand-over of the
// processor. The sleep is bounded (threadNap, threadWaitMax): what
// finishes a wait without a completion (a cancelled context) is seen
// within threadNap, and past threadWaitMax the caller parks as usual, so
// a rank blocked for long shows in hang reports.

// lockedCallers: the process's MPI calls come from goroutines locked to
// their threads.
var lockedCallers atomic.Bool

// SetLockedCallers says that this process's ranks make their blocking
// calls from goroutines locked to OS threads, as a C program's threads
// calling in through cgo do (libmpi_abi.so sets it): SpinPoll then waits
// as suits such a thread. Go programs leave it off.
func SetLockedCallers(on bool) { lockedCallers.Store(on) }

// threadNap bounds one sleep of a waiting thread, a safety net for what
// finishes a wait without ringing the bell; threadWaitMax is how long a
// thread sleeps in SpinPoll, in all, before it returns and its caller
// parks the goroutine. (Variables for tests.)
var (
	threadNap     = time.Millisecond
	threadWaitMax = 20 * time.Millisecond
)

// threadBell is an endpoint's bell for the threads that sleep in
// SpinPoll: a futex word that ring advances.
type threadBell struct {
	waiters atomic.Int32  // threads asleep or about to be
	seq     atomic.Uint32 // the futex word: rung once per ring
}

// ring wakes the threads asleep on the bell; one atomic load when there
// are none (the hot path of every completion).
func (b *threadBell) ring() {
	if b.waiters.Load() == 0 {
		return
	}
	b.seq.Add(1)
	threadWake(&b.seq)
}

// wait sleeps the thread until finished, in naps that a ring ends, for
// up to threadWaitMax; it returns finished(). A waiter says it is one
// before it looks at finished, and a completion makes finished true
// before it rings: so either the look sees it or the ring comes after
// the waiter counted itself (and after the sequence it sleeps on).
func (b *threadBell) wait(finished func() bool) bool {
	if !threadWaits {
		return finished()
	}
	b.waiters.Add(1)
	var start time.Time
	for {
		seq := b.seq.Load()
		if finished() {
			break
		}
		now := time.Now()
		if start.IsZero() {
			start = now
		} else if now.Sub(start) > threadWaitMax {
			break
		}
		threadSleep(&b.seq, seq, threadNap)
	}
	b.waiters.Add(-1)
	return finished()
}
