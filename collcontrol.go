package meshmpi

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"

	"github.com/meshmpi/meshmpi/coll"
	"github.com/meshmpi/meshmpi/peer"
)

// Control notices. A rank that finds the ranks disagree on a collective
// (a message of another signature, a call that failed its checks here)
// tells every other rank of the communicator, both groups of an
// intercommunicator, on its control context: a notice is the collective's
// sequence number in a little-endian uint32, with noticeNoMark set when
// the collective failed here only because of an earlier notice.
//
// A notice fails the collective where it is running or has yet to start.
// Where it already completed without error (a rank that only sends, such
// as a Bcast root or a Reduce leaf, may finish before any rank can see a
// disagreement), the notice marks the communicator instead (lateMismatch):
// the rank's pending or next collective call on it fails with ErrArg, and
// tells the others with noticeNoMark, which fails that collective where it
// has not completed and marks nothing. So every rank learns of the
// mismatch, none waits for a rank that has stopped, and the cascade ends
// after one collective.
const noticeNoMark = 1 << 31

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
		c.drop()
		return
	}
	if n == len(c.control) {
		v := binary.LittleEndian.Uint32(c.control[:])
		c.abortSeq(v&^noticeNoMark, v&noticeNoMark == 0)
	}
	c.relisten(c.listen, c.controlContext(), &c.freed)
}

// relisten posts a listener's next receive with listen, unless it was
// told to stop (done: c was freed, for the fault-tolerance listener its
// agreement group let it go). Free may run meanwhile and find no receive
// to cancel: looking at done again once posted catches it, and the
// receive cancelled then is this listener's own (its reference keeps the
// context from reuse).
func (c *Comm) relisten(listen func(), ctx uint32, done *atomic.Bool) {
	if done.Load() {
		c.drop()
		return
	}
	listen()
	if done.Load() {
		c.p.ep.CancelTagged(ctx, 0, 0, errFreed)
	}
}

// notify sends a notice about collective seq to every other rank of c,
// in both groups of an intercommunicator.
func (c *Comm) notify(seq uint32, noMark bool) {
	v := seq
	if noMark {
		v |= noticeNoMark
	}
	send := func(w int) {
		notice := binary.LittleEndian.AppendUint32(nil, v)
		_ = c.p.ep.SendNotify(peer.Standard, w, c.controlContext(), 0, notice, ignore{}, 0)
	}
	for r, w := range c.ranks {
		if r != c.rank {
			send(w)
		}
	}
	if c.inter != nil {
		for _, w := range c.inter.ranks {
			send(w)
		}
	}
}

type activeRun struct {
	seq        uint32
	run        *coll.Run
	persistent bool
}

// lateMismatch is what a communicator knows of the collectives it
// completed and of the notices that came too late for them.
type lateMismatch struct {
	// seq is the sequence number of a collective that completed here
	// and that another rank then reported, plus markSet; 0 for none.
	seq atomic.Uint32
	// done holds the sequence numbers of the last collectives that
	// completed here without error (blocking and nonblocking), so a
	// notice about one of them can be told from one about a collective
	// that failed here or has not started. Written under activeMu.
	done [recentSeqs]uint32
	n    uint32
	// failed is the sequence number of the last collective that failed
	// here (if anyFailed): a notice about an earlier one marks nothing,
	// since this rank has reported an error since. Under activeMu.
	failed    uint32
	anyFailed bool
}

// failedAt records that collective seq failed here: a later notice
// about an earlier collective marks nothing (markLate).
func (c *Comm) failedAt(seq uint32) {
	c.activeMu.Lock()
	c.failedAtLocked(seq)
	c.activeMu.Unlock()
}

// failedAtLocked is failedAt with activeMu held.
func (c *Comm) failedAtLocked(seq uint32) {
	const mask = 1<<(32-coll.SigBits) - 1
	if !c.late.anyFailed || (seq-c.late.failed)&mask < mask/2 {
		c.late.failed, c.late.anyFailed = seq, true
	}
}

// markLate marks c for a notice about collective seq, which completed
// here without error. Called with activeMu held.
func (c *Comm) markLate(seq uint32) {
	const mask = 1<<(32-coll.SigBits) - 1
	if c.late.anyFailed && (c.late.failed-seq)&mask < mask/2 {
		return
	}
	c.late.seq.Store(seq | markSet)
}

const markSet = 1 << 31

// takeLate returns the collective a late notice reported and clears the
// mark, or false if there is none; if there was one, collective seq,
// which fails for it, is recorded as failed here (failedAt) in the same
// step. Two steps let a second notice about the reported collective (two
// ranks found the disagreement) mark the communicator again in between,
// and fail the call after seq too.
func (c *Comm) takeLate(seq uint32) (uint32, bool) {
	if c.late.seq.Load() == 0 { // the common case: one load
		return 0, false
	}
	c.activeMu.Lock()
	defer c.activeMu.Unlock()
	v := c.late.seq.Swap(0)
	if v != 0 {
		c.failedAtLocked(seq)
	}
	return v &^ markSet, v != 0
}

// failLate fails collective seq on this rank because an earlier one
// (reported) was found mismatched after it completed here, and tells the
// other ranks so that none waits for this one.
func (c *Comm) failLate(k string, seq, reported uint32) error {
	return c.failForEarlier(k, seq, lateErr(reported))
}

// failForEarlier fails collective seq (k) here for err, a disagreement
// on an earlier one found after that one completed here (a late notice,
// a trail), and tells the other ranks without marking them, so that
// none waits for this one.
func (c *Comm) failForEarlier(k string, seq uint32, err error) error {
	c.failedAt(seq) // later notices about the earlier one mark nothing
	c.notify(seq, true)
	return fmt.Errorf("%s on %s: %w", k, c, err)
}

func lateErr(reported uint32) error {
	return fmt.Errorf("another rank found that the ranks called collective #%d on this communicator with different arguments (it had completed here): %w", reported, ErrArg)
}

// abortSeq fails the collective with sequence number seq: at once if it
// runs here now (a persistent one's registered run: at its next start if
// it is not active), else when it starts. If it completed here without
// error and mark is set, the communicator is marked (lateMismatch).
//
// The run is aborted with activeMu held: once the lock is released its
// owner may leave, recycle the run (Plan.PutRun) and start it for a later
// collective, which a late Abort would then reset or fail. Its transfers
// are withdrawn after the lock is released (coll.Run.AbortHeld): the
// withdrawal writes to links, and a link it finds lost fails c's
// collectives, under activeMu.
func (c *Comm) abortSeq(seq uint32, mark bool) {
	c.activeMu.Lock()
	later := c.abortSeqLocked(seq, mark)
	c.activeMu.Unlock()
	later.Run()
}

// abortSeqLocked is abortSeq with activeMu held; it returns the
// withdrawal to run once the lock is released.
func (c *Comm) abortSeqLocked(seq uint32, mark bool) coll.Abandonment {
	for _, a := range c.active {
		if a.seq == seq {
			// a persistent run also fails its next start; the mark
			// reaches a rank that frees it instead
			late, later := a.run.AbortHeld(errMismatchReported)
			if late && mark {
				c.markLate(seq)
			}
			return later
		}
	}
	if mark {
		for _, s := range c.late.done[:min(c.late.n, recentSeqs)] {
			if s == seq {
				c.markLate(seq)
				return coll.Abandonment{}
			}
		}
	}
	if c.pending(seq) && len(c.aborted) < 1024 {
		if !mark {
			seq |= noticeNoMark // pending tests the sequence bits only
		}
		c.aborted = append(c.aborted, seq)
	}
	return coll.Abandonment{}
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
func (c *Comm) enter(run *coll.Run, seq uint32, persistent bool) {
	c.activeMu.Lock()
	c.active = append(c.active, activeRun{seq, run, persistent})
	kept := c.aborted[:0]
	var later []coll.Abandonment // two notices about seq: only the first withdraws
	for _, s := range c.aborted {
		switch {
		case s&^noticeNoMark == seq:
			// a run that completed within its start (it only sends)
			// is too late to fail: the mark fails it in its result
			late, w := run.AbortHeld(errMismatchReported)
			if late && !persistent && s&noticeNoMark == 0 {
				c.markLate(seq)
			}
			later = append(later, w)
		case c.pending(s):
			kept = append(kept, s)
		}
	}
	c.aborted = kept
	c.activeMu.Unlock()
	for _, w := range later {
		w.Run() // unlocked, as abortSeq's
	}
}

// leave unregisters a run; ok says it completed without error (a
// persistent one: its last start), so a notice about it that comes later
// marks the communicator.
func (c *Comm) leave(run *coll.Run, ok bool) {
	c.activeMu.Lock()
	for i, a := range c.active {
		if a.run == run {
			switch {
			case ok:
				c.late.done[c.late.n%recentSeqs] = a.seq
				c.late.n++
			default:
				c.late.failed, c.late.anyFailed = a.seq, true
			}
			c.active = append(c.active[:i], c.active[i+1:]...)
			break
		}
	}
	c.activeMu.Unlock()
}
