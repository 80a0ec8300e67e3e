package peer

import (
	"fmt"
	"unsafe"

	"github.com/meshmpi/meshmpi/op"
)

// The accumulating receive (after MPIX_Recv_accumulate): each fragment of
// the message is reduced into the receive buffer as it lands, so a large
// message needs no full-size temporary buffer at the receiver. Fragments
// end wherever a frame ends, not on element boundaries: a partial element
// waits in the Op's carry until the next fragment completes it.

// maxCarry bounds an element's size: the largest element type (a Loc pair
// of a 16-byte value, or complex128) fits.
const maxCarry = 32

// stageWords is the size in 8-byte words of the aligned staging buffer a
// misaligned fragment is reduced through (reduction kernels view bytes as
// typed slices, which must be aligned).
const stageWords = 512

// StartRecvAccumulate starts a receive like StartRecv whose message is
// reduced into buf with red, element type t: buf[i] = msg[i] ⊕ buf[i]
// (the message is the left operand). op.Replace makes it an ordinary
// receive. buf must be a whole number of aligned t elements, as a typed
// slice viewed with op.Bytes is.
func (e *Endpoint) StartRecvAccumulate(o *Op, src int, ctx uint32, tag int32, buf []byte, red *op.Op, t op.Type) error {
	acc, err := newAccumulator(buf, red, t)
	if err != nil {
		return err
	}
	return e.startRecv(o, src, ctx, tag, -1, buf, acc)
}

// RecvAccumulateNotify is RecvNotify for an accumulating receive: the
// collective engine's fused receive-and-reduce steps.
func (e *Endpoint) RecvAccumulateNotify(src int, ctx uint32, tag, mask int32, buf []byte, red *op.Op, t op.Type, c Completer, id int32) error {
	acc, err := newAccumulator(buf, red, t)
	if err != nil {
		return err
	}
	o := e.GetOp()
	o.completer, o.cid, o.auto = c, id, true
	if err := e.startRecv(o, src, ctx, tag, mask, buf, acc); err != nil {
		e.PutOp(o)
		return err
	}
	return nil
}

func newAccumulator(buf []byte, red *op.Op, t op.Type) (accumulator, error) {
	size := t.Size()
	switch {
	case !red.Defined(t):
		return accumulator{}, fmt.Errorf("peer: accumulate with %s on %v: %w", red.Name(), t, op.ErrOp)
	case size > maxCarry:
		return accumulator{}, fmt.Errorf("peer: accumulate on %d-byte %v elements (at most %d): %w", size, t, maxCarry, op.ErrType)
	case len(buf)%size != 0:
		return accumulator{}, fmt.Errorf("peer: accumulate into %d bytes, not whole %d-byte elements: %w", len(buf), size, op.ErrCount)
	case len(buf) > 0 && uintptr(unsafe.Pointer(unsafe.SliceData(buf)))%uintptr(min(size, 8)) != 0:
		return accumulator{}, fmt.Errorf("peer: accumulate into a buffer misaligned for %v: %w", t, op.ErrType)
	}
	return accumulator{red, t, size}, nil
}

// accumulator is the reduction of an accumulating receive; zero for a
// plain receive.
type accumulator struct {
	red  *op.Op
	t    op.Type
	size int
}

// land puts payload, the bytes at offset off of the message, into
// o.buf[:end]: a copy, or for an accumulating receive a reduction. It
// returns how many bytes landed.
func (o *Op) land(off, end int, payload []byte) int {
	if off >= end {
		return 0
	}
	n := min(len(payload), end-off)
	if o.acc.red == nil {
		return copy(o.buf[off:end], payload[:n])
	}
	o.accumulate(off, payload[:n])
	return n
}

// accumulate reduces p, the message bytes at offset off, into o.buf,
// completing a carried partial element first and carrying the tail.
func (o *Op) accumulate(off int, p []byte) {
	size := o.acc.size
	carry := unsafe.Slice((*byte)(unsafe.Pointer(&o.carry)), maxCarry)
	if o.carried > 0 {
		k := copy(carry[o.carried:size], p)
		o.carried += k
		p, off = p[k:], off+k
		if o.carried < size {
			return
		}
		o.reduce(carry[:size], o.buf[off-size:off])
		o.carried = 0
	}
	whole := len(p) - len(p)%size
	o.reduce(p[:whole], o.buf[off:off+whole])
	o.carried = copy(carry, p[whole:])
}

// reduce is acc.red on aligned views: a misaligned in (a fragment that
// starts mid-element, or a memory link's slice of the sender's buffer) is
// reduced through the Op's staging buffer, allocated once per pooled Op.
func (o *Op) reduce(in, inout []byte) {
	a := o.acc
	if len(in) == 0 {
		return
	}
	if uintptr(unsafe.Pointer(unsafe.SliceData(in)))%8 == 0 {
		_ = a.red.Reduce(a.t, in, inout) // arguments checked at start
		return
	}
	if o.stage == nil {
		o.stage = new([stageWords]uint64)
	}
	stage := unsafe.Slice((*byte)(unsafe.Pointer(o.stage)), stageWords*8)
	chunk := len(stage) - len(stage)%a.size
	for len(in) > 0 {
		k := min(chunk, len(in))
		copy(stage, in[:k])
		_ = a.red.Reduce(a.t, stage[:k], inout[:k])
		in, inout = in[k:], inout[k:]
	}
}
