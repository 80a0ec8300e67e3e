package meshmpi

import (
	"fmt"

	"github.com/meshmpi/meshmpi/op"
	"github.com/meshmpi/meshmpi/peer"
)

// Isendrecv starts sending sendbuf to dest and receiving into recvbuf
// from source (MPI_Isendrecv, MPI-4.1 §3.10): the request completes when
// both have, with the receive's status. Like Sendrecv, it does not
// deadlock against a matching call, and the buffers must not overlap.
// Cancel cancels the receive; the send, as any send, completes.
func Isendrecv[T, U Element](c *Comm, sendbuf []T, dest, sendtag int, recvbuf []U, source, recvtag int) (*Request, error) {
	q := &sendrecvRequest{}
	if err := q.recv.prepare(c, p2pRecv, source, recvtag, op.Bytes(recvbuf), op.SizeOf[U]()); err != nil {
		return nil, fmt.Errorf("isendrecv: %w", err)
	}
	if err := q.send.prepare(c, p2pSend, dest, sendtag, op.Bytes(sendbuf), op.SizeOf[T]()); err != nil {
		return nil, fmt.Errorf("isendrecv: %w", err)
	}
	if overlap(q.send.buf, q.recv.buf) {
		return nil, fmt.Errorf("isendrecv on %s: send and receive buffers overlap (IsendrecvReplace exchanges in place): %w", c, ErrBuffer)
	}
	return q.begin()
}

// IsendrecvReplace starts sending buf to dest and replacing its contents
// with a message from source (MPI_Isendrecv_replace). The message is
// received into a copy of buf's size, and copied into buf when the
// request completes without error: until then buf holds what is sent.
func IsendrecvReplace[T Element](c *Comm, buf []T, dest, sendtag, source, recvtag int) (*Request, error) {
	b := op.Bytes(buf)
	q := &sendrecvRequest{replace: b}
	tmp := make([]byte, len(b))
	if err := q.recv.prepare(c, p2pRecv, source, recvtag, tmp, op.SizeOf[T]()); err != nil {
		return nil, fmt.Errorf("isendrecv replace: %w", err)
	}
	if err := q.send.prepare(c, p2pSend, dest, sendtag, b, op.SizeOf[T]()); err != nil {
		return nil, fmt.Errorf("isendrecv replace: %w", err)
	}
	return q.begin()
}

// sendrecvRequest is the operation of Isendrecv: a receive and a send,
// started at once, the receive first.
type sendrecvRequest struct {
	send, recv p2pRequest
	replace    []byte // IsendrecvReplace's buffer, which the received bytes replace
}

func (q *sendrecvRequest) begin() (*Request, error) {
	c := q.recv.c
	if err := q.recv.start(); err != nil {
		return nil, fmt.Errorf("isendrecv: %w", err)
	}
	c.hold()
	q.recv.held = true
	if err := q.send.start(); err != nil {
		_ = q.recv.cancel()
		if q.recv.op != nil {
			c.p.await(q.recv.op, q.recv.block())
		}
		_, _ = q.recv.result(false)
		return nil, fmt.Errorf("isendrecv: %w", err)
	}
	c.hold()
	q.send.held = true
	return &Request{wait: c.p.wait, impl: q, state: Active}, nil
}

func (q *sendrecvRequest) start() error {
	return fmt.Errorf("start: not a persistent request: %w", ErrRequest)
}

func (q *sendrecvRequest) finished() bool { return q.recv.finished() && q.send.finished() }

// done is the channel of a half not finished yet: Wait asks again after
// it closes.
func (q *sendrecvRequest) done() <-chan struct{} {
	if !q.recv.finished() {
		return q.recv.done()
	}
	return q.send.done()
}

func (q *sendrecvRequest) result(bool) (Status, error) {
	_, serr := q.send.result(false)
	st, rerr := q.recv.result(false)
	if rerr == nil && serr == nil && q.replace != nil {
		copy(q.replace, q.recv.buf[:st.Bytes])
	}
	if serr != nil {
		st.Err = serr
		return st, serr
	}
	return st, rerr
}

func (q *sendrecvRequest) cancel() error {
	return q.recv.cancel()
}

func (q *sendrecvRequest) detach() error {
	_ = q.send.detach()
	return q.recv.detach()
}

func (q *sendrecvRequest) release() {
	q.send.release()
	q.recv.release()
}

func (q *sendrecvRequest) endpoint() *peer.Endpoint {
	if ep := q.recv.endpoint(); ep != nil {
		return ep
	}
	return q.send.endpoint()
}
