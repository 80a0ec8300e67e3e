package meshmpi

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/meshmpi/meshmpi/coll"
)

// Trails. A rooted collective's ranks exchange agreement tokens (coll's
// agree.go) that only check that every rank called it with the same
// arguments; on some ranks nothing else waits for them (a Bcast root
// sends its data and only receives a token). A blocking collective
// returns, and a nonblocking one completes, once its run is settled
// (coll.Run.Settled): its data has gone and come, its buffers are the
// caller's again. The run, left waiting for its last tokens, becomes a
// trail of the communicator. The next
// collective call on it looks at the trails that have finished: a token
// that showed a disagreement fails that call (the ranks that disagreed
// were told at once, as ever, and every rank's next call fails), and the
// runs go back to their plans.
//
// So a Bcast root no longer waits a round trip for the token of a rank
// that may arrive later, as MPICH's eager root does not wait for its
// receivers; a program that sends after a Bcast what its peer receives
// before it (unsafe in MPI's terms, but common) no longer deadlocks.

// maxTrails bounds the trails of a communicator: past it, a collective
// waits for its own tokens, as before trails.
const maxTrails = 4

// collTrail is a collective that completed before its tokens came.
type collTrail struct {
	seq uint32
	run *coll.Run
	pl  planned
}

// commTrails is a communicator's trails.
type commTrails struct {
	trailMu sync.Mutex
	trails  [maxTrails]collTrail
	ntrails atomic.Int32 // len of trails in use: the fast path's check
}

// settledRun waits for a run to be settled (parkUntil, spin).
type settledRun struct{ r *coll.Run }

func (s settledRun) Finished() bool        { return s.r.Settled() }
func (s settledRun) Done() <-chan struct{} { return s.r.SettledDone() }

// addTrail makes settled collective q a trail of its
// communicator; false if it cannot be (the communicator has maxTrails,
// or q's run has just finished): then q's caller takes its result as
// usual.
func (c *Comm) addTrail(q *collRequest) bool {
	c.trailMu.Lock()
	defer c.trailMu.Unlock()
	n := c.ntrails.Load()
	if n == maxTrails || !q.run.SetWaker((*trailReaper)(c)) {
		return false
	}
	c.trails[n] = collTrail{q.seq, q.run, q.pl}
	c.ntrails.Store(n + 1)
	return true
}

// sweepTrails ends the trails whose runs have finished: unregisters
// them, gives back their communicator references and runs. With wait
// (Finalize), it first waits for every trail to finish. It returns the
// first trail's failure that says the ranks disagreed (other failures, a
// failed or revoked member, fail the communicator's later collectives
// themselves).
func (c *Comm) sweepTrails(wait bool) error {
	c.trailMu.Lock()
	defer c.trailMu.Unlock()
	var first error
	kept := int32(0)
	for i := range c.ntrails.Load() {
		t := c.trails[i]
		c.trails[i] = collTrail{}
		if wait { // Finalize's: a hang report says so
			c.p.parkUntil(t.run, blockedIn{call: "Finalize: " + t.run.Plan().Name, comm: c, run: t.run})
		}
		if !t.run.Finished() {
			c.trails[kept] = t
			kept++
			continue
		}
		err := t.run.Err()
		if err != nil && isMismatch(err) && first == nil {
			first = fmt.Errorf("%s (collective #%d on %s, which had returned here before its agreement tokens came): %w",
				t.run.Plan().Name, t.seq, c, collErr(err))
		}
		c.leave(t.run, err == nil)
		t.pl.putRun(t.run)
		c.drop()
	}
	c.ntrails.Store(kept)
	return first
}

// trailsFailed sweeps the trails and, if one found that the ranks
// disagreed, fails collective seq (k) for it and tells the other ranks,
// so that none waits for this one. Called when a call
// starts and when it completes, so that a disagreement found meanwhile
// fails the call pending when it was found, as a late notice does.
func (c *Comm) trailsFailed(k string, seq uint32) error {
	if c.ntrails.Load() == 0 {
		return nil
	}
	if err := c.sweepTrails(false); err != nil {
		return c.failForEarlier(k, seq, err)
	}
	return nil
}

// trailReaper is the waker of a trail's run: once its communicator is
// freed no later call sweeps the trails, so each one that finishes
// sweeps them (on a goroutine of its own: the finishing rank may hold
// the communicator's locks).
type trailReaper Comm

func (tr *trailReaper) Wake() {
	c := (*Comm)(tr)
	if c.freed.Load() {
		go c.sweepTrails(false)
	}
}
