package meshmpi

import (
	"fmt"
	"math/bits"
	"sync"

	"github.com/meshmpi/meshmpi/op"
)

// Pack buffers: the staging memory of non-contiguous layouts, reused.
// Buffers come in power-of-two classes from 256 B; each class is a
// sync.Pool, so idle buffers are bounded by what the garbage collector
// leaves and a steady stream of typed messages allocates nothing.

const minPackShift = 8 // the smallest class: 256 bytes

var packPools [48]sync.Pool

func packClass(n int) int {
	if n <= 1<<minPackShift {
		return 0
	}
	return bits.Len(uint(n-1)) - minPackShift
}

// getPack returns a buffer of at least n bytes; give it back with putPack.
func getPack(n int) *[]byte {
	k := packClass(n)
	if b, ok := packPools[k].Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, 1<<(k+minPackShift))
	return &b
}

func putPack(b *[]byte) {
	if b != nil {
		packPools[packClass(cap(*b))].Put(b)
	}
}

// typedBuf is a count of a datatype in a caller's buffer, checked: the
// layout lies inside buf.
type typedBuf struct {
	buf    []byte
	origin int // the first element's origin in buf
	count  int
	dt     *Datatype
	lay    *op.Layout
	bytes  int  // packed bytes
	contig bool // the packed stream is buf[off:off+bytes]
	off    int
}

// check validates (buf[origin:], count, dt) for communication: a committed
// type (ErrType), a count ≥ 0 (ErrCount), and every byte it describes
// inside buf (ErrBuffer).
func (t *typedBuf) check(buf []byte, origin, count int, dt *Datatype) error {
	lay, err := dt.layout(count)
	if err != nil {
		return err
	}
	*t = typedBuf{buf: buf, origin: origin, count: count, dt: dt, lay: lay, bytes: count * lay.Size()}
	if lo, hi := lay.Span(count); hi > lo && (origin+lo < 0 || origin+hi > len(buf)) {
		return fmt.Errorf("%d × %s at byte %d reaches bytes [%d, %d) of a %d-byte buffer: %w",
			count, dt, origin, origin+lo, origin+hi, len(buf), ErrBuffer)
	}
	off, ok := lay.Contiguous(count)
	t.contig, t.off = ok, origin+off
	return nil
}

// direct returns the caller's memory of a contiguous layout.
func (t *typedBuf) direct() []byte { return t.buf[t.off : t.off+t.bytes : t.off+t.bytes] }

// pack writes the packed stream into p (len(p) == t.bytes).
func (t *typedBuf) pack(p []byte) { t.lay.Pack(p, t.buf, t.origin, 0) }

// unpack writes p, the first len(p) bytes of the packed stream, into the
// layout.
func (t *typedBuf) unpack(p []byte) { t.lay.Unpack(t.buf, t.origin, 0, p) }

// typedCount is MPI_Get_count for a datatype of size bytes: Undefined
// when n bytes are not a whole number of elements.
func typedCount(n, size int) int {
	switch {
	case size == 0:
		return 0
	case n%size != 0:
		return Undefined
	}
	return n / size
}

// GetCountTyped returns the whole elements of dt a typed receive's status
// describes (MPI_Get_count), Undefined if a partial element arrived.
func GetCountTyped(st Status, dt *Datatype) int { return typedCount(st.Bytes, dt.Size()) }
