package agree

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math/bits"
	"slices"
	"strings"
	"sync"
)

// Transport sends the protocol's messages of one group. Send may be
// called from any goroutine, never with the group's lock held; a message
// to a failed member may be lost, a message to a live one must arrive,
// in order per pair.
type Transport interface {
	Send(to int, msg []byte)
}

// Result is the outcome of one agreement, the same on every member that
// survives it.
type Result struct {
	// Vec is the bitwise AND of the vectors contributed.
	Vec []byte
	// Missing lists, in increasing order, the members whose contribution
	// Vec lacks: members that failed before contributing.
	Missing []int
	// Mismatch reports that members contributed vectors of different
	// lengths (they called different operations): Vec is then the AND of
	// the contributions of one length.
	Mismatch bool
	// Sent lists the members this one sent the decision to before it
	// returned (its children in the tree): a barrier's member that leaves
	// next waits for them to leave first, so those messages arrive.
	Sent []int
	// Err is set when the agreement could not finish here: the group was
	// stopped (its rank closed, its communicator freed).
	Err error
}

// MaxPending is how many agreements a member may have started and not yet
// seen decided; it bounds the messages a group keeps for agreements it
// has not entered.
const MaxPending = 16

// ErrTooMany is returned by Start with MaxPending agreements pending.
var ErrTooMany = errors.New("too many agreements pending")

// ErrLeft is the error of a Start after Leave.
var ErrLeft = errors.New("member left the group")

// ErrMessage is returned by Receive for a message that is malformed or
// names another group; the message is dropped.
var ErrMessage = errors.New("malformed agreement message")

// Group is one member's side of the agreements of one group of n members.
// It is safe for concurrent use.
type Group struct {
	n, me int
	nonce uint64
	t     Transport

	mu      sync.Mutex
	queue   []outMsg // what locked steps made, to send in turn (unlockAndSend)
	sending bool     // a goroutine is sending queue
	failed  []bool
	coord   int // the lowest member not known failed: the root
	next    uint32
	pending int
	inst    map[uint32]*instance
	stopped error

	// Leave: this member leaves once every other member has left or
	// failed, answering for its decisions until then
	held     bool // an agreement other than a barrier ran: its decision may be asked for
	leaving  bool
	sentLeft bool
	left     []bool // the members that told this one they left
	onLeft   func()
}

// up is the latest gather message a member sent this one.
type up struct {
	era      int      // the coordinator it was meant for
	low      uint32   // the lowest agreement its cover has not decided
	vec      []byte   // the AND of its cover's contributions
	cover    []uint64 // the members whose contribution vec holds
	mismatch bool
	cand     *decision // a decision a member of its subtree holds; nil: none
}

type decision struct {
	vec      []byte
	missing  []int
	mismatch bool
	origin   int    // the coordinator that computed it
	holder   int    // for a candidate: the member that holds it
	floor    uint32 // every survivor decided every agreement below it
}

type instance struct {
	seq     uint32
	entered bool
	barrier bool
	own     []byte
	done    func(Result)
	ups     map[int]*up

	// what went to the parent last, so a changed tree or cover is sent
	// again and an unchanged one is not
	sentTo, sentEra, sentCount, sentCand int

	dec   *decision // set once decided
	decBy int       // the coordinator whose announcement this member took or made
	decTo []uint64  // the members sent decBy's announcement
	sent  []int
	fin   bool // the local call completed
}

// New returns member me's side of a group of n members. nonce names the
// group for the lifetime of the job: messages with another nonce are
// dropped.
func New(n, me int, nonce uint64, t Transport) *Group {
	return &Group{n: n, me: me, nonce: nonce, t: t, failed: make([]bool, n), left: make([]bool, n), inst: map[uint32]*instance{}}
}

// outMsg is a message to send, or (done set) a completion to call.
type outMsg struct {
	to   int
	msg  []byte
	done func()
}

// outbox collects what a locked step sends and completes, to do once the
// lock is released (unlockAndSend).
type outbox struct {
	msgs  []outMsg
	dones []func()
}

// unlockAndSend queues what o holds, releases the lock and sends what is
// queued, in the order the locked steps made it: one goroutine at a time
// sends (the others only queue), so two steps that unlock in turn cannot
// send to the same member out of turn. Sent by each step after its
// unlock, a gather for a failed coordinator could overtake the one for
// its successor that the member made next, and the parent then kept the
// stale one and waited for ever (examples/resilient, 5 in about 358,000
// runs). A Send that comes back here (a lost link reported as a failure)
// queues and returns; the sender takes it next. Called with mu held.
func (g *Group) unlockAndSend(o *outbox) {
	g.queue = append(g.queue, o.msgs...)
	for _, d := range o.dones {
		g.queue = append(g.queue, outMsg{done: d})
	}
	if g.sending {
		g.mu.Unlock()
		return
	}
	g.sending = true
	for len(g.queue) > 0 {
		q := g.queue
		g.queue = nil
		g.mu.Unlock()
		for _, m := range q {
			if m.done != nil {
				m.done()
			} else {
				g.t.Send(m.to, m.msg)
			}
		}
		g.mu.Lock()
	}
	g.sending = false
	g.mu.Unlock()
}

// Start enters the next agreement with contribution vec; done is called
// once with the result (possibly before Start returns, never with the
// group's lock held). It returns the agreement's sequence number.
func (g *Group) Start(vec []byte, done func(Result)) (uint32, error) {
	return g.start(vec, false, done)
}

// StartBarrier enters the next agreement as a barrier whose members leave
// the group once it ends (Finalize): a decided member keeps nothing, so
// it must leave (fail, as far as the others can tell) for members still
// waiting to go on without it; if a member fails mid-broadcast, the
// members may end with different values. Use its result as a barrier
// only. Its gather is not tied to a coordinator, so members that leave
// one after another, the coordinator first, do not make the others send
// their parts again.
func (g *Group) StartBarrier(vec []byte, done func(Result)) (uint32, error) {
	return g.start(vec, true, done)
}

func (g *Group) start(vec []byte, barrier bool, done func(Result)) (uint32, error) {
	var o outbox
	g.mu.Lock()
	if g.stopped != nil || g.leaving {
		err := g.stopped
		if err == nil {
			err = ErrLeft
		}
		g.mu.Unlock()
		return 0, err
	}
	if g.pending >= MaxPending {
		g.mu.Unlock()
		return 0, fmt.Errorf("%d agreements started and not decided: %w", g.pending, ErrTooMany)
	}
	seq := g.next
	g.next++
	g.pending++
	in := g.instance(seq)
	in.entered, in.done, in.barrier = true, done, barrier
	g.held = g.held || !barrier
	if in.dec != nil {
		g.finish(in, &o) // the decision came first
	} else {
		in.own = append(make([]byte, 0, len(vec)), vec...)
		g.progress(in, &o)
	}
	g.unlockAndSend(&o)
	return seq, nil
}

// instance returns agreement seq's state, making it. Called with mu held.
func (g *Group) instance(seq uint32) *instance {
	in := g.inst[seq]
	if in == nil {
		in = &instance{seq: seq, ups: map[int]*up{}, sentTo: -1, sentEra: -1, sentCand: -1, decBy: -1}
		g.inst[seq] = in
	}
	return in
}

// The tree is the binomial tree over the members' numbers, rooted at 0
// (member m's parent is m with its lowest set bit cleared, its subtree
// the range [m, m+lowbit(m))), with the failed members taken out: a
// member's parent is its nearest live ancestor, and a member with none,
// like the coordinator itself, hangs from the coordinator. A failure so
// moves only the failed member's children, and members that leave one by
// one (Finalize) do not reshape the tree under those still waiting.
//
//	0 ─┬─ 1            0 failed:   1 ─┬─ 2 ── 3
//	   ├─ 2 ── 3                      ├─ 4 ─┬─ 5
//	   ├─ 4 ─┬─ 5                     │     └─ 6 ── 7
//	   │     └─ 6 ── 7                └─ 8
//	   └─ 8
func (g *Group) parentOf(m int) int {
	for a := m; a != 0; {
		a &= a - 1
		if !g.failed[a] {
			return a
		}
	}
	return g.coord
}

func (g *Group) parent() int { return g.parentOf(g.me) }

// span is the range of members whose parts this member gathers: its
// subtree's, or everyone's at the coordinator.
func (g *Group) span() (lo, hi int) {
	if g.me == g.coord || g.me == 0 {
		return 0, g.n
	}
	return g.me, min(g.me+g.me&-g.me, g.n)
}

func (g *Group) children(f func(m int)) {
	lo, hi := g.span()
	for m := lo; m < hi; m++ {
		if m != g.me && !g.failed[m] && g.parentOf(m) == g.me {
			f(m)
		}
	}
}

// low is the lowest agreement this member has not decided. Called with
// mu held.
func (g *Group) low() uint32 {
	low := g.next
	for seq, in := range g.inst {
		if in.dec == nil && int32(seq-g.next) < 0 && int32(seq-low) < 0 {
			low = seq
		}
	}
	return low
}

// progress moves agreement in on as far as this member's knowledge lets
// it. Called with mu held.
//
// The gather is tagged with its coordinator (its era): a member counts a
// contribution for the coordinator it was sent to only, and a member
// that names a coordinator never again accepts an earlier one's
// decision. So a coordinator whose gather covers a member knows that the
// member either holds no decision and will take none but a later
// coordinator's, or told it the decision it holds (a candidate); a
// candidate wins over the contributions, as with a single coordinator.
func (g *Group) progress(in *instance, o *outbox) {
	if in.dec != nil {
		if in.barrier {
			return // it left: whoever still waits goes on without it
		}
		switch {
		case g.coord == g.me && in.decBy != g.me:
			// the root holds a decision: it announces it as its own
			g.announce(in, g.me, o)
		case in.decBy == g.coord:
			g.forward(in, o) // children the tree gave it since
		default:
			// its decision came from an earlier coordinator: the new
			// one hears of it through the tree
			g.sendUp(in, nil, nil, false, g.low(), &decision{vec: in.dec.vec, missing: in.dec.missing,
				mismatch: in.dec.mismatch, origin: in.dec.origin, holder: g.me, floor: in.dec.floor}, 1, o)
		}
		return
	}
	era := g.coord
	var acc []byte
	cover := make([]uint64, (g.n+63)/64)
	mismatch, haveAcc := false, false
	low := g.low()
	var cand *decision
	add := func(vec []byte) {
		switch {
		case !haveAcc:
			acc, haveAcc = append(make([]byte, 0, len(vec)), vec...), true
		case len(vec) != len(acc):
			mismatch = true
		default:
			for i, b := range vec {
				acc[i] &= b
			}
		}
	}
	if in.entered {
		add(in.own)
		cover[g.me/64] |= 1 << (g.me % 64)
	}
	for _, u := range in.ups {
		if u.era != era && !in.barrier {
			continue // sent for another coordinator: the sender sends again
		}
		if c := u.cand; c != nil && !g.failed[c.holder] && (cand == nil || c.origin > cand.origin) {
			cand = c
		}
		if u.vec != nil {
			add(u.vec)
		}
		mismatch = mismatch || u.mismatch
		for i, w := range u.cover {
			cover[i] |= w
		}
		if int32(u.low-low) < 0 {
			low = u.low
		}
	}
	if cand != nil {
		if g.me == era {
			g.decide(in, cand, o)
		} else {
			g.sendUp(in, acc, cover, mismatch, low, cand, count(cover), o)
		}
		return
	}
	if !in.entered {
		return
	}
	lo, hi := g.span()
	for m := lo; m < hi; m++ {
		if !g.failed[m] && cover[m/64]&(1<<(m%64)) == 0 {
			return // still waiting for m's part
		}
	}
	if g.me != era {
		g.sendUp(in, acc, cover, mismatch, low, nil, count(cover), o)
		return
	}
	var missing []int
	for m := range g.n {
		if cover[m/64]&(1<<(m%64)) == 0 {
			missing = append(missing, m)
		}
	}
	g.decide(in, &decision{vec: acc, missing: missing, mismatch: mismatch, origin: g.me, floor: low}, o)
}

func count(cover []uint64) int {
	c := 0
	for _, w := range cover {
		c += bits.OnesCount64(w)
	}
	return c
}

// sendUp sends this member's part of agreement in to its parent, unless
// the parent has it already. Called with mu held.
func (g *Group) sendUp(in *instance, acc []byte, cover []uint64, mismatch bool, low uint32, cand *decision, n int, o *outbox) {
	p, c := g.parent(), -1
	if cand != nil {
		c = cand.origin
	}
	if in.sentTo == p && (in.sentEra == g.coord || in.barrier) && in.sentCount == n && in.sentCand == c {
		return
	}
	in.sentTo, in.sentEra, in.sentCount, in.sentCand = p, g.coord, n, c
	if cover == nil {
		cover = make([]uint64, (g.n+63)/64)
		cover[g.me/64] |= 1 << (g.me % 64)
	}
	o.msgs = append(o.msgs, outMsg{to: p, msg: g.encodeUp(in.seq, &up{era: g.coord, low: low, vec: acc, cover: cover, mismatch: mismatch, cand: cand})})
}

// decide takes d as agreement in's result, announced by this member's
// coordinator (itself, at the root): it forwards d to its children and
// completes the local call if there is one (else keeps d for Start).
// Called with mu held.
func (g *Group) decide(in *instance, d *decision, o *outbox) {
	in.dec, in.ups = d, nil
	g.announce(in, g.coord, o)
	if in.entered {
		g.finish(in, o)
	}
	g.prune(d.floor)
}

// announce forwards in's decision as by's announcement to this member's
// children. Called with mu held.
func (g *Group) announce(in *instance, by int, o *outbox) {
	in.decBy, in.decTo = by, make([]uint64, (g.n+63)/64)
	g.forward(in, o)
}

// forward sends in's decision to the children that do not have it yet.
// Called with mu held.
func (g *Group) forward(in *instance, o *outbox) {
	var msg []byte
	g.children(func(m int) {
		if in.decTo[m/64]&(1<<(m%64)) != 0 {
			return
		}
		in.decTo[m/64] |= 1 << (m % 64)
		if msg == nil {
			msg = g.encodeDec(in.seq, in.decBy, in.dec)
		}
		o.msgs = append(o.msgs, outMsg{to: m, msg: msg})
		if !in.fin {
			in.sent = append(in.sent, m)
		}
	})
}

// finish completes the local call of a decided agreement. Called with mu
// held.
func (g *Group) finish(in *instance, o *outbox) {
	in.fin = true
	g.pending--
	d := in.dec
	res := Result{Vec: append([]byte(nil), d.vec...), Missing: append([]int(nil), d.missing...), Mismatch: d.mismatch, Sent: in.sent}
	done := in.done
	o.dones = append(o.dones, func() { done(res) })
	if in.barrier {
		delete(g.inst, in.seq) // it leaves: nothing more to answer
	}
	g.checkLeave(o)
}

// Leave ends this member's part in the group (its communicator is
// freed): it starts no more agreements and calls done (never with the
// group's lock held) once no other member can need it. Until then it
// answers for the decisions it holds: a member that took a decision from
// a coordinator that failed mid-broadcast may be the only survivor that
// holds it, and the others learn it from that member once they learn of
// the failure, possibly long after that member's own call returned. So
// a member whose agreements are all decided tells every other member it
// left, and goes once each of them has left or failed; a member that
// told it left has decided every agreement (they run the same ones) and
// needs it no more. A group that ran no agreement but barriers holds
// nothing to answer for: its member goes at once, without a message (a
// freed communicator that ran no Agree or Shrink costs nothing, nor does
// Disconnect's barrier).
func (g *Group) Leave(done func()) {
	var o outbox
	g.mu.Lock()
	if g.stopped != nil || g.leaving {
		g.mu.Unlock()
		done()
		return
	}
	if !g.held {
		g.stopped = ErrLeft
		g.mu.Unlock()
		done()
		return
	}
	g.leaving, g.onLeft = true, done
	g.checkLeave(&o)
	g.unlockAndSend(&o)
}

// checkLeave, for a member leaving, tells the others once its agreements
// are all decided, and ends the group once every other member left or
// failed. Called with mu held.
func (g *Group) checkLeave(o *outbox) {
	if !g.leaving || g.stopped != nil || g.pending > 0 {
		return
	}
	if !g.sentLeft {
		g.sentLeft = true
		msg := g.header(nil, kindLeft, g.next, nil, false)
		for m := range g.n {
			if m != g.me && !g.failed[m] {
				o.msgs = append(o.msgs, outMsg{to: m, msg: msg})
			}
		}
	}
	for m := range g.n {
		if m != g.me && !g.failed[m] && !g.left[m] {
			return // m may still need this member's decisions
		}
	}
	g.stopped = ErrLeft
	clear(g.inst)
	o.dones = append(o.dones, g.onLeft)
	g.onLeft = nil
}

// prune forgets the decided agreements below floor, which every survivor
// decided: nobody will ask for them again. Called with mu held.
func (g *Group) prune(floor uint32) {
	for seq, in := range g.inst {
		if in.fin && int32(seq-floor) < 0 {
			delete(g.inst, seq)
		}
	}
}

// Failed tells the group that member m failed. Knowledge of failures only
// grows: a member once failed stays failed.
func (g *Group) Failed(m int) {
	if m < 0 || m >= g.n || m == g.me {
		return
	}
	var o outbox
	g.mu.Lock()
	if g.failed[m] {
		g.mu.Unlock()
		return
	}
	g.failed[m] = true
	for g.failed[g.coord] {
		g.coord++ // never past me
	}
	for _, in := range g.inst {
		g.progress(in, &o)
	}
	g.checkLeave(&o)
	g.unlockAndSend(&o)
}

// IsFailed reports whether member m is known failed here.
func (g *Group) IsFailed(m int) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return m >= 0 && m < g.n && g.failed[m]
}

// Stop ends the group: pending agreements complete with err, and later
// Starts fail with it. Messages are dropped from now on.
func (g *Group) Stop(err error) {
	var o outbox
	g.mu.Lock()
	if g.stopped != nil {
		g.mu.Unlock()
		return
	}
	g.stopped = err
	if g.onLeft != nil {
		o.dones = append(o.dones, g.onLeft)
		g.onLeft = nil
	}
	for seq, in := range g.inst {
		if in.entered && !in.fin {
			done := in.done
			o.dones = append(o.dones, func() { done(Result{Err: err}) })
		}
		delete(g.inst, seq)
	}
	g.pending = 0
	g.unlockAndSend(&o)
}

// Receive takes a message from member from. Messages of agreements this
// member has forgotten, or too far ahead of it to be genuine, are dropped.
func (g *Group) Receive(from int, msg []byte) error {
	if from < 0 || from >= g.n || from == g.me {
		return fmt.Errorf("message from member %d of %d: %w", from, g.n, ErrMessage)
	}
	m, err := g.decode(msg)
	if err != nil {
		return err
	}
	if m.nonce != g.nonce {
		return nil // a freed communicator's whose context was reused
	}
	var o outbox
	g.mu.Lock()
	defer g.unlockAndSend(&o)
	if g.stopped != nil {
		return nil
	}
	if m.left {
		g.left[from] = true
		g.checkLeave(&o)
		return nil
	}
	ahead := int32(m.seq - g.next)
	in := g.inst[m.seq]
	switch {
	case in != nil:
	case ahead < 0:
		return nil // decided by every survivor
	case ahead >= 2*MaxPending:
		return fmt.Errorf("agreement %d from member %d, %d ahead of this member: %w", m.seq, from, ahead, ErrMessage)
	default:
		in = g.instance(m.seq)
	}
	if m.up != nil {
		if in.dec == nil {
			in.ups[from] = m.up
			g.progress(in, &o)
		} else if m.up.era == in.decBy && !in.barrier {
			// a member the tree moved under this one after it decided
			in.decTo[from/64] |= 1 << (from % 64)
			o.msgs = append(o.msgs, outMsg{to: from, msg: g.encodeDec(in.seq, in.decBy, in.dec)})
		}
		return nil
	}
	switch {
	case g.failed[from] || m.by != g.coord && !in.barrier:
		// fenced, or not this member's coordinator's: a member that
		// moved on never takes an earlier coordinator's word (a barrier
		// takes any: every member had entered it)
	case in.dec == nil:
		g.decide(in, m.dec, &o)
	case in.decBy != g.coord && !in.barrier:
		g.announce(in, g.coord, &o) // its coordinator now speaks for it
	}
	return nil
}

// Wire format, little-endian. Every message starts with
//
//	kind u8 | flags u8 (1: mismatch, 2: candidate, 4: no vec) | 0 u16 | seq u32 | nonce u64 | len(vec) u32
//
// then, for a gather message (kindUp),
//
//	era u32 | low u32 | vec | cover: n bits
//	[candidate: origin u32 | holder u32 | mismatch u8 | 0 u24 | floor u32 | len u32 | vec | missing: n bits]
//
// for a decision (kindDec)
//
//	by u32 | origin u32 | floor u32 | vec | missing: n bits
//
// and for a member that left (kindLeft, its seq the number of agreements
// it ran) nothing more.
const (
	kindUp   = 1
	kindDec  = 2
	kindLeft = 3

	headerLen = 20
	candLen   = 20
)

// MaxMessage is the size of the largest message of a group of n members
// whose vectors are at most vec bytes: the buffer a receiver needs.
func MaxMessage(n, vec int) int { return headerLen + 8 + vec + (n+7)/8 + candLen + vec + (n+7)/8 }

type message struct {
	seq   uint32
	nonce uint64
	up    *up
	by    int
	dec   *decision
	left  bool
}

func (g *Group) header(b []byte, kind byte, seq uint32, vec []byte, mismatch bool) []byte {
	b = append(b, kind, 0, 0, 0)
	if mismatch {
		b[1] = 1
	}
	b = binary.LittleEndian.AppendUint32(b, seq)
	b = binary.LittleEndian.AppendUint64(b, g.nonce)
	return binary.LittleEndian.AppendUint32(b, uint32(len(vec)))
}

func (g *Group) appendMask(b []byte, members []int) []byte {
	at := len(b)
	b = append(b, make([]byte, (g.n+7)/8)...)
	for _, m := range members {
		b[at+m/8] |= 1 << (m % 8)
	}
	return b
}

func (g *Group) encodeUp(seq uint32, u *up) []byte {
	b := g.header(make([]byte, 0, MaxMessage(g.n, len(u.vec))), kindUp, seq, u.vec, u.mismatch)
	b = binary.LittleEndian.AppendUint32(b, uint32(u.era))
	b = binary.LittleEndian.AppendUint32(b, u.low)
	if u.vec == nil {
		b[1] |= 4
	}
	b = append(b, u.vec...)
	at := len(b)
	b = append(b, make([]byte, (g.n+7)/8)...)
	for m := range g.n {
		if u.cover[m/64]&(1<<(m%64)) != 0 {
			b[at+m/8] |= 1 << (m % 8)
		}
	}
	if c := u.cand; c != nil {
		b[1] |= 2
		b = binary.LittleEndian.AppendUint32(b, uint32(c.origin))
		b = binary.LittleEndian.AppendUint32(b, uint32(c.holder))
		var mm byte
		if c.mismatch {
			mm = 1
		}
		b = append(b, mm, 0, 0, 0)
		b = binary.LittleEndian.AppendUint32(b, c.floor)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(c.vec)))
		b = append(b, c.vec...)
		b = g.appendMask(b, c.missing)
	}
	return b
}

func (g *Group) encodeDec(seq uint32, by int, d *decision) []byte {
	b := g.header(make([]byte, 0, headerLen+12+len(d.vec)+(g.n+7)/8), kindDec, seq, d.vec, d.mismatch)
	b = binary.LittleEndian.AppendUint32(b, uint32(by))
	b = binary.LittleEndian.AppendUint32(b, uint32(d.origin))
	b = binary.LittleEndian.AppendUint32(b, d.floor)
	b = append(b, d.vec...)
	return g.appendMask(b, d.missing)
}

// reader takes a message apart; a short or malformed one sets bad.
type reader struct {
	b   []byte
	bad bool
}

func (r *reader) u32() uint32 {
	if len(r.b) < 4 {
		r.bad = true
		return 0
	}
	v := binary.LittleEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v
}

func (r *reader) member(n int) int {
	v := r.u32()
	if v >= uint32(n) {
		r.bad = true
		return 0
	}
	return int(v)
}

func (r *reader) bytes(k int) []byte {
	if k < 0 || len(r.b) < k {
		r.bad = true
		return nil
	}
	v := make([]byte, k)
	copy(v, r.b)
	r.b = r.b[k:]
	return v
}

// mask reads n bits; bits past n make the message malformed.
func (r *reader) mask(n int) []int {
	b := r.bytes((n + 7) / 8)
	if r.bad {
		return nil
	}
	var ms []int
	for i, x := range b {
		for x != 0 {
			m := i*8 + bits.TrailingZeros8(x)
			x &= x - 1
			if m >= n {
				r.bad = true
				return nil
			}
			ms = append(ms, m)
		}
	}
	return ms
}

func (g *Group) decode(b []byte) (*message, error) {
	if len(b) < headerLen {
		return nil, fmt.Errorf("%d bytes: %w", len(b), ErrMessage)
	}
	kind, flags := b[0], b[1]
	m := &message{seq: binary.LittleEndian.Uint32(b[4:]), nonce: binary.LittleEndian.Uint64(b[8:])}
	r := reader{b: b[headerLen:]}
	vlen := int(binary.LittleEndian.Uint32(b[16:]))
	switch {
	case kind == kindUp && flags <= 7:
		u := &up{mismatch: flags&1 != 0}
		u.era = r.member(g.n)
		u.low = r.u32()
		u.vec = r.bytes(vlen)
		if flags&4 != 0 {
			r.bad = r.bad || vlen != 0
			u.vec = nil
		}
		u.cover = make([]uint64, (g.n+63)/64)
		for _, x := range r.mask(g.n) {
			u.cover[x/64] |= 1 << (x % 64)
		}
		if flags&2 != 0 {
			c := &decision{}
			c.origin, c.holder = r.member(g.n), r.member(g.n)
			mm := r.u32()
			c.mismatch = mm == 1
			r.bad = r.bad || mm > 1
			c.floor = r.u32()
			c.vec = r.bytes(int(r.u32()))
			c.missing = r.mask(g.n)
			u.cand = c
		}
		m.up = u
	case kind == kindDec && flags <= 1:
		d := &decision{mismatch: flags == 1}
		m.by = r.member(g.n)
		d.origin = r.member(g.n)
		d.floor = r.u32()
		d.vec = r.bytes(vlen)
		d.missing = r.mask(g.n)
		m.dec = d
	case kind == kindLeft && flags == 0 && vlen == 0:
		m.left = true
	default:
		return nil, fmt.Errorf("kind %d, flags %d: %w", kind, flags, ErrMessage)
	}
	if r.bad || len(r.b) != 0 {
		return nil, fmt.Errorf("kind %d, %d bytes: %w", kind, len(b), ErrMessage)
	}
	return m, nil
}

// String describes the group's state, for hang reports.
func (g *Group) String() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var s strings.Builder
	fmt.Fprintf(&s, "member %d of %d, coordinator %d, next %d, pending %d", g.me, g.n, g.coord, g.next, g.pending)
	if g.me != g.coord {
		fmt.Fprintf(&s, ", parent %d", g.parent())
	}
	var failed []int
	for m, f := range g.failed {
		if f {
			failed = append(failed, m)
		}
	}
	if failed != nil {
		fmt.Fprintf(&s, ", failed %v", failed)
	}
	for _, seq := range slices.Sorted(maps.Keys(g.inst)) {
		in := g.inst[seq]
		fmt.Fprintf(&s, "\n  agreement %d: entered %v decided %v (by %d) sent to %d for %d, heard from", seq, in.entered, in.dec != nil, in.decBy, in.sentTo, in.sentEra)
		// each member's latest part, with the coordinator it was for
		// (one for another is set aside) and the members it covers
		for _, m := range slices.Sorted(maps.Keys(in.ups)) {
			u := in.ups[m]
			fmt.Fprintf(&s, " %d (for %d, %d members)", m, u.era, count(u.cover))
		}
	}
	return s.String()
}
