package object

import (
	"context"
	"fmt"

	"github.com/meshmpi/meshmpi"
)

// Send sends v to rank dest of c with tag (comm.send in mpi4py). Any
// value that CBOR can encode may be sent: structs (exported fields),
// maps, slices, strings, numbers, and pointers to them.
func Send[T any](c *meshmpi.Comm, v T, dest, tag int) error {
	msg, err := encode(v)
	if err != nil {
		return fmt.Errorf("object send to %d: %w", dest, err)
	}
	return meshmpi.Send(c, msg, dest, tag)
}

// Ssend is Send that returns only after the receiver matched the message
// (comm.ssend).
func Ssend[T any](c *meshmpi.Comm, v T, dest, tag int) error {
	msg, err := encode(v)
	if err != nil {
		return fmt.Errorf("object ssend to %d: %w", dest, err)
	}
	return meshmpi.Ssend(c, msg, dest, tag)
}

// Isend starts sending v (comm.isend): v is encoded now, so it may change
// as soon as Isend returns; the request completes as a byte Isend does.
func Isend[T any](c *meshmpi.Comm, v T, dest, tag int) (*meshmpi.Request, error) {
	msg, err := encode(v)
	if err != nil {
		return nil, fmt.Errorf("object isend to %d: %w", dest, err)
	}
	return meshmpi.Isend(c, msg, dest, tag)
}

// Recv receives a value of type T from source with tag (obj =
// comm.recv(source, tag)); source may be AnySource and tag AnyTag. The
// message's length comes with it: nothing is agreed beforehand. A message
// that is not a T (another fixed layout, or an encoding that does not
// decode into T) gives ErrDecode, after it was received. From ProcNull,
// Recv returns T's zero value and the ProcNull status. Status.Count is 1
// for a received value, Status.Bytes the message's length.
func Recv[T any](c *meshmpi.Comm, source, tag int) (T, meshmpi.Status, error) {
	var zero T
	m, st, err := c.Mprobe(source, tag)
	if err != nil {
		return zero, st, err
	}
	return receive[T](m, st)
}

// receive receives the probed message m, whose probe status is st.
func receive[T any](m *meshmpi.Message, st meshmpi.Status) (T, meshmpi.Status, error) {
	var zero T
	if st.Source == meshmpi.ProcNull {
		_, err := meshmpi.Mrecv(m, []byte(nil))
		return zero, st, err
	}
	buf := make([]byte, st.Bytes)
	st, err := meshmpi.Mrecv(m, buf)
	if err != nil {
		return zero, st, err
	}
	v, err := decodeMessage[T](buf)
	if err != nil {
		err = fmt.Errorf("object recv from %d tag %d: %w", st.Source, st.Tag, err)
		st.Err = err
		return zero, st, err
	}
	st.Count = 1
	return v, st, nil
}

// Sendrecv sends v to dest and receives a U from source, without
// deadlock whichever rank calls first (comm.sendrecv).
func Sendrecv[T, U any](c *meshmpi.Comm, v T, dest, sendtag, source, recvtag int) (U, meshmpi.Status, error) {
	var zero U
	req, err := Isend(c, v, dest, sendtag)
	if err != nil {
		return zero, meshmpi.Status{}, err
	}
	u, st, rerr := Recv[U](c, source, recvtag)
	if _, err := req.Wait(context.Background()); err != nil && rerr == nil {
		return u, st, fmt.Errorf("object sendrecv: %w", err)
	}
	return u, st, rerr
}
