//go:build cgo

package abi

import (
	"unsafe"

	"github.com/meshmpi/meshmpi"
)

// mode says how a collective runs: blocking, nonblocking (MPI_I…) or
// persistent (MPI_…_init).
type mode int

const (
	blocking mode = iota
	nonblocking
	persistent
)

// kind moves and reduces one Go element type: every call of the binding
// that takes buffers reaches the Go API's generic functions through it.
// Buffers are C addresses; counts are elements.
type kind interface {
	send(c *meshmpi.Comm, buf uintptr, n, dest, tag int, sync bool) error
	isend(c *meshmpi.Comm, buf uintptr, n, dest, tag int, sync bool, m mode) (*meshmpi.Request, error)
	recv(c *meshmpi.Comm, buf uintptr, n, src, tag int) (meshmpi.Status, error)
	irecv(c *meshmpi.Comm, buf uintptr, n, src, tag int, m mode) (*meshmpi.Request, error)
	sendrecvReplace(c *meshmpi.Comm, buf uintptr, n, dest, stag, src, rtag int) (meshmpi.Status, error)
	mrecv(msg *meshmpi.Message, buf uintptr, n int) (meshmpi.Status, error)
	isendCopy(c *meshmpi.Comm, buf uintptr, n, dest, tag int) (*meshmpi.Request, error)
	datatype() *meshmpi.Datatype
	imrecv(msg *meshmpi.Message, buf uintptr, n int) (*meshmpi.Request, error)
	bcast(c *meshmpi.Comm, buf uintptr, n, root int, m mode) (*meshmpi.Request, error)
	gather(c *meshmpi.Comm, s uintptr, sn int, r uintptr, rn, root int, m mode) (*meshmpi.Request, error)
	gatherv(c *meshmpi.Comm, s uintptr, sn int, r uintptr, rn int, counts, displs []int, root int, m mode) (*meshmpi.Request, error)
	scatter(c *meshmpi.Comm, s uintptr, sn int, r uintptr, rn, root int, m mode) (*meshmpi.Request, error)
	scatterv(c *meshmpi.Comm, s uintptr, sn int, counts, displs []int, r uintptr, rn, root int, m mode) (*meshmpi.Request, error)
	allgather(c *meshmpi.Comm, s uintptr, sn int, r uintptr, rn int, m mode) (*meshmpi.Request, error)
	allgatherv(c *meshmpi.Comm, s uintptr, sn int, r uintptr, rn int, counts, displs []int, m mode) (*meshmpi.Request, error)
	alltoall(c *meshmpi.Comm, s uintptr, sn int, r uintptr, rn int, m mode) (*meshmpi.Request, error)
	alltoallv(c *meshmpi.Comm, s uintptr, sn int, scounts, sdispls []int, r uintptr, rn int, rcounts, rdispls []int, m mode) (*meshmpi.Request, error)
	reduce(c *meshmpi.Comm, s, r uintptr, sn, rn int, o *meshmpi.Op, root int, m mode, hs ...meshmpi.Hint) (*meshmpi.Request, error)
	allreduce(c *meshmpi.Comm, s, r uintptr, n int, o *meshmpi.Op, m mode, hs ...meshmpi.Hint) (*meshmpi.Request, error)
	reduceScatterBlock(c *meshmpi.Comm, s, r uintptr, sn, rn int, o *meshmpi.Op, m mode) (*meshmpi.Request, error)
	reduceScatter(c *meshmpi.Comm, s, r uintptr, sn, rn int, counts []int, o *meshmpi.Op, m mode) (*meshmpi.Request, error)
	scan(c *meshmpi.Comm, s, r uintptr, n int, o *meshmpi.Op, exclusive bool, m mode) (*meshmpi.Request, error)
	reduceLocal(in, inout uintptr, n int, o *meshmpi.Op) error
}

// tk is the kind of element type T.
type tk[T meshmpi.Element] struct{}

// view is the n elements of T at the C address b; MPI_IN_PLACE is the Go
// API's InPlace, and a NULL buffer nil.
func view[T meshmpi.Element](b uintptr, n int) []T {
	switch {
	case b == inPlace:
		return meshmpi.InPlace[T]()
	case b == 0 || n <= 0:
		return nil
	}
	return unsafe.Slice((*T)(ptr(b)), n)
}

func run(m mode, block func() error, start, init func() (*meshmpi.Request, error)) (*meshmpi.Request, error) {
	switch m {
	case nonblocking:
		return start()
	case persistent:
		return init()
	}
	return nil, block()
}

func (tk[T]) send(c *meshmpi.Comm, buf uintptr, n, dest, tag int, sync bool) error {
	if sync {
		return meshmpi.Ssend(c, view[T](buf, n), dest, tag)
	}
	return meshmpi.Send(c, view[T](buf, n), dest, tag)
}

func (tk[T]) isend(c *meshmpi.Comm, buf uintptr, n, dest, tag int, sync bool, m mode) (*meshmpi.Request, error) {
	b := view[T](buf, n)
	switch {
	case m == persistent && sync:
		return meshmpi.SsendInit(c, b, dest, tag)
	case m == persistent:
		return meshmpi.SendInit(c, b, dest, tag)
	case sync:
		return meshmpi.Issend(c, b, dest, tag)
	}
	return meshmpi.Isend(c, b, dest, tag)
}

func (tk[T]) recv(c *meshmpi.Comm, buf uintptr, n, src, tag int) (meshmpi.Status, error) {
	return meshmpi.Recv(c, view[T](buf, n), src, tag)
}

func (tk[T]) irecv(c *meshmpi.Comm, buf uintptr, n, src, tag int, m mode) (*meshmpi.Request, error) {
	if m == persistent {
		return meshmpi.RecvInit(c, view[T](buf, n), src, tag)
	}
	return meshmpi.Irecv(c, view[T](buf, n), src, tag)
}

func (tk[T]) sendrecvReplace(c *meshmpi.Comm, buf uintptr, n, dest, stag, src, rtag int) (meshmpi.Status, error) {
	return meshmpi.SendrecvReplace(c, view[T](buf, n), dest, stag, src, rtag)
}

// datatype is the Go API's datatype of T (MPI_Alltoallw's types).
func (tk[T]) datatype() *meshmpi.Datatype { return meshmpi.DatatypeOf[T]() }

// isendCopy sends a copy of the buffer (MPI_Bsend).
func (tk[T]) isendCopy(c *meshmpi.Comm, buf uintptr, n, dest, tag int) (*meshmpi.Request, error) {
	return meshmpi.Isend(c, append([]T(nil), view[T](buf, n)...), dest, tag)
}

func (tk[T]) mrecv(msg *meshmpi.Message, buf uintptr, n int) (meshmpi.Status, error) {
	return meshmpi.Mrecv(msg, view[T](buf, n))
}

func (tk[T]) imrecv(msg *meshmpi.Message, buf uintptr, n int) (*meshmpi.Request, error) {
	return meshmpi.Imrecv(msg, view[T](buf, n))
}

func (tk[T]) bcast(c *meshmpi.Comm, buf uintptr, n, root int, m mode) (*meshmpi.Request, error) {
	b := view[T](buf, n)
	return run(m, func() error { return meshmpi.Bcast(c, b, root) },
		func() (*meshmpi.Request, error) { return meshmpi.Ibcast(c, b, root) },
		func() (*meshmpi.Request, error) { return meshmpi.BcastInit(c, b, root) })
}

func (tk[T]) gather(c *meshmpi.Comm, s uintptr, sn int, r uintptr, rn, root int, m mode) (*meshmpi.Request, error) {
	sb, rb := view[T](s, sn), view[T](r, rn)
	return run(m, func() error { return meshmpi.Gather(c, sb, rb, root) },
		func() (*meshmpi.Request, error) { return meshmpi.Igather(c, sb, rb, root) },
		func() (*meshmpi.Request, error) { return meshmpi.GatherInit(c, sb, rb, root) })
}

func (tk[T]) gatherv(c *meshmpi.Comm, s uintptr, sn int, r uintptr, rn int, counts, displs []int, root int, m mode) (*meshmpi.Request, error) {
	sb, rb := view[T](s, sn), view[T](r, rn)
	return run(m, func() error { return meshmpi.Gatherv(c, sb, rb, counts, displs, root) },
		func() (*meshmpi.Request, error) { return meshmpi.Igatherv(c, sb, rb, counts, displs, root) },
		func() (*meshmpi.Request, error) { return meshmpi.GathervInit(c, sb, rb, counts, displs, root) })
}

func (tk[T]) scatter(c *meshmpi.Comm, s uintptr, sn int, r uintptr, rn, root int, m mode) (*meshmpi.Request, error) {
	sb, rb := view[T](s, sn), view[T](r, rn)
	return run(m, func() error { return meshmpi.Scatter(c, sb, rb, root) },
		func() (*meshmpi.Request, error) { return meshmpi.Iscatter(c, sb, rb, root) },
		func() (*meshmpi.Request, error) { return meshmpi.ScatterInit(c, sb, rb, root) })
}

func (tk[T]) scatterv(c *meshmpi.Comm, s uintptr, sn int, counts, displs []int, r uintptr, rn, root int, m mode) (*meshmpi.Request, error) {
	sb, rb := view[T](s, sn), view[T](r, rn)
	return run(m, func() error { return meshmpi.Scatterv(c, sb, counts, displs, rb, root) },
		func() (*meshmpi.Request, error) { return meshmpi.Iscatterv(c, sb, counts, displs, rb, root) },
		func() (*meshmpi.Request, error) { return meshmpi.ScattervInit(c, sb, counts, displs, rb, root) })
}

func (tk[T]) allgather(c *meshmpi.Comm, s uintptr, sn int, r uintptr, rn int, m mode) (*meshmpi.Request, error) {
	sb, rb := view[T](s, sn), view[T](r, rn)
	return run(m, func() error { return meshmpi.Allgather(c, sb, rb) },
		func() (*meshmpi.Request, error) { return meshmpi.Iallgather(c, sb, rb) },
		func() (*meshmpi.Request, error) { return meshmpi.AllgatherInit(c, sb, rb) })
}

func (tk[T]) allgatherv(c *meshmpi.Comm, s uintptr, sn int, r uintptr, rn int, counts, displs []int, m mode) (*meshmpi.Request, error) {
	sb, rb := view[T](s, sn), view[T](r, rn)
	return run(m, func() error { return meshmpi.Allgatherv(c, sb, rb, counts, displs) },
		func() (*meshmpi.Request, error) { return meshmpi.Iallgatherv(c, sb, rb, counts, displs) },
		func() (*meshmpi.Request, error) { return meshmpi.AllgathervInit(c, sb, rb, counts, displs) })
}

func (tk[T]) alltoall(c *meshmpi.Comm, s uintptr, sn int, r uintptr, rn int, m mode) (*meshmpi.Request, error) {
	sb, rb := view[T](s, sn), view[T](r, rn)
	return run(m, func() error { return meshmpi.Alltoall(c, sb, rb) },
		func() (*meshmpi.Request, error) { return meshmpi.Ialltoall(c, sb, rb) },
		func() (*meshmpi.Request, error) { return meshmpi.AlltoallInit(c, sb, rb) })
}

func (tk[T]) alltoallv(c *meshmpi.Comm, s uintptr, sn int, scounts, sdispls []int, r uintptr, rn int, rcounts, rdispls []int, m mode) (*meshmpi.Request, error) {
	sb, rb := view[T](s, sn), view[T](r, rn)
	return run(m, func() error { return meshmpi.Alltoallv(c, sb, scounts, sdispls, rb, rcounts, rdispls) },
		func() (*meshmpi.Request, error) {
			return meshmpi.Ialltoallv(c, sb, scounts, sdispls, rb, rcounts, rdispls)
		},
		func() (*meshmpi.Request, error) {
			return meshmpi.AlltoallvInit(c, sb, scounts, sdispls, rb, rcounts, rdispls)
		})
}

func (tk[T]) reduce(c *meshmpi.Comm, s, r uintptr, sn, rn int, o *meshmpi.Op, root int, m mode, hs ...meshmpi.Hint) (*meshmpi.Request, error) {
	sb, rb := view[T](s, sn), view[T](r, rn)
	return run(m, func() error { return meshmpi.Reduce(c, sb, rb, o, root, hs...) },
		func() (*meshmpi.Request, error) { return meshmpi.Ireduce(c, sb, rb, o, root, hs...) },
		func() (*meshmpi.Request, error) { return meshmpi.ReduceInit(c, sb, rb, o, root, hs...) })
}

func (tk[T]) allreduce(c *meshmpi.Comm, s, r uintptr, n int, o *meshmpi.Op, m mode, hs ...meshmpi.Hint) (*meshmpi.Request, error) {
	sb, rb := view[T](s, n), view[T](r, n)
	return run(m, func() error { return meshmpi.Allreduce(c, sb, rb, o, hs...) },
		func() (*meshmpi.Request, error) { return meshmpi.Iallreduce(c, sb, rb, o, hs...) },
		func() (*meshmpi.Request, error) { return meshmpi.AllreduceInit(c, sb, rb, o, hs...) })
}

func (tk[T]) reduceScatterBlock(c *meshmpi.Comm, s, r uintptr, sn, rn int, o *meshmpi.Op, m mode) (*meshmpi.Request, error) {
	sb, rb := view[T](s, sn), view[T](r, rn)
	return run(m, func() error { return meshmpi.ReduceScatterBlock(c, sb, rb, o) },
		func() (*meshmpi.Request, error) { return meshmpi.IreduceScatterBlock(c, sb, rb, o) },
		func() (*meshmpi.Request, error) { return meshmpi.ReduceScatterBlockInit(c, sb, rb, o) })
}

func (tk[T]) reduceScatter(c *meshmpi.Comm, s, r uintptr, sn, rn int, counts []int, o *meshmpi.Op, m mode) (*meshmpi.Request, error) {
	sb, rb := view[T](s, sn), view[T](r, rn)
	return run(m, func() error { return meshmpi.ReduceScatter(c, sb, rb, counts, o) },
		func() (*meshmpi.Request, error) { return meshmpi.IreduceScatter(c, sb, rb, counts, o) },
		func() (*meshmpi.Request, error) { return meshmpi.ReduceScatterInit(c, sb, rb, counts, o) })
}

func (tk[T]) scan(c *meshmpi.Comm, s, r uintptr, n int, o *meshmpi.Op, exclusive bool, m mode) (*meshmpi.Request, error) {
	sb, rb := view[T](s, n), view[T](r, n)
	if exclusive {
		return run(m, func() error { return meshmpi.Exscan(c, sb, rb, o) },
			func() (*meshmpi.Request, error) { return meshmpi.Iexscan(c, sb, rb, o) },
			func() (*meshmpi.Request, error) { return meshmpi.ExscanInit(c, sb, rb, o) })
	}
	return run(m, func() error { return meshmpi.Scan(c, sb, rb, o) },
		func() (*meshmpi.Request, error) { return meshmpi.Iscan(c, sb, rb, o) },
		func() (*meshmpi.Request, error) { return meshmpi.ScanInit(c, sb, rb, o) })
}

func (tk[T]) reduceLocal(in, inout uintptr, n int, o *meshmpi.Op) error {
	return meshmpi.ReduceLocal(view[T](in, n), view[T](inout, n), o)
}
