package meshmpi

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/meshmpi/meshmpi/agree"
	"github.com/meshmpi/meshmpi/coll"
	"github.com/meshmpi/meshmpi/peer"
)

// Fault tolerance after ULFM (the MPI Forum's User-Level Failure
// Mitigation, MPIX_Comm_revoke … in Open MPI and MPICH): a failed rank
// does not end the job. Operations that need it fail with ErrProcFailed;
// point-to-point with live ranks goes on; a collective on a communicator
// with a failed member fails on every rank that knows of the failure;
// an AnySource receive is interrupted (ErrProcFailedPending) until the
// failure is acknowledged (AckFailed). The survivors recover with Revoke,
// Agree and Shrink.
//
// Failure knowledge lives in the rank's proc (failures): the endpoint
// tells it of every confirmed failure (peer.Endpoint.OnPeerDeclared: the
// signaling server declared the rank failed or announced its departure,
// or, in an in-process world, its link was lost), and so does every
// agreement that finds a member missing. A lost link alone fails only
// what waits on that peer: where the job has an authority, it is a
// suspicion the mesh reports, and acting on it could split the job (two
// live ranks whose path broke, each deciding alone). It fans each new failure
// out to the communicators that contain the rank.

// failures is what a rank knows of failed ranks.
type failures struct {
	n      atomic.Int32                  // len(order): a lock-free "none yet"
	notice atomic.Pointer[chan struct{}] // closed, and replaced, at each new failure
	mu     sync.Mutex
	order  []int  // world ranks, in the order their failures became known here
	known  []bool // by world rank
	comms  map[*Comm]struct{}
}

// peerFailed records that world rank w failed and tells c's communicators.
func (p *proc) peerFailed(w int, cause error) {
	f := &p.fail
	f.mu.Lock()
	if f.known[w] {
		f.mu.Unlock()
		return
	}
	f.known[w] = true
	f.order = append(f.order, w)
	f.n.Store(int32(len(f.order)))
	next := make(chan struct{})
	close(*f.notice.Swap(&next)) // wakes AnySource receives (awaitAnySource)
	comms := make([]*Comm, 0, len(f.comms))
	for c := range f.comms {
		comms = append(comms, c)
	}
	f.mu.Unlock()
	for _, c := range comms {
		c.memberFailed(w, cause)
	}
}

// learnFailed makes a failure that an agreement reported known here as
// if the link had been lost: the endpoint fails what is pending with the
// rank and closes its link (fail-stop: it is failed for good).
func (p *proc) learnFailed(w int) {
	p.ep.FailPeer(w, fmt.Errorf("rank %d failed (the survivors' agreement found it missing): %w", w, ErrProcFailed))
	p.peerFailed(w, ErrProcFailed) // FailPeer reported it unless it already was
}

func (p *proc) isFailed(w int) bool {
	p.fail.mu.Lock()
	defer p.fail.mu.Unlock()
	return p.fail.known[w]
}

// register makes c hear of failures; the failures already known reach
// its agreement group now.
func (p *proc) register(c *Comm) {
	f := &p.fail
	f.mu.Lock()
	if f.comms == nil {
		f.comms = map[*Comm]struct{}{}
	}
	f.comms[c] = struct{}{}
	known := slices.Clone(f.order)
	f.mu.Unlock()
	for _, w := range known {
		if c.local[w] >= 0 {
			c.agree.Failed(int(c.local[w]))
		}
	}
}

func (p *proc) unregister(c *Comm) {
	p.fail.mu.Lock()
	delete(p.fail.comms, c)
	p.fail.mu.Unlock()
}

// commFT is a communicator's fault-tolerance state.
type commFT struct {
	nonce   uint64       // names the communicator in agreement messages
	agree   *agree.Group // over the local group
	revoked atomic.Bool
	// revokedC is closed when revoked is set: for waits that are not
	// operations revoke cancels (an Accept waiting for a connection)
	revokedC chan struct{}
	acked    atomic.Int32 // how many of failed() are acknowledged (AckFailed)
	buf      []byte       // the listener's message
	// ftDone is set when the agreement group of a freed c lets this rank
	// go (agree.Group.Leave): the listener stops then, not at Free, so
	// this rank answers for the decisions it holds until the others have
	// them
	ftDone atomic.Bool
}

// Messages on a communicator's fault-tolerance context: a kind byte, then
// the kind's payload.
const (
	ftRevoke = 'R' // the communicator is revoked; its nonce follows
	ftAgree  = 'A' // an agreement message (package agree)
)

// shrinkVec is the length of Shrink's agreement vector on n ranks: a flag
// byte, the mask of free context ids, the members not known failed.
func shrinkVec(n int) int { return 1 + ctxWords*8 + (n+7)/8 }

// agreeVec is Agree's: the flag, the members whose failure is acknowledged.
func agreeVec(n int) int { return 8 + (n+7)/8 }

// listenFT posts the receive for the communicator's next fault-tolerance
// message.
func (c *Comm) listenFT() {
	_ = c.p.ep.RecvNotify(peer.AnySource, c.ftContext(), peer.AnyTag, -1, c.buf, (*ftListener)(c), 0)
}

type ftListener Comm

func (l *ftListener) Complete(int32, int, error) {} // never called: CompleteFrom is

// CompleteFrom takes a fault-tolerance message from world rank src.
func (l *ftListener) CompleteFrom(_ int32, src, n int, err error) {
	c := (*Comm)(l)
	if err != nil { // cancelled: the communicator was freed or the rank closed
		c.agree.Stop(fmt.Errorf("%s: %w", c, err))
		c.drop()
		return
	}
	if n > 0 {
		switch c.buf[0] {
		case ftRevoke:
			if n == 9 && binary.LittleEndian.Uint64(c.buf[1:]) == c.nonce {
				c.revoke()
			}
		case ftAgree:
			if r := c.local[src]; r >= 0 {
				_ = c.agree.Receive(int(r), c.buf[1:n]) // a malformed message is dropped
			}
		}
	}
	c.relisten(c.listenFT, c.ftContext(), &c.ftDone)
}

// ftSend sends a fault-tolerance message to world rank w; a message to a
// failed rank is lost, as agreement and revocation allow.
func (c *Comm) ftSend(w int, msg []byte) {
	_ = c.p.ep.SendNotify(peer.Standard, w, c.ftContext(), 0, msg, ignore{}, 0)
}

// agreeTransport sends agreement messages between the members of c.
type agreeTransport Comm

func (t *agreeTransport) Send(to int, msg []byte) {
	c := (*Comm)(t)
	c.ftSend(c.ranks[to], append([]byte{ftAgree}, msg...))
}

// memberFailed tells c that world rank w, one of its members (in either
// group), failed: its collectives cannot complete, here or anywhere, so
// they fail now; its agreements go on without w; AnySource receives are
// woken (the endpoint wakes its watchers after the hooks).
func (c *Comm) memberFailed(w int, cause error) {
	local, remote := c.local[w] >= 0, c.inter != nil && c.inter.local[w] >= 0
	if !local && !remote {
		return
	}
	if local {
		c.agree.Failed(int(c.local[w]))
	}
	if c.p.finalizing.Load() {
		return
	}
	c.failCollectives(fmt.Errorf("%s of %s failed: %w", rankInComm(c, w), c, causeOrFailed(cause)))
}

func causeOrFailed(err error) error {
	if err == nil || !errors.Is(err, ErrProcFailed) {
		return ErrProcFailed
	}
	return err
}

// rankInComm names world rank w by its rank in c.
func rankInComm(c *Comm, w int) string {
	if r := c.local[w]; r >= 0 {
		return fmt.Sprintf("rank %d", r)
	}
	return fmt.Sprintf("remote rank %d", c.inter.local[w])
}

// failCollectives fails every collective pending on c with err, and the
// library's own exchanges on its collective context.
func (c *Comm) failCollectives(err error) {
	c.activeMu.Lock()
	later := make([]coll.Abandonment, 0, len(c.active))
	for _, a := range c.active {
		_, w := a.run.AbortHeld(err)
		later = append(later, w)
	}
	c.activeMu.Unlock()
	// withdrawn unlocked: a link the withdrawal finds lost fails c's
	// collectives again, under activeMu (coll.Run.AbortHeld)
	for _, w := range later {
		w.Run()
	}
	c.p.ep.CancelTagged(c.collContext(), 0, 0, err)
}

// failedMembers returns the world ranks of c's members (both groups)
// known failed, in the order their failures became known.
func (c *Comm) failedMembers() []int {
	f := &c.p.fail
	if f.n.Load() == 0 {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []int
	for _, w := range f.order {
		if c.local[w] >= 0 || c.inter != nil && c.inter.local[w] >= 0 {
			out = append(out, w)
		}
	}
	return out
}

// collectiveErr is why a collective on c cannot run: c was revoked, or a
// member failed.
func (c *Comm) collectiveErr() error {
	if c.p.fail.n.Load() == 0 && !c.revoked.Load() {
		return nil
	}
	if c.revoked.Load() {
		return fmt.Errorf("%s was revoked: %w", c, ErrRevoked)
	}
	if failed := c.failedMembers(); len(failed) > 0 {
		return fmt.Errorf("%s of %s failed: %w", rankInComm(c, failed[0]), c, ErrProcFailed)
	}
	return nil
}

// revokedErr is the error of an operation on a revoked communicator.
func (c *Comm) revokedErr() error {
	if c.revoked.Load() {
		return fmt.Errorf("%s was revoked: %w", c, ErrRevoked)
	}
	return nil
}

// pendingErr is the error of an AnySource receive on c while a failure of
// a member is not acknowledged (ULFM's MPI_ERR_PROC_FAILED_PENDING): the
// failed rank might have been its sender.
func (c *Comm) pendingErr() error {
	if c.p.fail.n.Load() <= c.acked.Load() {
		return nil
	}
	failed := c.failedMembers()
	if acked := int(c.acked.Load()); len(failed) > acked {
		return fmt.Errorf("%s of %s failed and it is not acknowledged (AckFailed): %w: %w", rankInComm(c, failed[acked]), c, ErrProcFailedPending, ErrProcFailed)
	}
	return nil
}

// Revoke revokes c on every rank (MPIX_Comm_revoke): every pending and
// later operation on c, point-to-point and collective, on every rank of
// c (both groups of an intercommunicator), fails with ErrRevoked, except
// Agree, Iagree, Shrink, GetFailed, AckFailed, FailureAck,
// FailureGetAcked, Revoke and Free. It is not collective: one rank calls
// it, every rank learns it, even if the caller fails while telling them
// (each rank that hears it tells every other once).
func (c *Comm) Revoke() error {
	if err := c.check(); err != nil {
		return fmt.Errorf("revoke: %w", err)
	}
	c.revoke()
	return nil
}

// revoke revokes c here and, the first time, tells every other rank.
func (c *Comm) revoke() {
	if c.revoked.Swap(true) {
		return
	}
	close(c.revokedC)
	c.cancelRevoked()
	msg := binary.LittleEndian.AppendUint64([]byte{ftRevoke}, c.nonce)
	for _, w := range c.allRanks() {
		if w != c.p.ep.Rank() {
			c.ftSend(w, msg)
		}
	}
	c.p.ep.Wake()
}

// cancelRevoked fails what is pending on a revoked c: its point-to-point
// operations and collectives.
func (c *Comm) cancelRevoked() {
	err := fmt.Errorf("%s was revoked: %w", c, ErrRevoked)
	c.p.ep.CancelTagged(c.p2pContext(), 0, 0, err)
	c.failCollectives(err)
}

// retired reports whether c's context id must never be used again on
// this rank: c was revoked, or lost a member while others live on, so
// messages of operations that broke may still arrive on it, long after
// Free, and a communicator that reused the id would take them (they
// would match its receives). A communicator whose other members all
// failed (a manager's intercommunicator with one worker that left) gets
// nothing more: its id is free again, so churn does not use ids up.
func (c *Comm) retired() bool {
	if c.revoked.Load() {
		return true
	}
	lost := c.lostMembers()
	if len(lost) == 0 {
		return false
	}
	me := c.p.ep.Rank()
	return slices.ContainsFunc(c.allRanks(), func(w int) bool { return w != me && !slices.Contains(lost, w) })
}

// lostMembers returns the world ranks of c's other members that failed or
// whose link this rank lost (a failure the job may not have declared yet):
// nothing more arrives from them.
func (c *Comm) lostMembers() []int {
	failed := c.failedMembers()
	me := c.p.ep.Rank()
	for _, w := range c.allRanks() {
		if w != me && c.p.ep.Lost(w) && !slices.Contains(failed, w) {
			failed = append(failed, w)
		}
	}
	return failed
}

// allRanks returns the world ranks of both groups of c.
func (c *Comm) allRanks() []int {
	if c.inter == nil {
		return c.ranks
	}
	return slices.Concat(c.ranks, c.inter.ranks)
}

// IsRevoked reports whether c was revoked (MPIX_Comm_is_revoked).
func (c *Comm) IsRevoked() bool { return c != nil && c.revoked.Load() }

// GetFailed returns the group of c's ranks known failed here
// (MPIX_Comm_get_failed), in the order their failures became known: the
// order AckFailed acknowledges them in. An intercommunicator's includes
// both groups.
func (c *Comm) GetFailed() (*Group, error) {
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("get failed: %w", err)
	}
	return &Group{ranks: c.failedMembers(), self: c.p.ep.Rank()}, nil
}

// AckFailed acknowledges the first n failures of GetFailed's group
// (MPIX_Comm_ack_failed) and returns how many are acknowledged in all.
// AnySource receives on c are interrupted (ErrProcFailedPending) only by
// failures not acknowledged, and Agree reports ErrProcFailed for failures
// that some rank had not acknowledged. Acknowledging never goes back: a
// smaller n than before acknowledges nothing more.
func (c *Comm) AckFailed(n int) (int, error) {
	if err := c.check(); err != nil {
		return 0, fmt.Errorf("ack failed: %w", err)
	}
	if n < 0 {
		return 0, fmt.Errorf("ack failed on %s: %d failures: %w", c, n, ErrArg)
	}
	known := len(c.failedMembers())
	for {
		old := c.acked.Load()
		want := int32(max(int(old), min(n, known)))
		if c.acked.CompareAndSwap(old, want) {
			return int(want), nil
		}
	}
}

// FailureAck acknowledges every failure known here (MPIX_Comm_failure_ack,
// ULFM's first interface): AckFailed of all of GetFailed.
func (c *Comm) FailureAck() error {
	_, err := c.AckFailed(1 << 30)
	return err
}

// FailureGetAcked returns the group of acknowledged failed ranks
// (MPIX_Comm_failure_get_acked).
func (c *Comm) FailureGetAcked() (*Group, error) {
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("failure get acked: %w", err)
	}
	failed := c.failedMembers()
	return &Group{ranks: failed[:min(len(failed), int(c.acked.Load()))], self: c.p.ep.Rank()}, nil
}

// ackedMask sets, in a bitmap over c's ranks, the failures acknowledged.
func (c *Comm) ackedMask(b []byte) {
	failed := c.failedMembers()
	for _, w := range failed[:min(len(failed), int(c.acked.Load()))] {
		if r := c.local[w]; r >= 0 {
			b[r/8] |= 1 << (r % 8)
		}
	}
}

// Agree is a fault-tolerant agreement over c (MPIX_Comm_agree): every
// rank of c that survives it returns the bitwise AND of the flags of the
// ranks that contributed, the same on all of them, even when ranks fail
// during the call. If a rank failed before contributing and some rank had
// not acknowledged that failure (AckFailed) when it called Agree, every
// survivor returns the value with an error matching ErrProcFailed; the
// ranks that did not contribute are then known failed here, so AckFailed
// acknowledges them. It works on a revoked communicator, and ranks that
// called other collectives do not disturb it. Intercommunicators are not
// supported (ErrNotSupported).
func (c *Comm) Agree(flag int) (int, error) {
	r, err := c.Iagree(&flag)
	if err != nil {
		return flag, err
	}
	q := r.impl.(*agreeRequest)
	c.p.parkUntil(q, blockedIn{call: "Agree", comm: c})
	r.finish()
	return flag, r.err
}

// Iagree starts Agree (MPIX_Comm_iagree); flag holds the rank's flag and,
// once the request completes, the agreed value.
func (c *Comm) Iagree(flag *int) (*Request, error) {
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("agree: %w", err)
	}
	if flag == nil {
		return nil, fmt.Errorf("agree on %s: nil flag: %w", c, ErrArg)
	}
	if c.inter != nil {
		return nil, fmt.Errorf("agree on %s: intercommunicators: %w", c, ErrNotSupported)
	}
	vec := make([]byte, agreeVec(len(c.ranks)))
	binary.LittleEndian.PutUint64(vec, uint64(*flag))
	c.ackedMask(vec[8:])
	q := &agreeRequest{c: c, flag: flag, ch: make(chan struct{}, 1)}
	c.hold()
	if _, err := c.agree.Start(vec, q.decided); err != nil {
		c.drop()
		return nil, fmt.Errorf("agree on %s: %w", c, err)
	}
	r := &Request{state: Active, wait: c.p.wait, impl: q}
	return r, nil
}

// agreeRequest is an agreement driven by a Request.
type agreeRequest struct {
	c    *Comm
	flag *int
	ch   chan struct{}
	fin  atomic.Bool
	res  agree.Result
}

// decided takes the agreement's result (on whatever goroutine decided it).
func (q *agreeRequest) decided(res agree.Result) {
	q.res = res
	q.fin.Store(true)
	q.ch <- struct{}{}
	q.c.p.ep.Wake()
}

func (q *agreeRequest) start() error {
	return fmt.Errorf("start: agreements are not persistent: %w", ErrRequest)
}
func (q *agreeRequest) Finished() bool           { return q.fin.Load() }
func (q *agreeRequest) Done() <-chan struct{}    { return q.ch }
func (q *agreeRequest) finished() bool           { return q.fin.Load() }
func (q *agreeRequest) done() <-chan struct{}    { return q.ch }
func (q *agreeRequest) endpoint() *peer.Endpoint { return q.c.p.ep }
func (q *agreeRequest) cancel() error {
	return fmt.Errorf("cancel: agreements cannot be cancelled: %w", ErrRequest)
}
func (q *agreeRequest) detach() error {
	return fmt.Errorf("free: an active agreement cannot be freed: %w", ErrRequest)
}
func (q *agreeRequest) release() {}

func (q *agreeRequest) result(bool) (Status, error) {
	c, res := q.c, q.res
	defer c.drop()
	if res.Err != nil {
		err := fmt.Errorf("agree on %s: %w", c, res.Err)
		return Status{Err: err}, err
	}
	if res.Mismatch {
		err := fmt.Errorf("agree on %s: the ranks called different agreements (Agree and Shrink at once): %w", c, ErrArg)
		return Status{Err: err}, err
	}
	*q.flag = int(binary.LittleEndian.Uint64(res.Vec))
	acked := res.Vec[8:]
	var unacked []int
	for _, m := range res.Missing {
		c.p.learnFailed(c.ranks[m])
		if acked[m/8]&(1<<(m%8)) == 0 {
			unacked = append(unacked, m)
		}
	}
	if len(unacked) > 0 {
		err := fmt.Errorf("agree on %s: %s failed before contributing: %w", c, rankList(unacked), ErrProcFailed)
		return Status{Err: err}, err
	}
	return Status{}, nil
}

// Shrink returns a new communicator of the ranks of c not known failed
// (MPIX_Comm_shrink), the same group on every survivor: the ranks agree
// (fault-tolerantly) on the failures any of them knows and on a context
// id, so it is correct even when ranks fail during the call (they may be
// members of the result, whose operations with them then fail as usual).
// It works on a revoked communicator. Intercommunicators are not
// supported (ErrNotSupported).
func (c *Comm) Shrink() (*Comm, error) {
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("shrink: %w", err)
	}
	if c.inter != nil {
		return nil, fmt.Errorf("shrink on %s: intercommunicators: %w", c, ErrNotSupported)
	}
	n := len(c.ranks)
	p := c.p
	for {
		vec := make([]byte, shrinkVec(n))
		p.mu.Lock()
		lent := !p.maskLent
		p.maskLent = true
		if lent {
			vec[0] = 1
			for i, w := range p.ctxUsed {
				binary.LittleEndian.PutUint64(vec[1+8*i:], ^w)
			}
		}
		p.mu.Unlock()
		alive := vec[1+ctxWords*8:]
		for r := range n {
			alive[r/8] |= 1 << (r % 8)
		}
		for _, w := range c.failedMembers() {
			r := c.local[w]
			alive[r/8] &^= 1 << (r % 8)
		}
		res, seq, err := c.agreeOn(vec, "Shrink", false)
		if err != nil {
			c.returnMask(lent)
			return nil, fmt.Errorf("shrink on %s: %w", c, err)
		}
		if res.Mismatch {
			c.returnMask(lent)
			return nil, fmt.Errorf("shrink on %s: the ranks called different agreements (Agree and Shrink at once): %w", c, ErrArg)
		}
		for _, m := range res.Missing {
			p.learnFailed(c.ranks[m])
		}
		alive = res.Vec[1+ctxWords*8:]
		var survivors []int
		for r, w := range c.ranks {
			if alive[r/8]&(1<<(r%8)) != 0 && !slices.Contains(res.Missing, r) {
				survivors = append(survivors, w)
			}
		}
		id := -1
		for i := range ctxWords {
			if w := binary.LittleEndian.Uint64(res.Vec[1+8*i:]); w != 0 {
				id = i*64 + bits.TrailingZeros64(w)
				break
			}
		}
		if id < 0 {
			c.returnMask(lent)
			if res.Vec[0] == 1 { // every rank lent its real mask
				return nil, fmt.Errorf("shrink on %s: no context id is free on every rank (%d in use): %w", c, ctxWords*64, ErrComm)
			}
			continue // another construction had this rank's mask: again
		}
		if !slices.Contains(survivors, p.ep.Rank()) {
			c.returnMask(lent)
			return nil, fmt.Errorf("shrink on %s: the other ranks found this one failed: %w", c, ErrProcFailed)
		}
		nc := newComm(p, id, survivors, mixNonce(c.nonce, uint64(seq), uint64(id), 's'))
		reserve(c, id, lent)
		return nc, nil
	}
}

// agreeOn runs one blocking agreement on vec over c, returning its result
// and sequence number; barrier: StartBarrier's (Finalize).
func (c *Comm) agreeOn(vec []byte, call string, barrier bool) (agree.Result, uint32, error) {
	ch := make(chan agree.Result, 1)
	c.hold()
	defer c.drop()
	start := c.agree.Start
	if barrier {
		start = c.agree.StartBarrier
	}
	seq, err := start(vec, func(r agree.Result) { ch <- r })
	if err != nil {
		return agree.Result{}, 0, err
	}
	p := c.p
	p.park(blockedIn{call: call, comm: c, internal: call == "Finalize"})
	res := <-ch
	p.unpark()
	return res, seq, res.Err
}

// childNonce is the nonce of a communicator made by a collective over c
// with context id.
func (c *Comm) childNonce(id int) uint64 {
	return mixNonce(c.nonce, uint64(c.seq.Load()), uint64(id))
}

// worldNonce names every world communicator.
const worldNonce = 1

// mixNonce derives a communicator's nonce from its parent's and the
// values that tell its construction from any other with the same parent
// (the parent's collective sequence number, the context id): every member
// derives the same one, on any machine (FNV-1a, not a seeded hash).
func mixNonce(vs ...uint64) uint64 {
	h := fnv.New64a()
	var b [8]byte
	for _, v := range vs {
		binary.LittleEndian.PutUint64(b[:], v)
		h.Write(b[:])
	}
	return h.Sum64()
}

// errWaitCancelled ends awaitAnySource when the caller's context ends.
var errWaitCancelled = errors.New("wait cancelled")

// awaitAnySource waits for an AnySource receive to finish, or to be
// interrupted by a failure of a rank of its communicator that is not
// acknowledged (pendingErr, which it returns; the receive stays posted),
// or for cancel to close (errWaitCancelled).
func (q *p2pRequest) awaitAnySource(cancel <-chan struct{}) error {
	p := q.c.p
	p.wait.wait(p.ep, q.op.Finished)
	if q.op.Finished() {
		return nil
	}
	p.park(q.block())
	defer p.unpark()
	for !q.op.Finished() {
		notice := *p.fail.notice.Load()
		if err := q.c.pendingErr(); err != nil {
			return err
		}
		select {
		case <-q.op.Done():
		case <-notice:
		case <-cancel:
			return errWaitCancelled
		}
	}
	return nil
}

// anySourceRecv returns r's receive if it is an active AnySource receive
// (which a failure may interrupt), else nil.
func (r *Request) anySourceRecv() *p2pRequest {
	q := &r.p2p
	if q.c == nil || q.kind != p2pRecv || q.world != AnySource || q.op == nil || r.state != Active {
		return nil
	}
	return q
}

// pending is the error of an active request interrupted by a failure that
// is not acknowledged (ErrProcFailedPending), nil otherwise.
func (r *Request) pending() error {
	q := r.anySourceRecv()
	if q == nil || q.op.Finished() {
		return nil
	}
	return q.c.pendingErr()
}
