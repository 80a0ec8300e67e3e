package object

import (
	"errors"
	"fmt"
	"sync"

	"github.com/meshmpi/meshmpi"
)

// bcastInline is the size of Bcast's first message: the header and the
// first bytes of the payload. A value that fits (most configs and
// parameters) costs one byte Bcast; a larger one a second Bcast of the
// rest. Every rank uses the same constant, so no rank needs the length
// beforehand. 2 KiB keeps the first message among the small frames that
// in-process ranks hand over cheaply (peer's memory link queues frames up
// to 4 KiB) and costs a 1 KiB value half a kilobyte more on the wire.
const bcastInline = 2048

// firstBufs recycles Bcast's first messages.
var firstBufs = sync.Pool{New: func() any { b := make([]byte, bcastInline); return &b }}

// failed is the length a rank announces instead of its value's when it
// has none to give (its encoding failed, or the root's arguments were
// wrong): every rank learns it from the length exchange, and the
// collective fails everywhere instead of leaving some ranks waiting.
const failed = -1

// errPeerFailed marks the error of a rank whose collective failed
// because another rank could not give its value.
var errPeerFailed = errors.New("a rank could not encode its value")

func checkIntra(c *meshmpi.Comm, call string) error {
	if c.TestInter() {
		return fmt.Errorf("object %s on %s: intercommunicators: %w", call, c, meshmpi.ErrNotSupported)
	}
	return nil
}

// Bcast broadcasts root's v; every rank returns it (v = comm.bcast(v,
// root)). Non-roots' v is ignored. If root cannot encode v, every rank
// returns an error.
func Bcast[T any](c *meshmpi.Comm, v T, root int) (T, error) {
	var zero T
	if err := checkIntra(c, "bcast"); err != nil {
		return zero, err
	}
	fp := firstBufs.Get().(*[]byte)
	defer firstBufs.Put(fp)
	first := *fp
	var msg []byte
	var encErr error
	if c.Rank() == root {
		// encoded in place when it fits; an all-zero header (format 0)
		// tells the others that the root has no value
		if msg, encErr = encodeInto(first, v); encErr != nil {
			clear(first[:headerLen])
		} else if n := copy(first, msg); n < bcastInline {
			// the pooled buffer holds an earlier value past this one's
			// end: it travels too, so it must not be that value
			clear(first[n:])
		}
	}
	if err := meshmpi.Bcast(c, first, root); err != nil {
		return zero, err
	}
	if c.Rank() == root {
		if encErr != nil {
			return zero, fmt.Errorf("object bcast: %w", encErr)
		}
		if len(msg) > bcastInline {
			if err := meshmpi.Bcast(c, msg[bcastInline:], root); err != nil {
				return zero, err
			}
		}
		return v, nil
	}
	if first[8] == 0 {
		return zero, fmt.Errorf("object bcast from %d: %w", root, errPeerFailed)
	}
	h, err := readHeader(first)
	if err != nil {
		return zero, fmt.Errorf("object bcast from %d: %w", root, err)
	}
	payload := first[headerLen:]
	if room := bcastInline - headerLen; h.n > room {
		payload = make([]byte, h.n)
		copy(payload, first[headerLen:])
		if err := meshmpi.Bcast(c, payload[room:], root); err != nil {
			return zero, err
		}
	} else {
		payload = payload[:h.n]
	}
	out, err := decode[T](h, payload) // copies: first can go back to the pool
	if err != nil {
		return zero, fmt.Errorf("object bcast from %d: %w", root, err)
	}
	return out, nil
}

// Gather collects every rank's v at root, in rank order (vs =
// comm.gather(v, root)); other ranks get nil.
func Gather[T any](c *meshmpi.Comm, v T, root int) ([]T, error) {
	if err := checkIntra(c, "gather"); err != nil {
		return nil, err
	}
	msg, encErr := encode(v)
	size := []int64{int64(len(msg))}
	if encErr != nil {
		size[0], msg = failed, nil
	}
	var sizes []int64
	if c.Rank() == root {
		sizes = make([]int64, c.Size())
	}
	if err := meshmpi.Gather(c, size, sizes, root); err != nil {
		return nil, err
	}
	// every rank takes part in the data phase, a failed one with nothing,
	// since only the root knows who failed
	var all []byte
	var counts, displs []int
	if c.Rank() == root {
		counts, displs, all = layout(sizes)
	}
	if err := meshmpi.Gatherv(c, msg, all, counts, displs, root); err != nil {
		return nil, err
	}
	if encErr != nil {
		return nil, fmt.Errorf("object gather: %w", encErr)
	}
	if c.Rank() != root {
		return nil, nil
	}
	return decodeAll[T](all, sizes, counts, displs, "gather")
}

// Allgather collects every rank's v at every rank, in rank order (vs =
// comm.allgather(v)).
func Allgather[T any](c *meshmpi.Comm, v T) ([]T, error) {
	if err := checkIntra(c, "allgather"); err != nil {
		return nil, err
	}
	msg, encErr := encode(v)
	size := []int64{int64(len(msg))}
	if encErr != nil {
		size[0] = failed
	}
	sizes := make([]int64, c.Size())
	if err := meshmpi.Allgather(c, size, sizes); err != nil {
		return nil, err
	}
	if encErr != nil {
		return nil, fmt.Errorf("object allgather: %w", encErr)
	}
	if err := anyFailed(sizes, "allgather"); err != nil {
		return nil, err // every rank saw it: none starts the data phase
	}
	counts, displs, all := layout(sizes)
	if err := meshmpi.Allgatherv(c, msg, all, counts, displs); err != nil {
		return nil, err
	}
	return decodeAll[T](all, sizes, counts, displs, "allgather")
}

// Scatter gives rank r the value vs[r] of root (v = comm.scatter(vs,
// root)); vs matters only at root, where it must hold one value per rank.
func Scatter[T any](c *meshmpi.Comm, vs []T, root int) (T, error) {
	var zero T
	if err := checkIntra(c, "scatter"); err != nil {
		return zero, err
	}
	var (
		sizes   []int64
		all     []byte
		counts  []int
		displs  []int
		rootErr error
	)
	if c.Rank() == root {
		sizes = make([]int64, c.Size())
		msgs, err := encodeEach(vs, c.Size(), "scatter")
		if err != nil {
			rootErr = err
			for i := range sizes {
				sizes[i] = failed
			}
		} else {
			for i, m := range msgs {
				sizes[i] = int64(len(m))
			}
			counts, displs, all = layout(sizes)
			for i, m := range msgs {
				copy(all[displs[i]:], m)
			}
		}
	}
	size := []int64{0}
	if err := meshmpi.Scatter(c, sizes, size, root); err != nil {
		return zero, err
	}
	if rootErr != nil {
		return zero, rootErr
	}
	if size[0] == failed {
		return zero, fmt.Errorf("object scatter: root %d had no values to give: %w", root, errPeerFailed)
	}
	mine := make([]byte, size[0])
	if err := meshmpi.Scatterv(c, all, counts, displs, mine, root); err != nil {
		return zero, err
	}
	out, err := decodeMessage[T](mine)
	if err != nil {
		return zero, fmt.Errorf("object scatter from %d: %w", root, err)
	}
	return out, nil
}

// Alltoall sends vs[r] to rank r and returns what each rank sent this one,
// in rank order (comm.alltoall(vs)); vs must hold one value per rank.
func Alltoall[T any](c *meshmpi.Comm, vs []T) ([]T, error) {
	if err := checkIntra(c, "alltoall"); err != nil {
		return nil, err
	}
	n := c.Size()
	msgs, encErr := encodeEach(vs, n, "alltoall")
	sendSizes, recvSizes := make([]int64, n), make([]int64, n)
	for i := range sendSizes {
		if encErr != nil {
			sendSizes[i] = failed
		} else {
			sendSizes[i] = int64(len(msgs[i]))
		}
	}
	if err := meshmpi.Alltoall(c, sendSizes, recvSizes); err != nil {
		return nil, err
	}
	if encErr != nil {
		return nil, encErr
	}
	if err := anyFailed(recvSizes, "alltoall"); err != nil {
		return nil, err // the failed rank told every rank: none starts the data phase
	}
	sendCounts, sendDispls, send := layout(sendSizes)
	for i, m := range msgs {
		copy(send[sendDispls[i]:], m)
	}
	recvCounts, recvDispls, recv := layout(recvSizes)
	if err := meshmpi.Alltoallv(c, send, sendCounts, sendDispls, recv, recvCounts, recvDispls); err != nil {
		return nil, err
	}
	return decodeAll[T](recv, recvSizes, recvCounts, recvDispls, "alltoall")
}

// Reduce combines every rank's v at root with f, in rank order: the
// result is f(…f(f(v0, v1), v2)…, vn−1), so f need not be commutative
// (comm.reduce(v, op, root)). Other ranks get T's zero value.
func Reduce[T any](c *meshmpi.Comm, v T, f func(a, b T) T, root int) (T, error) {
	var zero T
	if f == nil {
		return zero, fmt.Errorf("object reduce: nil function: %w", meshmpi.ErrOp)
	}
	vs, err := Gather(c, v, root)
	if err != nil || c.Rank() != root {
		return zero, err
	}
	acc := vs[0]
	for _, x := range vs[1:] {
		acc = f(acc, x)
	}
	return acc, nil
}

// Allreduce is Reduce whose result every rank gets (comm.allreduce(v,
// op)): reduced at rank 0, then broadcast.
func Allreduce[T any](c *meshmpi.Comm, v T, f func(a, b T) T) (T, error) {
	var zero T
	if f == nil {
		return zero, fmt.Errorf("object allreduce: nil function: %w", meshmpi.ErrOp)
	}
	acc, err := Reduce(c, v, f, 0)
	if err != nil {
		// the others wait in the broadcast: rank 0 tells them it failed
		// (an all-zero first message), a failed non-root takes part
		if c.Rank() == 0 {
			_ = meshmpi.Bcast(c, make([]byte, bcastInline), 0)
		} else {
			_, _ = Bcast(c, zero, 0)
		}
		return zero, err
	}
	return Bcast(c, acc, 0)
}

// layout returns the byte counts and displacements of messages of the
// given sizes laid end to end, and a buffer for them all. Failed sizes
// count as empty.
func layout(sizes []int64) (counts, displs []int, all []byte) {
	counts, displs = make([]int, len(sizes)), make([]int, len(sizes))
	total := 0
	for i, s := range sizes {
		displs[i] = total
		if s > 0 {
			counts[i] = int(s)
			total += int(s)
		}
	}
	return counts, displs, make([]byte, total)
}

// encodeEach encodes one value per rank.
func encodeEach[T any](vs []T, n int, call string) ([][]byte, error) {
	if len(vs) != n {
		return nil, fmt.Errorf("object %s: %d values for %d ranks: %w", call, len(vs), n, meshmpi.ErrCount)
	}
	msgs := make([][]byte, n)
	for i, v := range vs {
		m, err := encode(v)
		if err != nil {
			return nil, fmt.Errorf("object %s: value %d: %w", call, i, err)
		}
		msgs[i] = m
	}
	return msgs, nil
}

// anyFailed names the first rank that announced a failure.
func anyFailed(sizes []int64, call string) error {
	for r, s := range sizes {
		if s == failed {
			return fmt.Errorf("object %s: rank %d: %w", call, r, errPeerFailed)
		}
	}
	return nil
}

// decodeAll decodes the messages laid out in all.
func decodeAll[T any](all []byte, sizes []int64, counts, displs []int, call string) ([]T, error) {
	if err := anyFailed(sizes, call); err != nil {
		return nil, err
	}
	out := make([]T, len(sizes))
	for r := range sizes {
		v, err := decodeMessage[T](all[displs[r] : displs[r]+counts[r]])
		if err != nil {
			return nil, fmt.Errorf("object %s: from rank %d: %w", call, r, err)
		}
		out[r] = v
	}
	return out, nil
}
