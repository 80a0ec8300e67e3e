package meshmpi

import (
	"encoding/binary"

	"github.com/meshmpi/meshmpi/coll"
	"github.com/meshmpi/meshmpi/peer"
)

// commControl receives a communicator's control notices.
type commControl Comm

// listen posts the receive for the next control notice.
func (c *Comm) listen() {
	_ = c.p.ep.RecvNotify(peer.AnySource, c.controlContext(), peer.AnyTag, -1, c.control[:], (*commControl)(c), 0)
}

// Complete takes a notice: the collective whose sequence number it holds
// failed on its sender because the ranks disagree.
func (cc *commControl) Complete(_ int32, n int, err error) {
	c := (*Comm)(cc)
	if err != nil { // cancelled: the communicator was freed or the rank closed
		return
	}
	if n == len(c.control) {
		c.abortSeq(binary.LittleEndian.Uint32(c.control[:]))
	}
	c.listen()
}

type activeRun struct {
	seq uint32
	run *coll.Run
}

// abortSeq fails the collective with sequence number seq: at once if it
// runs here now (a persistent one's registered run: at its next start if
// it is not active), else when it starts.
//
// The run is aborted with activeMu held: once the lock is released its
// owner may leave, recycle the run (Plan.PutRun) and start it for a later
// collective, which a late Abort would then reset or fail. Holding the
// lock is safe: Abort with errMismatchReported withdraws this rank's
// transfers but tells no other rank, so it never waits on another
// communicator's activeMu.
func (c *Comm) abortSeq(seq uint32) {
	c.activeMu.Lock()
	defer c.activeMu.Unlock()
	for _, a := range c.active {
		if a.seq == seq {
			a.run.Abort(errMismatchReported)
			return
		}
	}
	if c.pending(seq) && len(c.aborted) < 1024 {
		c.aborted = append(c.aborted, seq)
	}
}

// recentSeqs is how far behind this rank's count a notice's collective may
// be and still be waiting to register: it took its number and has not
// started yet.
const recentSeqs = 64

// pending reports whether collective seq has not run here yet: it is
// ahead of this rank's count (another rank got there first) or has only
// just taken its number. A notice about any other collective is late (it
// ran here, maybe failed already), and keeping it would fail the
// collective that gets the same number 2^20 calls later.
func (c *Comm) pending(seq uint32) bool {
	const mask = 1<<(32-coll.SigBits) - 1
	ahead := (seq - c.seq.Load()) & mask
	return ahead < mask/2 || ahead >= mask+1-recentSeqs
}

// enter registers a run: a nonblocking or blocking collective's once it
// has started, a persistent one's when it is made, for the request's
// whole life (so its starts register nothing). A notice that came before
// fails the run, or its next start if it is not active.
func (c *Comm) enter(run *coll.Run, seq uint32) {
	c.activeMu.Lock()
	defer c.activeMu.Unlock()
	c.active = append(c.active, activeRun{seq, run})
	kept := c.aborted[:0]
	for _, s := range c.aborted {
		switch {
		case s == seq:
			run.Abort(errMismatchReported)
		case c.pending(s):
			kept = append(kept, s)
		}
	}
	c.aborted = kept
}

func (c *Comm) leave(run *coll.Run) {
	c.activeMu.Lock()
	for i, a := range c.active {
		if a.run == run {
			c.active = append(c.active[:i], c.active[i+1:]...)
			break
		}
	}
	c.activeMu.Unlock()
}
