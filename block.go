package meshmpi

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/meshmpi/meshmpi/coll"
	"github.com/meshmpi/meshmpi/peer"
)

// blockedIn is what a rank is parked in, for hang reports: written when
// the rank parks (after its spin, so the fast path never pays for it) and
// cleared when it wakes. Plain values, no pointer to the caller's
// request: a blocking call's request lives on its stack.
type blockedIn struct {
	call      string // "send", "receive", "wait", a collective's plan name; "" while not parked
	comm      *Comm
	peer, tag int       // point-to-point: the peer (in comm, or AnySource) and the tag
	run       *coll.Run // a collective's run, whose progress the report reads
	internal  bool      // the library's own exchange (Finalize, a communicator constructor)
}

// await waits for x as the rank's wait policy says, then parks until it
// finishes, saying what it waits for while parked.
func (p *proc) await(x completion, b blockedIn) {
	p.wait.wait(p.ep, x.Finished)
	p.parkUntil(x, b)
}

// parkUntil parks until x finishes, if it has not, saying what the rank
// waits for while parked.
func (p *proc) parkUntil(x completion, b blockedIn) {
	if x.Finished() {
		return
	}
	p.park(b)
	for !x.Finished() {
		<-x.Done()
	}
	if p.timedOut.Load() {
		// past EnvTimeout the rank reported this call and lingers
		// before exiting 124: a peer that timed out first and exited
		// fails the call, and returning that failure would let the
		// program exit with its own status instead
		select {}
	}
	p.unpark()
}

func (p *proc) park(b blockedIn) {
	p.blockMu.Lock()
	p.blocked = b
	p.blockMu.Unlock()
}

func (p *proc) unpark() {
	p.blockMu.Lock()
	p.blocked = blockedIn{}
	p.blockMu.Unlock()
}

// block is what a point-to-point request waits for.
func (q *p2pRequest) block() blockedIn {
	call := "receive"
	if q.kind == p2pSend {
		call = "send"
	}
	return blockedIn{call: call, comm: q.c, peer: q.rank, tag: q.tag, internal: q.ctx == q.c.collContext()}
}

// block is what a blocking collective waits for.
func (q *collRequest) block() blockedIn {
	return blockedIn{call: q.run.Plan().Name, comm: q.c, run: q.run}
}

// block is what a request's Wait waits for.
func (r *Request) block() blockedIn {
	switch x := r.impl.(type) {
	case *p2pRequest:
		return x.block()
	case *collRequest:
		return x.block()
	}
	return blockedIn{call: "wait"}
}

// proc is the rank a request belongs to, nil if it has none (a
// generalized request).
func (r *Request) proc() *proc {
	switch x := r.impl.(type) {
	case *p2pRequest:
		return x.c.p
	case *collRequest:
		return x.c.p
	}
	return nil
}

// report says what the rank is parked in, in MPI terms, or "" when it is
// not in a blocking call of the library.
func (p *proc) report() string {
	p.blockMu.Lock()
	b := p.blocked
	p.blockMu.Unlock()
	switch {
	case b.call == "":
		return ""
	case b.internal:
		return fmt.Sprintf("Finalize or a communicator constructor on %s: waiting for rank %d", b.comm.name, b.peer)
	case b.run != nil:
		done, total, from, to := b.run.Progress()
		name, algo, _ := strings.Cut(b.call, "/")
		if name != "" {
			name = strings.ToUpper(name[:1]) + name[1:]
		}
		if algo != "" {
			name += " (" + algo + ")"
		}
		s := fmt.Sprintf("%s on %s, step %d of %d", name, commName(b.comm), done+1, total)
		if w := waitingFor(from, to); w != "" {
			s += ": " + w
		}
		return s
	case b.call == "send":
		return fmt.Sprintf("Send(to rank %d, tag %d) on %s: waiting for rank %d to receive it", b.peer, b.tag, commName(b.comm), b.peer)
	case b.call == "receive":
		return fmt.Sprintf("Recv(from %s, %s) on %s: waiting for a message from %s", sourceName(b.peer), tagName(b.tag), commName(b.comm), sourceName(b.peer))
	case b.call == "Agree":
		// the agreement's tree, and whom this rank heard from: a member
		// that never answers shows as the one missing
		return fmt.Sprintf("Agree on %s: %s", commName(b.comm), strings.ReplaceAll(b.comm.agree.String(), "\n", "\n  "))
	}
	return b.call + " on " + commName(b.comm)
}

// commName names c in a report: its name, or its id.
func commName(c *Comm) string {
	if c == nil {
		return "no communicator"
	}
	if c.name != "" {
		return c.name
	}
	return fmt.Sprintf("communicator %d", c.id)
}

// waitingFor says which peers a collective's transfers in flight wait for.
func waitingFor(from, to []int) string {
	var parts []string
	if len(from) > 0 {
		parts = append(parts, "waiting for a message from "+rankList(from))
	}
	if len(to) > 0 {
		parts = append(parts, "waiting for "+rankList(to)+" to take its message")
	}
	return strings.Join(parts, "; ")
}

func rankList(rs []int) string {
	if len(rs) == 1 {
		return fmt.Sprintf("rank %d", rs[0])
	}
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = fmt.Sprint(r)
	}
	return "ranks " + strings.Join(s, ", ")
}

var _ completion = (*peer.Op)(nil)

// hangReport is the error of a Run past its timeout: what each rank is
// blocked in, and whether the ranks still running all wait in the library;
// a rank that returned an error (failed, under KeepGoing) says which.
func hangReport(procs []*proc, ended []atomic.Bool, failed []atomic.Pointer[error], timeout time.Duration) error {
	var b strings.Builder
	running, waiting := 0, 0
	for i, p := range procs {
		if ended[i].Load() {
			if err := failed[i].Load(); err != nil {
				fmt.Fprintf(&b, "\n  rank %d: returned: %v", i, *err)
			} else {
				fmt.Fprintf(&b, "\n  rank %d: returned", i)
			}
			continue
		}
		running++
		if r := p.report(); r != "" {
			waiting++
			fmt.Fprintf(&b, "\n  rank %d: %s", i, r)
		} else {
			fmt.Fprintf(&b, "\n  rank %d: running, not blocked in meshmpi", i)
		}
	}
	verdict := fmt.Sprintf("%d of %d ranks still running", running, len(procs))
	if running > 0 && waiting == running {
		verdict += ", every one blocked in meshmpi: a deadlock (or a message no rank sends)"
	}
	return fmt.Errorf("run: %w after %v: %s:%s", ErrTimeout, timeout, verdict, b.String())
}
