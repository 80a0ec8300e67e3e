package meshmpi

import (
	"errors"
	"fmt"
	"strconv"
	"unsafe"

	"github.com/meshmpi/meshmpi/coll"
	"github.com/meshmpi/meshmpi/op"
	"github.com/meshmpi/meshmpi/peer"
)

// Numeric is every Go integer, float and complex type, and named types
// built on them; []byte is []uint8. User-defined ops (NewOp) work on them.
type Numeric = op.Numeric

// Element is the set of element types messages and collectives carry: the
// Numeric types and the Loc pairs of MaxLoc and MinLoc (MPI's pair types).
type Element = op.Element

// Loc is a (value, index) pair, the element type of MaxLoc and MinLoc
// (MPI_DOUBLE_INT and its kin): Allreduce over []Loc[float64] with MaxLoc
// finds the largest value and the lowest index that holds it.
type Loc[T op.LocValue] = op.Loc[T]

// MakeLoc returns the pair (v, index) with an int index, the common case
// (MakeLoc(temp, world.Rank())): Loc's Index is an int32, as MPI's C int
// is on the wire, and a rank or an element position always fits.
func MakeLoc[T op.LocValue](v T, index int) Loc[T] {
	return Loc[T]{Value: v, Index: int32(index)}
}

// Status describes a completed operation (MPI_Status).
type Status struct {
	Source    int   // rank of the message's sender in the communicator (receives, probes)
	Tag       int   // the message's tag (receives, probes)
	Count     int   // elements of the operation's type moved; bytes for probes
	Bytes     int   // bytes moved; for probes, the message's length
	Cancelled bool  // the receive was cancelled (MPI_Test_cancelled)
	Err       error // the operation's error, as the call returned it
}

// GetCount returns the number of T elements a status describes
// (MPI_Get_count): ErrCount if Bytes is not a whole number of them.
func GetCount[T Element](st Status) (int, error) {
	n := op.SizeOf[T]()
	if st.Bytes%n != 0 {
		return Undefined, fmt.Errorf("get count: %d bytes is not a whole number of %d-byte elements: %w", st.Bytes, n, ErrCount)
	}
	return st.Bytes / n, nil
}

type p2pKind uint8

const (
	p2pSend p2pKind = iota
	p2pRecv
	p2pMrecv
)

// p2pRequest is one point-to-point operation: the arguments it was called
// with, validated, and the peer Op that carries it while active.
type p2pRequest struct {
	c     *Comm
	kind  p2pKind
	mode  peer.Mode
	rank  int // as the caller gave it: a rank of c, AnySource or ProcNull
	world int // the world rank, or AnySource
	tag   int
	mask  int32  // a receive that matches only these bits of tag (0: all), failing on the others
	ctx   uint32 // matching context: c's point-to-point context, or its collective one
	buf   []byte
	elem  int
	op    *peer.Op
	cop   *peer.Op      // a send's cancel, while it is asked (cancel_send.go)
	msg   *peer.Message // Mrecv
	acc   *Op           // an accumulating receive's reduction (RecvAccumulate)
	accT  op.Type       // and its element type
	held  bool          // holds a reference on c (see Comm.hold)
	// user: a call of the API (prepare), not one of the library's own
	// exchanges; only those are recorded for telemetry
	user bool
	t0   int64 // when the recorder saw it start (unix µs); 0 if it did not
}

// prepare validates the arguments of a send (kind p2pSend) or receive.
func (q *p2pRequest) prepare(c *Comm, kind p2pKind, rank, tag int, buf []byte, elem int) error {
	*q = p2pRequest{c: c, kind: kind, rank: rank, tag: tag, buf: buf, elem: elem, user: true}
	if err := c.check(); err != nil {
		return err
	}
	if err := c.revokedErr(); err != nil {
		return fmt.Errorf("%s on %s: %w", q.verb(), c, err)
	}
	q.ctx = c.p2pContext()
	send := kind == p2pSend
	switch {
	case rank == ProcNull:
	case rank == AnySource && !send:
		q.world = AnySource
	case rank < 0 || rank >= len(c.peerRanks()):
		return fmt.Errorf("%s on %s: rank %d: %w", q.verb(), c, rank, ErrRank)
	default:
		q.world = c.peerRanks()[rank]
	}
	if (tag < 0 || tag > TagUB) && (send || tag != AnyTag) {
		return fmt.Errorf("%s on %s: tag %d: %w", q.verb(), c, tag, ErrTag)
	}
	return nil
}

func (q *p2pRequest) verb() string {
	if q.kind == p2pSend {
		return "send"
	}
	return "receive"
}

func (q *p2pRequest) start() error {
	if q.rank == ProcNull {
		return nil
	}
	if rec := q.c.p.rec; rec != nil && q.user {
		q.t0 = rec.now()
	}
	ep := q.c.p.ep
	if q.op == nil {
		q.op = ep.GetOp()
	}
	var err error
	switch q.kind {
	case p2pSend:
		err = ep.StartSend(q.op, q.mode, q.world, q.ctx, int32(q.tag), q.buf)
	case p2pRecv:
		if q.acc != nil {
			err = ep.StartRecvAccumulate(q.op, q.world, q.ctx, int32(q.tag), q.buf, q.acc, q.accT)
			break
		}
		if q.mask != 0 {
			err = ep.StartRecvMasked(q.op, q.world, q.ctx, int32(q.tag), q.mask, q.buf)
			break
		}
		err = ep.StartRecv(q.op, q.world, q.ctx, int32(q.tag), q.buf)
	case p2pMrecv:
		err = ep.StartMrecv(q.op, q.msg, q.buf)
		q.msg = nil
	}
	if err != nil {
		ep.PutOp(q.op)
		q.op = nil
		return fmt.Errorf("%s on %s: %w", q.verb(), q.c, err)
	}
	if q.ctx == q.c.p2pContext() && q.c.revoked.Load() {
		// revoked between prepare's look and the post: Revoke may have
		// cancelled before this was posted, so cancel again (Revoke sets
		// the flag before it cancels: one of the two sees the other)
		q.c.cancelRevoked()
	}
	return nil
}

func (q *p2pRequest) finished() bool {
	return q.rank == ProcNull || q.op.Finished() && (q.cop == nil || q.cop.Finished())
}

// finishedDone is a closed channel: the done of a request that has no
// operation (ProcNull), so that a caller that saw it unfinished an
// instant earlier, or asks for the channel of a finished half
// (sendrecvRequest.done), wakes at once.
var finishedDone = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

func (q *p2pRequest) done() <-chan struct{} {
	if q.rank == ProcNull {
		return finishedDone
	}
	if q.cop != nil && q.op.Finished() {
		return q.cop.Done() // a cancelled send completes with the receiver's answer
	}
	return q.op.Done()
}

func (q *p2pRequest) endpoint() *peer.Endpoint {
	if q.op == nil {
		return nil
	}
	return q.c.p.ep
}

func (q *p2pRequest) unhold() {
	if q.held {
		q.held = false
		q.c.drop()
	}
}

func (q *p2pRequest) result(keep bool) (Status, error) {
	if !keep {
		q.unhold()
	}
	if q.rank == ProcNull {
		return Status{Source: ProcNull, Tag: AnyTag}, nil
	}
	res := q.op.Result()
	if q.cop != nil {
		res = q.cancelResult(res)
	}
	if !keep {
		q.c.p.ep.PutOp(q.op)
		q.op = nil
	}
	return q.status(res)
}

// status is the Status and error of an operation that ended with res.
func (q *p2pRequest) status(res peer.Result) (Status, error) {
	st := Status{Bytes: res.N, Count: res.N / q.elem, Cancelled: res.Cancelled}
	if q.kind != p2pSend {
		st.Source, st.Tag = q.c.peerRank(res.Source), res.Tag
		if res.Cancelled {
			st.Source, st.Tag = Undefined, Undefined
		}
	}
	err := res.Err
	if err == nil && res.N%q.elem != 0 {
		err = fmt.Errorf("%d bytes is not a whole number of %d-byte elements: %w", res.N, q.elem, ErrCount)
	}
	if err != nil {
		if q.kind == p2pSend {
			err = fmt.Errorf("send to rank %d, tag %d, on %s: %w", q.rank, q.tag, q.c, err)
		} else {
			err = fmt.Errorf("receive from %s, %s, on %s: %w", sourceName(q.rank), tagName(q.tag), q.c, err)
		}
		st.Err = err
	}
	if q.t0 != 0 {
		q.recordDone(res.N, res.Source, err)
	}
	return st, err
}

func (q *p2pRequest) cancel() error {
	if q.kind == p2pSend {
		return q.cancelSend()
	}
	if q.rank != ProcNull {
		q.c.p.ep.Cancel(q.op)
	}
	return nil
}

// detach lets an active operation finish unobserved. Its hold on the
// communicator ends now: a context freed and reused while a detached
// receive is still pending could see that receive take a new message.
func (q *p2pRequest) detach() error {
	q.unhold()
	q.dropCancel(true)
	if q.op != nil {
		q.c.p.ep.Detach(q.op)
		q.op = nil
	}
	return nil
}

func (q *p2pRequest) release() {
	q.unhold()
	q.dropCancel(false)
	if q.op != nil {
		q.c.p.ep.PutOp(q.op)
		q.op = nil
	}
}

// run performs a blocking operation: start, wait, result, with the Op back
// in the pool. Nothing here allocates unless the operation fails.
func (q *p2pRequest) run() (Status, error) {
	if q.kind == p2pSend && q.mode == peer.Standard && q.rank != ProcNull {
		// an eager message with nothing before it leaves now, no Op
		// taken (a held reference would guard nothing the call does
		// not already hold: it ends before returning)
		if rec := q.c.p.rec; rec != nil && q.user {
			q.t0 = rec.now()
		}
		if sent, err := q.c.p.ep.SendEager(q.world, q.ctx, int32(q.tag), q.buf); sent {
			res := peer.Result{N: len(q.buf), Err: err}
			if err != nil {
				res.N = 0
			}
			return q.status(res)
		}
	}
	q.c.hold()
	q.held = true
	if err := q.start(); err != nil {
		q.unhold()
		return Status{}, err
	}
	if err := q.failedInternal(); err != nil {
		return Status{Source: Undefined, Tag: Undefined}, err
	}
	if q.op != nil && q.kind == p2pRecv && q.world == AnySource {
		if err := q.awaitAnySource(nil); err != nil && q.c.p.ep.Cancel(q.op) {
			// a blocking receive cannot stay pending: it fails (ULFM)
			_, _ = q.result(false)
			return Status{Source: Undefined, Tag: Undefined}, fmt.Errorf("receive from any source, %s, on %s: %w", tagName(q.tag), q.c, err)
		}
	}
	if q.op != nil {
		q.c.p.await(q.op, q.block())
	}
	return q.result(false)
}

// failedInternal fails a started receive of the library's own exchanges
// (communicator constructors) on c's collective context when a member of
// c is known failed: a failure learned later cancels it
// (failCollectives), as it comes after this start, so none waits for a
// rank that will not answer because the exchange failed elsewhere.
func (q *p2pRequest) failedInternal() error {
	if q.op == nil || q.kind != p2pRecv || q.ctx != q.c.collContext() {
		return nil
	}
	err := q.c.collectiveErr()
	if err != nil && q.c.p.ep.Cancel(q.op) {
		_, _ = q.result(false)
		return err
	}
	return nil
}

// newRequest wraps a prepared p2pRequest, starting it unless persistent.
func newRequest(q *p2pRequest, persistent bool) (*Request, error) {
	r := &Request{persistent: persistent, p2p: *q, wait: q.c.p.wait}
	r.impl = &r.p2p
	r.p2p.c.hold() // for a persistent request, until it is freed
	r.p2p.held = true
	if persistent {
		if r.p2p.rank != ProcNull {
			r.p2p.op = r.p2p.c.p.ep.GetOp() // held for the request's life
		}
		return r, nil
	}
	if err := r.p2p.start(); err != nil {
		r.p2p.unhold()
		return nil, err
	}
	r.state = Active
	return r, nil
}

func send[T Element](c *Comm, mode peer.Mode, buf []T, dest, tag int) error {
	var q p2pRequest
	if err := q.prepare(c, p2pSend, dest, tag, op.Bytes(buf), op.SizeOf[T]()); err != nil {
		return err
	}
	q.mode = mode
	_, err := q.run()
	return err
}

// Send sends buf to rank dest of c with tag (MPI_Send). It returns when buf
// may be reused: at once for messages up to the eager limit, after the
// receiver matched larger ones.
func Send[T Element](c *Comm, buf []T, dest, tag int) error {
	return send(c, peer.Standard, buf, dest, tag)
}

// Ssend sends buf and returns only after the receiver matched the message
// (MPI_Ssend).
func Ssend[T Element](c *Comm, buf []T, dest, tag int) error {
	return send(c, peer.Synchronous, buf, dest, tag)
}

// Recv receives a message from rank source (or AnySource) with tag (or
// AnyTag) into buf (MPI_Recv). A message longer than buf fills it and
// returns ErrTruncate.
func Recv[T Element](c *Comm, buf []T, source, tag int) (Status, error) {
	var q p2pRequest
	if err := q.prepare(c, p2pRecv, source, tag, op.Bytes(buf), op.SizeOf[T]()); err != nil {
		return Status{}, err
	}
	return q.run()
}

func isend[T Element](c *Comm, mode peer.Mode, buf []T, dest, tag int, persistent bool) (*Request, error) {
	var q p2pRequest
	if err := q.prepare(c, p2pSend, dest, tag, op.Bytes(buf), op.SizeOf[T]()); err != nil {
		return nil, err
	}
	q.mode = mode
	return newRequest(&q, persistent)
}

func irecv[T Element](c *Comm, buf []T, source, tag int, persistent bool) (*Request, error) {
	var q p2pRequest
	if err := q.prepare(c, p2pRecv, source, tag, op.Bytes(buf), op.SizeOf[T]()); err != nil {
		return nil, err
	}
	return newRequest(&q, persistent)
}

// Isend starts a send (MPI_Isend); buf must not change until it completes.
func Isend[T Element](c *Comm, buf []T, dest, tag int) (*Request, error) {
	return isend(c, peer.Standard, buf, dest, tag, false)
}

// Issend starts a synchronous send (MPI_Issend): it completes once matched.
func Issend[T Element](c *Comm, buf []T, dest, tag int) (*Request, error) {
	return isend(c, peer.Synchronous, buf, dest, tag, false)
}

// Irecv starts a receive (MPI_Irecv).
func Irecv[T Element](c *Comm, buf []T, source, tag int) (*Request, error) {
	return irecv(c, buf, source, tag, false)
}

// SendInit creates a persistent send (MPI_Send_init): each Start sends buf's
// current contents to dest with tag.
func SendInit[T Element](c *Comm, buf []T, dest, tag int) (*Request, error) {
	return isend(c, peer.Standard, buf, dest, tag, true)
}

// SsendInit creates a persistent synchronous send (MPI_Ssend_init).
func SsendInit[T Element](c *Comm, buf []T, dest, tag int) (*Request, error) {
	return isend(c, peer.Synchronous, buf, dest, tag, true)
}

// RecvInit creates a persistent receive (MPI_Recv_init).
func RecvInit[T Element](c *Comm, buf []T, source, tag int) (*Request, error) {
	return irecv(c, buf, source, tag, true)
}

// Sendrecv sends sendbuf to dest and receives into recvbuf from source, in
// either order, without deadlocking against a matching Sendrecv (MPI_Sendrecv).
func Sendrecv[T, U Element](c *Comm, sendbuf []T, dest, sendtag int, recvbuf []U, source, recvtag int) (Status, error) {
	var s, r p2pRequest
	if err := r.prepare(c, p2pRecv, source, recvtag, op.Bytes(recvbuf), op.SizeOf[U]()); err != nil {
		return Status{}, fmt.Errorf("sendrecv: %w", err)
	}
	if err := s.prepare(c, p2pSend, dest, sendtag, op.Bytes(sendbuf), op.SizeOf[T]()); err != nil {
		return Status{}, fmt.Errorf("sendrecv: %w", err)
	}
	if overlap(s.buf, r.buf) {
		return Status{}, fmt.Errorf("sendrecv on %s: send and receive buffers overlap (SendrecvReplace exchanges in place): %w", c, ErrBuffer)
	}
	if err := r.start(); err != nil {
		return Status{}, fmt.Errorf("sendrecv: %w", err)
	}
	_, serr := s.run()
	if r.op != nil {
		c.p.await(r.op, r.block())
	}
	st, rerr := r.result(false)
	if serr != nil {
		return st, fmt.Errorf("sendrecv: %w", serr)
	}
	return st, rerr
}

// overlap reports whether two byte slices share memory.
func overlap(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	pa, pb := uintptr(unsafe.Pointer(unsafe.SliceData(a))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return pa < pb+uintptr(len(b)) && pb < pa+uintptr(len(a))
}

// SendrecvReplace sends buf to dest and replaces its contents with a message
// from source (MPI_Sendrecv_replace). It needs one temporary copy of buf.
func SendrecvReplace[T Element](c *Comm, buf []T, dest, sendtag, source, recvtag int) (Status, error) {
	tmp := append([]T(nil), buf...)
	return Sendrecv(c, tmp, dest, sendtag, buf, source, recvtag)
}

// Message is a message taken out of matching by Mprobe or Improbe
// (MPI_Message): only Mrecv or Imrecv can receive it, exactly once.
type Message struct {
	c      *Comm
	m      *peer.Message
	noProc bool // from a probe of ProcNull (MPI_MESSAGE_NO_PROC)
	used   bool
}

func (c *Comm) probeArgs(verb string, source, tag int) (int, error) {
	if err := c.check(); err != nil {
		return 0, fmt.Errorf("%s: %w", verb, err)
	}
	if tag != AnyTag && (tag < 0 || tag > TagUB) {
		return 0, fmt.Errorf("%s on %s: tag %d: %w", verb, c, tag, ErrTag)
	}
	switch {
	case source == AnySource, source == ProcNull:
		return source, nil
	case source < 0 || source >= len(c.peerRanks()):
		return 0, fmt.Errorf("%s on %s: rank %d: %w", verb, c, source, ErrRank)
	}
	return c.peerRanks()[source], nil
}

func (c *Comm) probeStatus(env peer.Envelope) Status {
	return Status{Source: c.peerRank(env.Source), Tag: env.Tag, Count: env.Len, Bytes: env.Len}
}

var procNullStatus = Status{Source: ProcNull, Tag: AnyTag}

// Iprobe reports whether a message that Recv(source, tag) would match has
// arrived, without receiving it (MPI_Iprobe). Status.Count is in bytes; use
// GetCount for elements.
func (c *Comm) Iprobe(source, tag int) (Status, bool, error) {
	w, err := c.probeArgs("iprobe", source, tag)
	if err != nil || source == ProcNull {
		return procNullStatus, err == nil, err
	}
	if err := c.revokedErr(); err != nil {
		return Status{}, false, fmt.Errorf("iprobe on %s: %w", c, err)
	}
	env, ok, err := c.p.ep.Iprobe(w, c.p2pContext(), int32(tag))
	if err != nil {
		return Status{}, false, fmt.Errorf("iprobe on %s: %w", c, err)
	}
	if !ok {
		if source == AnySource {
			if err := c.pendingErr(); err != nil {
				return Status{}, false, fmt.Errorf("iprobe on %s: %w", c, err)
			}
		}
		return Status{}, false, nil
	}
	return c.probeStatus(env), true, nil
}

// Probe blocks until a message that Recv(source, tag) would match has
// arrived and describes it (MPI_Probe).
func (c *Comm) Probe(source, tag int) (Status, error) {
	var st Status
	var err error
	c.wait(func() bool {
		var ok bool
		st, ok, err = c.Iprobe(source, tag)
		return ok || err != nil
	})
	return st, err
}

// Improbe is Iprobe that also takes the message out of matching for
// Mrecv (MPI_Improbe).
func (c *Comm) Improbe(source, tag int) (*Message, Status, bool, error) {
	w, err := c.probeArgs("improbe", source, tag)
	if err != nil {
		return nil, Status{}, false, err
	}
	if source == ProcNull {
		return &Message{c: c, noProc: true}, procNullStatus, true, nil
	}
	if err := c.revokedErr(); err != nil {
		return nil, Status{}, false, fmt.Errorf("improbe on %s: %w", c, err)
	}
	m, err := c.p.ep.Improbe(w, c.p2pContext(), int32(tag))
	if err != nil {
		return nil, Status{}, false, fmt.Errorf("improbe on %s: %w", c, err)
	}
	if m == nil {
		if source == AnySource {
			if err := c.pendingErr(); err != nil {
				return nil, Status{}, false, fmt.Errorf("improbe on %s: %w", c, err)
			}
		}
		return nil, Status{}, false, nil
	}
	return &Message{c: c, m: m}, c.probeStatus(m.Envelope()), true, nil
}

// Mprobe blocks until a matching message arrives and takes it out of
// matching for Mrecv (MPI_Mprobe).
func (c *Comm) Mprobe(source, tag int) (*Message, Status, error) {
	var m *Message
	var st Status
	var err error
	c.wait(func() bool {
		var ok bool
		m, st, ok, err = c.Improbe(source, tag)
		return ok || err != nil
	})
	return m, st, err
}

// wait polls until poll reports done, sleeping on the endpoint in between.
func (c *Comm) wait(poll func() bool) {
	if poll() {
		return
	}
	wake := make(chan struct{}, 1)
	c.p.ep.Watch(wake)
	defer c.p.ep.Unwatch(wake)
	for !poll() {
		<-wake
	}
}

func (m *Message) prepare(q *p2pRequest, buf []byte, elem int) error {
	if m == nil || m.used {
		return fmt.Errorf("mrecv: message is nil or already received: %w", ErrRequest)
	}
	rank := ProcNull
	if !m.noProc {
		rank = m.c.peerRank(m.m.Envelope().Source)
	}
	*q = p2pRequest{c: m.c, kind: p2pMrecv, rank: rank, tag: AnyTag, buf: buf, elem: elem, msg: m.m, user: true}
	if err := m.c.check(); err != nil {
		return fmt.Errorf("mrecv: %w", err)
	}
	m.used, m.m = true, nil
	return nil
}

// Mrecv receives a message taken by Mprobe or Improbe (MPI_Mrecv).
func Mrecv[T Element](m *Message, buf []T) (Status, error) {
	var q p2pRequest
	if err := m.prepare(&q, op.Bytes(buf), op.SizeOf[T]()); err != nil {
		return Status{}, err
	}
	return q.run()
}

// Imrecv starts receiving a message taken by Mprobe or Improbe (MPI_Imrecv).
func Imrecv[T Element](m *Message, buf []T) (*Request, error) {
	var q p2pRequest
	if err := m.prepare(&q, op.Bytes(buf), op.SizeOf[T]()); err != nil {
		return nil, err
	}
	return newRequest(&q, false)
}

// internalSig marks the tags of allgather, so they never agree with a
// collective's in the signature bits.
const internalSig = 1<<coll.SigBits - 1

// allgather is the collective the communicator constructors and Finalize
// need before the collective engine exists beneath them: every rank's
// equal-length record, gathered at rank 0 and sent back to all, in c's
// collective context under a fresh collective sequence number.
func (c *Comm) allgather(rec []byte) ([]byte, error) {
	if err := c.collectiveErr(); err != nil {
		c.seq.Add(1) // the number is taken whatever happens, as a collective's
		return nil, err
	}
	// an exact tag outside the signatures' range of the engine's tags
	tag := int(int32(coll.Tag(c.seq.Add(1)-1, internalSig)))
	n, size := len(rec), len(c.ranks)
	xfer := func(kind p2pKind, rank int, b []byte) error {
		// receives match any sequence number of this exchange's kind, so
		// a rank whose number differs (it called collectives the others
		// did not) fails the exchange instead of waiting forever
		q := p2pRequest{c: c, kind: kind, rank: rank, world: c.ranks[rank], tag: tag, mask: internalSig, ctx: c.collContext(), buf: b, elem: 1}
		st, err := q.run()
		var tm *peer.TagMismatchError
		switch {
		case errors.As(err, &tm):
			err = fmt.Errorf("rank %d has made a different number of collective calls on %s than this rank (a collective only some ranks called): %w", rank, commName(c), ErrArg)
		case err == nil && st.Bytes != len(b):
			err = fmt.Errorf("rank %d sent %d bytes, want %d: %w", rank, st.Bytes, len(b), ErrCount)
		}
		return err
	}
	all := make([]byte, n*size)
	if c.rank != 0 {
		if err := xfer(p2pSend, 0, rec); err != nil {
			return nil, err
		}
		return all, xfer(p2pRecv, 0, all)
	}
	copy(all, rec)
	for r := 1; r < size; r++ {
		if err := xfer(p2pRecv, r, all[r*n:(r+1)*n]); err != nil {
			return nil, err
		}
	}
	for r := 1; r < size; r++ {
		if err := xfer(p2pSend, r, all); err != nil {
			return nil, err
		}
	}
	return all, nil
}

// sourceName is a receive's source as a message says it.
func sourceName(rank int) string {
	if rank == AnySource {
		return "any source"
	}
	return "rank " + strconv.Itoa(rank)
}

// tagName is a receive's tag as a message says it.
func tagName(tag int) string {
	if tag == AnyTag {
		return "any tag"
	}
	return "tag " + strconv.Itoa(tag)
}
