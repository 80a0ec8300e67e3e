package agree

import (
	"encoding/binary"
	"errors"
	"fmt"
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
	// lengths (they called different operations): Vec is then the
	// coordinator's own contribution ANDed with those of its length.
	Mismatch bool
	// Err is set when the agreement could not finish here: the group was
	// stopped (its rank closed, its communicator freed).
	Err error
}

// MaxPending is how many agreements a member may have started and not yet
// seen decided. A member that decides agreement k+MaxPending knows every
// survivor decided k (all of them contributed to k+MaxPending), which
// bounds the messages a group must keep for agreements it has not
// entered.
const MaxPending = 16

// ErrTooMany is returned by Start with MaxPending agreements pending.
var ErrTooMany = errors.New("too many agreements pending")

// Message kinds.
const (
	kindContrib  = 1
	kindDecision = 2
)

const headerLen = 20 // kind, status, 2 reserved, seq u32, nonce u64, vector length u32

// MaxMessage is the size of the largest message of a group of n members
// whose vectors are at most vec bytes: the buffer a receiver needs.
func MaxMessage(n, vec int) int { return headerLen + vec + (n+7)/8 }

// Group is one member's side of the agreements of one group of n members.
// It is safe for concurrent use.
type Group struct {
	n, me int
	nonce uint64
	t     Transport

	mu      sync.Mutex
	failed  []bool
	coord   int    // the lowest member not known failed
	next    uint32 // the sequence number of the next Start
	pending int    // started, not yet decided here
	inst    map[uint32]*instance
	stopped error
}

type instance struct {
	seq     uint32
	entered bool
	decided bool
	barrier bool // StartBarrier's: only the coordinator sends the decision
	sentTo  int  // the coordinator this member's contribution went to last; -1 none

	own      []byte // this member's contribution
	got      []bool // a message came from the member (contribution or decision)
	acc      []byte // AND of the contributions so far
	haveAcc  bool
	mismatch bool
	heard    []*decision // decisions reported by each member

	done func(Result)
}

type decision struct {
	vec      []byte
	missing  []int
	mismatch bool
}

// New returns member me's side of a group of n members. nonce names the
// group for the lifetime of the job: messages with another nonce are
// dropped.
func New(n, me int, nonce uint64, t Transport) *Group {
	return &Group{n: n, me: me, nonce: nonce, t: t, failed: make([]bool, n), inst: map[uint32]*instance{}}
}

type outMsg struct {
	to  int
	msg []byte
}

// outbox collects what a locked step sends and completes, to do once the
// lock is released.
type outbox struct {
	msgs  []outMsg
	dones []func()
}

func (o *outbox) flush(t Transport) {
	for _, m := range o.msgs {
		t.Send(m.to, m.msg)
	}
	for _, d := range o.dones {
		d()
	}
}

// Start enters the next agreement with contribution vec; done is called
// once with the result (possibly before Start returns, never with the
// group's lock held). It returns the agreement's sequence number.
func (g *Group) Start(vec []byte, done func(Result)) (uint32, error) {
	return g.start(vec, true, done)
}

// StartBarrier enters the next agreement as a barrier whose members leave
// the group once it ends (Finalize): only the coordinator sends the
// decision, so it costs 2(n-1) messages instead of n(n-1). A member that
// decided does not forward the decision, so it must leave (fail, as far
// as the others can tell) for a later coordinator to go on without it;
// and if the coordinator fails mid-broadcast, the members may end with
// different values. Use its result as a barrier only.
func (g *Group) StartBarrier(vec []byte, done func(Result)) (uint32, error) {
	return g.start(vec, false, done)
}

func (g *Group) start(vec []byte, forward bool, done func(Result)) (uint32, error) {
	var o outbox
	g.mu.Lock()
	if g.stopped != nil {
		g.mu.Unlock()
		return 0, g.stopped
	}
	if g.pending >= MaxPending {
		g.mu.Unlock()
		return 0, fmt.Errorf("%d agreements started and not decided: %w", g.pending, ErrTooMany)
	}
	seq := g.next
	g.next++
	g.pending++
	in := g.instance(seq)
	in.entered = true
	in.done = done
	in.barrier = !forward
	if in.decided {
		g.finish(in, in.heard[g.me], &o) // the decision came first
	} else {
		in.own = append([]byte(nil), vec...)
		in.got[g.me] = true
		g.contribute(in, vec)
		g.progress(in, &o)
	}
	g.mu.Unlock()
	o.flush(g.t)
	return seq, nil
}

// instance returns agreement seq's state, making it. Called with mu held.
func (g *Group) instance(seq uint32) *instance {
	in := g.inst[seq]
	if in == nil {
		in = &instance{seq: seq, sentTo: -1, got: make([]bool, g.n), heard: make([]*decision, g.n)}
		g.inst[seq] = in
	}
	return in
}

func (g *Group) contribute(in *instance, vec []byte) {
	switch {
	case !in.haveAcc:
		in.acc, in.haveAcc = append([]byte(nil), vec...), true
	case len(vec) != len(in.acc):
		in.mismatch = true
	default:
		for i, b := range vec {
			in.acc[i] &= b
		}
	}
}

// progress moves agreement in on as far as this member's knowledge lets
// it: send the contribution to a new coordinator, or decide. Called with
// mu held.
func (g *Group) progress(in *instance, o *outbox) {
	if in.decided {
		return
	}
	// the coordinator here told this member its decision before it
	// became the coordinator here
	if d := in.heard[g.coord]; d != nil && g.coord != g.me {
		g.decide(in, d, o)
		return
	}
	if !in.entered {
		return
	}
	if g.coord != g.me {
		if in.sentTo != g.coord {
			in.sentTo = g.coord
			o.msgs = append(o.msgs, outMsg{g.coord, g.encode(kindContrib, in.seq, in.own, nil, false)})
		}
		return
	}
	// the coordinator: a decision a live member holds wins
	for m, d := range in.heard {
		if d != nil && !g.failed[m] {
			g.decide(in, d, o)
			return
		}
	}
	var missing []int
	for m := range g.n {
		if !in.got[m] {
			if !g.failed[m] {
				return // still waiting for m
			}
			missing = append(missing, m)
		}
	}
	g.decide(in, &decision{vec: in.acc, missing: missing, mismatch: in.mismatch}, o)
}

// decide takes d as agreement in's result: it forwards it to every member
// not known failed and completes the local call if there is one (else
// keeps d for Start). Called with mu held.
func (g *Group) decide(in *instance, d *decision, o *outbox) {
	in.decided = true
	if !in.barrier || g.coord == g.me {
		msg := g.encode(kindDecision, in.seq, d.vec, d.missing, d.mismatch)
		for m := range g.n {
			if m != g.me && !g.failed[m] {
				o.msgs = append(o.msgs, outMsg{m, msg})
			}
		}
	}
	if !in.entered {
		in.heard[g.me] = d
		return
	}
	g.finish(in, d, o)
}

// finish completes the local call of a decided agreement. Called with mu
// held.
func (g *Group) finish(in *instance, d *decision, o *outbox) {
	delete(g.inst, in.seq)
	g.pending--
	res := Result{Vec: append([]byte(nil), d.vec...), Missing: append([]int(nil), d.missing...), Mismatch: d.mismatch}
	done := in.done
	o.dones = append(o.dones, func() { done(res) })
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
	for g.coord < g.n && g.failed[g.coord] {
		g.coord++
	}
	for _, in := range g.inst {
		g.progress(in, &o)
	}
	g.mu.Unlock()
	o.flush(g.t)
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
	for seq, in := range g.inst {
		if in.entered && !in.decided {
			done := in.done
			o.dones = append(o.dones, func() { done(Result{Err: err}) })
		}
		delete(g.inst, seq)
	}
	g.pending = 0
	g.mu.Unlock()
	o.flush(g.t)
}

// ErrMessage is returned by Receive for a message that is malformed or
// names another group; the message is dropped.
var ErrMessage = errors.New("malformed agreement message")

// Receive takes a message from member from. Messages of agreements this
// member has finished, or too far ahead of it to be genuine, are dropped.
func (g *Group) Receive(from int, msg []byte) error {
	if from < 0 || from >= g.n || from == g.me {
		return fmt.Errorf("message from member %d of %d: %w", from, g.n, ErrMessage)
	}
	kind, seq, nonce, vec, missing, mismatch, err := g.decode(msg)
	if err != nil {
		return err
	}
	if nonce != g.nonce {
		return nil // a freed communicator's whose context was reused
	}
	var o outbox
	g.mu.Lock()
	defer func() {
		g.mu.Unlock()
		o.flush(g.t)
	}()
	if g.stopped != nil {
		return nil
	}
	ahead := int32(seq - g.next)
	in := g.inst[seq]
	switch {
	case in != nil:
	case ahead < 0:
		return nil // decided here already
	case ahead >= 2*MaxPending:
		return fmt.Errorf("agreement %d from member %d, %d ahead of this member: %w", seq, from, ahead, ErrMessage)
	default:
		in = g.instance(seq)
	}
	if in.decided {
		return nil
	}
	switch kind {
	case kindContrib:
		in.got[from] = true
		g.contribute(in, vec)
		if mismatch {
			in.mismatch = true
		}
	case kindDecision:
		if g.failed[from] {
			return nil // fenced: a member that moved on never takes its word
		}
		in.got[from] = true
		d := &decision{vec: vec, missing: missing, mismatch: mismatch}
		in.heard[from] = d
		if from == g.coord || g.coord == g.me {
			g.decide(in, d, &o)
			return nil
		}
	}
	g.progress(in, &o)
	return nil
}

func (g *Group) encode(kind byte, seq uint32, vec []byte, missing []int, mismatch bool) []byte {
	n := headerLen + len(vec)
	if kind == kindDecision {
		n += (g.n + 7) / 8
	}
	b := make([]byte, n)
	b[0] = kind
	if mismatch {
		b[1] = 1
	}
	binary.LittleEndian.PutUint32(b[4:], seq)
	binary.LittleEndian.PutUint64(b[8:], g.nonce)
	binary.LittleEndian.PutUint32(b[16:], uint32(len(vec)))
	copy(b[headerLen:], vec)
	for _, m := range missing {
		b[headerLen+len(vec)+m/8] |= 1 << (m % 8)
	}
	return b
}

func (g *Group) decode(b []byte) (kind byte, seq uint32, nonce uint64, vec []byte, missing []int, mismatch bool, err error) {
	if len(b) < headerLen {
		return 0, 0, 0, nil, nil, false, fmt.Errorf("%d bytes: %w", len(b), ErrMessage)
	}
	kind, mismatch = b[0], b[1] == 1
	seq = binary.LittleEndian.Uint32(b[4:])
	nonce = binary.LittleEndian.Uint64(b[8:])
	vlen := int(binary.LittleEndian.Uint32(b[16:]))
	want := headerLen + vlen
	if kind == kindDecision {
		want += (g.n + 7) / 8
	}
	if (kind != kindContrib && kind != kindDecision) || b[1] > 1 || vlen > len(b) || len(b) != want {
		return 0, 0, 0, nil, nil, false, fmt.Errorf("kind %d, %d bytes: %w", kind, len(b), ErrMessage)
	}
	vec = append([]byte(nil), b[headerLen:headerLen+vlen]...)
	if kind == kindDecision {
		mask := b[headerLen+vlen:]
		for m := range g.n {
			if mask[m/8]&(1<<(m%8)) != 0 {
				missing = append(missing, m)
			}
		}
		if g.n%8 != 0 && mask[len(mask)-1]>>(g.n%8) != 0 {
			return 0, 0, 0, nil, nil, false, fmt.Errorf("missing set names members past %d: %w", g.n, ErrMessage)
		}
	}
	return kind, seq, nonce, vec, missing, mismatch, nil
}

// String describes the group's state, for hang reports.
func (g *Group) String() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := fmt.Sprintf("member %d of %d, coordinator %d, failed %v, next %d, pending %d", g.me, g.n, g.coord, g.failed, g.next, g.pending)
	for seq, in := range g.inst {
		s += fmt.Sprintf("\n  agreement %d: entered %v decided %v sentTo %d got %v heard-from", seq, in.entered, in.decided, in.sentTo, in.got)
		for m, d := range in.heard {
			if d != nil {
				s += fmt.Sprintf(" %d", m)
			}
		}
	}
	return s
}
