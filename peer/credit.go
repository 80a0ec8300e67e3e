package peer

import "fmt"

// Flow control of unexpected eager data. An eager message the receiver
// has not posted a receive for is copied into its unexpected queue, so a
// sender that floods eager messages nobody receives would grow the
// receiver without bound. Each link therefore carries credit, counted in
// bytes of receiver memory:
//
//   - A sender starts every link with InitialCredit and spends
//     eagerCost(n) for each eager message of n bytes.
//   - A sender without enough credit sends the message by rendezvous
//     instead: the receiver then queues only its announcement, and the
//     data moves once a receive matches it. The sender never waits for
//     credit, so credit cannot deadlock a correct program: a receive
//     posted later still finds the message (MPI's progress rule), and
//     since both protocols share the link's one ordered queue, messages
//     keep MPI's non-overtaking order per source and context.
//   - The receiver grants credit back (a Credit frame) as the unexpected
//     queue frees it: a message a posted receive took on arrival frees its
//     cost at once, an unexpected one when it is received or dropped.
//     Grants are batched at a quarter of the link's window, so their frames
//     cost nothing measurable.
//   - On the first message from a peer the receiver tops the link up from
//     InitialCredit to its window: min(link limit, endpoint limit / ranks),
//     never below InitialCredit.
//
// An eager frame past the credit the receiver granted is a protocol
// violation and fails the link, as does a peer with more unexpected
// rendezvous announcements than an endpoint can have rendezvous sends
// (maxSlots). So a rank holds at most max(limit, ranks × InitialCredit)
// bytes of unexpected eager data and maxSlots announcements per link.
const (
	// InitialCredit is the eager credit, in bytes of receiver memory, a
	// sender assumes on a new link before the receiver grants more.
	InitialCredit = 256 << 10
	// entryCost is what one unexpected message costs beyond its payload
	// buffer: its queue entry and index, rounded up.
	entryCost = 128
)

// eagerCost is the credit an eager message of n bytes takes: the size of
// the payload buffer the receiver's pool gives it (bufClass) and its entry.
// Both ends compute it, so it is part of the frame protocol.
func eagerCost(n int) int64 {
	if n == 0 {
		return entryCost
	}
	return 1<<(bufClass(n)+bufMinShift) + entryCost
}

// takeCredit spends n bytes of the link's eager credit; false if it has
// not that much, and then nothing is spent.
func (c *conn) takeCredit(n int64) bool {
	if c.credit.Load() < n {
		return false
	}
	if c.credit.Add(-n) >= 0 {
		return true
	}
	c.credit.Add(n)
	return false
}

// maxCredit bounds a sender's credit: a grant past it is a malformed frame
// (no receiver has that much memory), and the sum cannot overflow.
const maxCredit = 1 << 50

// creditArrived takes a receiver's grant.
func (c *conn) creditArrived(h *Header) error {
	if h.Total == 0 || c.credit.Add(int64(h.Total)) > maxCredit {
		return fmt.Errorf("%w: credit grant of %d bytes from rank %d", ErrFrame, h.Total, c.rank)
	}
	return nil
}

// linkWindow is the eager credit the endpoint lets one peer hold.
func (e *Endpoint) linkWindow() int64 {
	return max(InitialCredit, min(e.linkLimit, e.unexpLimit/int64(e.size)))
}

// initCreditLocked sets up the receiving side of c's credit on its first
// message: the window, and the top-up grant owed beyond InitialCredit.
// Called with e.mu held.
func (e *Endpoint) initCreditLocked(c *conn) {
	c.creditInit = true
	c.window = e.linkWindow()
	c.owed = c.window - InitialCredit
}

// chargeLocked accounts for an eager or RTS frame from c that goes to the
// unexpected queue; an error means the peer broke the protocol. Called
// with e.mu held.
func (e *Endpoint) chargeLocked(c *conn, h *Header, cost int64) error {
	if h.Kind == KindRTS {
		if c.rts >= e.rtsLimit {
			return fmt.Errorf("%w: rank %d has %d unexpected rendezvous announcements queued, more than it can have sends", ErrFrame, c.rank, c.rts)
		}
		c.rts++
		return nil
	}
	if c.held+c.owed+cost > c.window {
		return fmt.Errorf("%w: rank %d sent %d bytes of eager data past the %d-byte credit it was granted", ErrFrame, c.rank, c.held+c.owed+cost-c.window, c.window)
	}
	c.held += cost
	e.unexpBytes += cost
	e.unexpPeak = max(e.unexpPeak, e.unexpBytes)
	return nil
}

// releaseLocked accounts for unexpected message m leaving the queue for
// good (received or dropped) and returns the credit to grant its sender
// now, if any. Called with e.mu held.
func (e *Endpoint) releaseLocked(c *conn, m *Message) int64 {
	if c == nil {
		return 0
	}
	if m.kind == KindRTS {
		c.rts--
		return 0
	}
	c.held -= m.cost
	e.unexpBytes -= m.cost
	return c.returnLocked(m.cost)
}

// returnLocked adds cost to what c's peer is owed and returns the grant to
// send now: everything owed, once it reaches a quarter of the window.
// Called with e.mu held.
func (c *conn) returnLocked(cost int64) int64 {
	c.owed += cost
	if c.owed < c.window/4 {
		return 0
	}
	g := c.owed
	c.owed = 0
	return g
}

// grant sends the peer n bytes of credit. Called without e.mu: a write
// on a memory link runs the peer's handler.
func (c *conn) grant(n int64) {
	if n <= 0 {
		return
	}
	op := c.ep.GetOp()
	op.kind, op.want = opCredit, int(n)
	c.enqueue(op, &c.ctrl)
}

// Stats is a snapshot of an endpoint's bounded resources, for tests and
// monitoring.
type Stats struct {
	// UnexpectedBytes is the credit unexpected eager messages hold now
	// (payload buffers and entries); UnexpectedPeak the most they held.
	UnexpectedBytes, UnexpectedPeak int64
	// UnexpectedLimit is the endpoint's bound on UnexpectedBytes
	// (Config.UnexpectedLimit); one peer's share of it is LinkWindow.
	UnexpectedLimit, LinkWindow int64
	// UnexpectedMessages counts the unexpected queue's entries (eager
	// messages and rendezvous announcements).
	UnexpectedMessages int
	// Rendezvous counts the rendezvous operations holding a slot.
	Rendezvous int
	// PoolBytes is what the idle payload buffers kept for reuse hold.
	PoolBytes int64
	// IdleOps counts the Ops kept for reuse.
	IdleOps int
}

// Stats returns the endpoint's resource counters.
func (e *Endpoint) Stats() Stats {
	e.mu.Lock()
	s := Stats{UnexpectedBytes: e.unexpBytes, UnexpectedPeak: e.unexpPeak, UnexpectedLimit: e.unexpLimit,
		LinkWindow: e.linkWindow(), UnexpectedMessages: e.unexp.n, Rendezvous: len(e.slots) - len(e.freeSlots), PoolBytes: e.poolBytes}
	e.mu.Unlock()
	e.poolMu.Lock()
	s.IdleOps = len(e.ops)
	e.poolMu.Unlock()
	return s
}
