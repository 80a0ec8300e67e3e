package meshmpi

// Point-to-point with datatypes: count elements of a Datatype in raw
// memory. A layout that is one run of memory goes straight from and into
// the caller's buffer, exactly as Send and Recv of a typed slice do. Any
// other layout is packed into a pooled buffer before a send starts, and a
// receive lands in a pooled buffer and is unpacked when it completes
// (Wait, Test, or the blocking call's return).
//
// Memory: a non-contiguous message needs one packed copy of itself on each
// side, taken from a pool, so a steady stream of them allocates nothing.
// The peer layer lands a message's fragments straight in the buffer it was
// given and offers no per-fragment hook, so a rendezvous-size receive of a
// non-contiguous type stages the whole packed message; op.Layout.Unpack
// takes any byte range of the packed stream, so a fragment hook in peer
// (as its accumulating receive has) would unpack each fragment as it lands
// with no staging.

import (
	"fmt"

	"github.com/meshmpi/meshmpi/peer"
)

// typedState is what a point-to-point operation on a datatype adds to the
// p2pRequest that moves its packed stream. Its methods take that request
// as an argument rather than holding a pointer to it, so the blocking
// calls keep both on the stack.
type typedState struct {
	t  typedBuf
	pb *[]byte // the pack buffer, while held
}

// prepare validates the call into s and p.
func (s *typedState) prepare(p *p2pRequest, c *Comm, kind p2pKind, buf []byte, count int, dt *Datatype, rank, tag int) error {
	if err := s.t.check(buf, 0, count, dt); err != nil {
		if kind == p2pSend {
			return fmt.Errorf("send on %s: %w", c, err)
		}
		return fmt.Errorf("receive on %s: %w", c, err)
	}
	var direct []byte
	if s.t.contig {
		direct = s.t.direct()
	}
	return p.prepare(c, kind, rank, tag, direct, 1)
}

// stage points p at the memory it moves: the caller's for a contiguous
// layout, else a pack buffer, packed now for a send.
func (s *typedState) stage(p *p2pRequest) {
	if s.t.contig || p.rank == ProcNull || s.t.bytes == 0 {
		return
	}
	if s.pb == nil {
		s.pb = getPack(s.t.bytes)
	}
	b := (*s.pb)[:s.t.bytes:s.t.bytes]
	if p.kind == p2pSend {
		s.t.pack(b)
	}
	p.buf = b
}

// finish completes p's result: a receive's bytes unpacked, the count in
// elements of the datatype, the pack buffer back in the pool unless the
// request keeps it.
func (s *typedState) finish(p *p2pRequest, st Status, err error, keep bool) (Status, error) {
	if p.kind == p2pSend {
		if err == nil && p.rank != ProcNull { // ProcNull moved nothing
			st.Count = s.t.count
		}
	} else {
		if n := min(st.Bytes, s.t.bytes); n > 0 && s.pb != nil {
			s.t.unpack((*s.pb)[:n])
		}
		st.Count = typedCount(st.Bytes, s.t.dt.Size())
	}
	if !keep {
		putPack(s.pb)
		s.pb = nil
	}
	return st, err
}

// typedRequest is the operation of a typed Request: the Request's
// p2pRequest and the typed state around it.
type typedRequest struct {
	p *p2pRequest
	typedState
}

func (q *typedRequest) start() error {
	q.stage(q.p)
	return q.p.start()
}

func (q *typedRequest) finished() bool           { return q.p.finished() }
func (q *typedRequest) done() <-chan struct{}    { return q.p.done() }
func (q *typedRequest) endpoint() *peer.Endpoint { return q.p.endpoint() }
func (q *typedRequest) cancel() error            { return q.p.cancel() }

func (q *typedRequest) result(keep bool) (Status, error) {
	st, err := q.p.result(keep)
	return q.finish(q.p, st, err, keep)
}

// detach lets an active operation finish unobserved (Free). A staged
// receive must still be unpacked when it lands: a goroutine waits for it,
// since nobody else will. A staged send's buffer is left to the garbage
// collector, as the link may still read it.
func (q *typedRequest) detach() error {
	if q.pb == nil || q.p.kind == p2pSend {
		q.pb = nil
		return q.p.detach()
	}
	go func() {
		for !q.p.finished() {
			<-q.p.done()
		}
		_, _ = q.result(false)
	}()
	return nil
}

func (q *typedRequest) release() {
	q.p.release()
	putPack(q.pb)
	q.pb = nil
}

// newTypedRequest makes the Request of a prepared typed operation: a
// point-to-point request whose operation is wrapped by q.
func newTypedRequest(p *p2pRequest, s *typedState, persistent bool) (*Request, error) {
	if !persistent {
		s.stage(p)
	}
	r, err := newRequest(p, persistent)
	if err != nil {
		putPack(s.pb)
		return nil, err
	}
	r.impl = &typedRequest{p: &r.p2p, typedState: *s}
	return r, nil
}

func typedOp(c *Comm, kind p2pKind, mode peer.Mode, buf []byte, count int, dt *Datatype, rank, tag int) (Status, error) {
	var p p2pRequest
	var s typedState
	if err := s.prepare(&p, c, kind, buf, count, dt, rank, tag); err != nil {
		return Status{}, err
	}
	p.mode = mode
	s.stage(&p)
	st, err := p.run()
	return s.finish(&p, st, err, false)
}

func typedRequestOf(c *Comm, kind p2pKind, mode peer.Mode, buf []byte, count int, dt *Datatype, rank, tag int, persistent bool) (*Request, error) {
	var p p2pRequest
	var s typedState
	if err := s.prepare(&p, c, kind, buf, count, dt, rank, tag); err != nil {
		return nil, err
	}
	p.mode = mode
	return newTypedRequest(&p, &s, persistent)
}

// SendTyped sends count elements of dt laid out in buf, whose first byte
// is the datatype's origin (MPI_Send with a datatype). A layout that is
// one run of memory is sent straight from buf; others are packed first.
// An uncommitted or freed dt gives ErrType, a layout reaching outside buf
// ErrBuffer.
func SendTyped(c *Comm, buf []byte, count int, dt *Datatype, dest, tag int) error {
	_, err := typedOp(c, p2pSend, peer.Standard, buf, count, dt, dest, tag)
	return err
}

// SsendTyped is SendTyped that returns only after the receiver matched
// the message (MPI_Ssend).
func SsendTyped(c *Comm, buf []byte, count int, dt *Datatype, dest, tag int) error {
	_, err := typedOp(c, p2pSend, peer.Synchronous, buf, count, dt, dest, tag)
	return err
}

// RecvTyped receives into count elements of dt laid out in buf (MPI_Recv
// with a datatype). Status.Count is in elements of dt, Undefined when the
// message ended inside an element (MPI_Get_count); Status.Bytes is exact.
// A message longer than count elements fills them and gives ErrTruncate;
// nothing outside the layout is written.
func RecvTyped(c *Comm, buf []byte, count int, dt *Datatype, source, tag int) (Status, error) {
	return typedOp(c, p2pRecv, peer.Standard, buf, count, dt, source, tag)
}

// IsendTyped starts SendTyped (MPI_Isend); buf must not change until it
// completes.
func IsendTyped(c *Comm, buf []byte, count int, dt *Datatype, dest, tag int) (*Request, error) {
	return typedRequestOf(c, p2pSend, peer.Standard, buf, count, dt, dest, tag, false)
}

// IssendTyped starts SsendTyped (MPI_Issend); buf must not change until
// it completes.
func IssendTyped(c *Comm, buf []byte, count int, dt *Datatype, dest, tag int) (*Request, error) {
	return typedRequestOf(c, p2pSend, peer.Synchronous, buf, count, dt, dest, tag, false)
}

// IrecvTyped starts RecvTyped (MPI_Irecv); buf holds the data once Wait
// or Test reports the request complete.
func IrecvTyped(c *Comm, buf []byte, count int, dt *Datatype, source, tag int) (*Request, error) {
	return typedRequestOf(c, p2pRecv, peer.Standard, buf, count, dt, source, tag, false)
}

// SendTypedInit creates a persistent SendTyped (MPI_Send_init): each Start
// sends buf's current contents. A non-contiguous layout keeps its pack
// buffer for the request's life, so Start allocates nothing.
func SendTypedInit(c *Comm, buf []byte, count int, dt *Datatype, dest, tag int) (*Request, error) {
	return typedRequestOf(c, p2pSend, peer.Standard, buf, count, dt, dest, tag, true)
}

// SsendTypedInit creates a persistent SsendTyped (MPI_Ssend_init).
func SsendTypedInit(c *Comm, buf []byte, count int, dt *Datatype, dest, tag int) (*Request, error) {
	return typedRequestOf(c, p2pSend, peer.Synchronous, buf, count, dt, dest, tag, true)
}

// RecvTypedInit creates a persistent RecvTyped (MPI_Recv_init).
func RecvTypedInit(c *Comm, buf []byte, count int, dt *Datatype, source, tag int) (*Request, error) {
	return typedRequestOf(c, p2pRecv, peer.Standard, buf, count, dt, source, tag, true)
}
