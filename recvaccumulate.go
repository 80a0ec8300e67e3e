package meshmpi

import (
	"fmt"

	"github.com/meshmpi/meshmpi/op"
)

// The accumulating receive (after the MPIX_Recv_accumulate proposal):
// a receive whose message is combined into the receive buffer with an Op,
// buf[i] = msg[i] ⊕ buf[i], fragment by fragment as the message lands. It
// needs no temporary buffer as large as the message: a Recv followed by
// ReduceLocal does, and touches the data twice. With Replace it is exactly
// Recv; a message longer than buf fills it and returns ErrTruncate, as
// Recv does. The message is the left operand, which matters for
// non-commutative ops.

// recvAccumulate prepares an accumulating receive.
func recvAccumulate[T Element](q *p2pRequest, c *Comm, buf []T, o *Op, source, tag int) error {
	if err := q.prepare(c, p2pRecv, source, tag, op.Bytes(buf), op.SizeOf[T]()); err != nil {
		return err
	}
	t := op.TypeOf[T]()
	if !o.Defined(t) {
		return fmt.Errorf("receive-accumulate on %s: %s is not defined on %v: %w", c, o.Name(), t, ErrOp)
	}
	q.acc, q.accT = o, t
	return nil
}

// RecvAccumulate receives a message from rank source (or AnySource) with tag
// (or AnyTag) and reduces it into buf with o (MPIX_Recv_accumulate).
func RecvAccumulate[T Element](c *Comm, buf []T, o *Op, source, tag int) (Status, error) {
	var q p2pRequest
	if err := recvAccumulate(&q, c, buf, o, source, tag); err != nil {
		return Status{}, err
	}
	return q.run()
}

// IrecvAccumulate starts an accumulating receive (MPIX_Irecv_accumulate);
// buf must not be touched until it completes.
func IrecvAccumulate[T Element](c *Comm, buf []T, o *Op, source, tag int) (*Request, error) {
	var q p2pRequest
	if err := recvAccumulate(&q, c, buf, o, source, tag); err != nil {
		return nil, err
	}
	return newRequest(&q, false)
}

// RecvAccumulateInit creates a persistent accumulating receive: each Start
// reduces the next matching message into buf.
func RecvAccumulateInit[T Element](c *Comm, buf []T, o *Op, source, tag int) (*Request, error) {
	var q p2pRequest
	if err := recvAccumulate(&q, c, buf, o, source, tag); err != nil {
		return nil, err
	}
	return newRequest(&q, true)
}
