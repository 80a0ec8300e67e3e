package meshmpi

// Alltoallw (MPI-4.1 §6.8): an all-to-all exchange in which every pair of
// ranks has its own count, byte displacement and datatype on each side.
//
// Datatypes stop at this layer. Each side of the call is resolved into one
// byte block per peer (typedSide): when every block of a side is a single
// run of the caller's buffer, the engine moves the bytes straight from and
// into that buffer; otherwise the side's blocks are packed into one pooled
// buffer before the run and the receive side is unpacked after it. What
// the engine then runs is the pairwise exchange of byte blocks that
// Alltoallv uses (coll/alltoallv_pairwise.go, Alltoallv of 1-byte
// elements), so the schedule, its tags and its in-place swaps are shared,
// and coll never learns about datatypes: its steps stay send, receive,
// reduce and copy over symbolic byte ranges, and plans stay keyed by shape.
// A pack step inside the plan would let a rank start sending to one peer
// before packing the others, at the price of a datatype-aware engine; for
// now the whole send side is packed at Start (a persistent request packs
// into buffers it holds for its life, so Start+Wait allocates nothing).

import (
	"fmt"

	"github.com/meshmpi/meshmpi/coll"
	"github.com/meshmpi/meshmpi/op"
	"github.com/meshmpi/meshmpi/peer"
)

// typedSide is one side of a collective with a datatype per peer, resolved
// into byte blocks of the buffer the engine uses: the caller's buffer when
// every block is one run of it (direct), else a packed buffer of the
// blocks one after another. NeighborAlltoallw and the intercommunicator
// Alltoallw resolve their sides the same way.
type typedSide struct {
	buf    []byte
	blocks []typedBuf
	offs   []int // per peer: the block's offset in the engine's buffer
	lens   []int // and its bytes
	direct bool
	packed int     // bytes of the packed buffer (not direct)
	pb     *[]byte // the packed buffer, while held
}

// resolve checks and resolves n blocks: counts[r] elements of types[r] at
// byte displacement displs[r] of buf.
func (s *typedSide) resolve(what string, buf []byte, counts, displs []int, types []*Datatype, n int) error {
	if len(counts) != n || len(displs) != n || len(types) != n {
		return fmt.Errorf("%d %s counts, %d displacements and %d types for %d ranks: %w", len(counts), what, len(displs), len(types), n, ErrCount)
	}
	*s = typedSide{buf: buf, blocks: make([]typedBuf, n), offs: make([]int, n), lens: make([]int, n), direct: true}
	for r := range n {
		b := &s.blocks[r]
		if err := b.check(buf, displs[r], counts[r], types[r]); err != nil {
			return fmt.Errorf("%s block of rank %d: %w", what, r, err)
		}
		s.lens[r] = b.bytes
		if b.bytes > 0 && !b.contig {
			s.direct = false
		}
	}
	for r := range n {
		if s.direct {
			s.offs[r] = s.blocks[r].off
			if s.lens[r] == 0 {
				s.offs[r] = 0
			}
		} else {
			s.offs[r] = s.packed
			s.packed += s.lens[r]
		}
	}
	return nil
}

// span returns the bytes of the caller's buffer from the first the
// side's blocks touch to the last (nil if they touch none).
func (s *typedSide) span() []byte {
	lo, hi := len(s.buf), 0
	for i := range s.blocks {
		b := &s.blocks[i]
		if b.bytes == 0 {
			continue
		}
		l, h := b.lay.Span(b.count)
		lo, hi = min(lo, b.origin+l), max(hi, b.origin+h)
	}
	if hi <= lo {
		return nil
	}
	return s.buf[lo:hi]
}

// aliased reports whether the bytes a typed call sends and those it
// receives overlap (MPI-4.1 §2.3): packed sides hide that from the check
// on the engine's buffers (Comm.collective).
func (w *alltoallwRequest) aliased() bool { return overlap(w.send.span(), w.recv.span()) }

// engineBuf returns the buffer the engine reads or writes, taking a packed
// buffer from the pool if the side needs one and holds none.
func (s *typedSide) engineBuf() []byte {
	if s.direct {
		return s.buf
	}
	if s.pb == nil {
		s.pb = getPack(s.packed)
	}
	return (*s.pb)[:s.packed:s.packed]
}

// pack packs every block into the packed buffer (no-op when direct).
func (s *typedSide) pack() {
	if s.direct {
		return
	}
	p := s.engineBuf()
	for r := range s.blocks {
		s.blocks[r].pack(p[s.offs[r] : s.offs[r]+s.lens[r]])
	}
}

// unpack writes the packed buffer's blocks into the caller's buffer.
func (s *typedSide) unpack() {
	if s.direct || s.pb == nil {
		return
	}
	p := (*s.pb)[:s.packed]
	for r := range s.blocks {
		s.blocks[r].unpack(p[s.offs[r] : s.offs[r]+s.lens[r]])
	}
}

// put gives the packed buffer back to the pool.
func (s *typedSide) put() {
	putPack(s.pb)
	s.pb = nil
}

// alltoallwRequest drives a collective over resolved typed sides: it packs
// before the engine's run starts and unpacks after it completes.
type alltoallwRequest struct {
	coll       *collRequest
	send, recv typedSide
	inPlace    bool
}

// stage packs the data to send: the send side, or in place the receive
// side, which holds it.
func (w *alltoallwRequest) stage() {
	if w.inPlace {
		w.recv.pack()
	} else {
		w.send.pack()
	}
}

func (w *alltoallwRequest) put() {
	w.send.put()
	w.recv.put()
}

func (w *alltoallwRequest) start() error {
	w.stage()
	return w.coll.start()
}

func (w *alltoallwRequest) result(keep bool) (Status, error) {
	st, err := w.coll.result(keep)
	if err == nil {
		w.recv.unpack()
	}
	if !keep {
		w.put()
	}
	return st, err
}

func (w *alltoallwRequest) finished() bool           { return w.coll.finished() }
func (w *alltoallwRequest) done() <-chan struct{}    { return w.coll.done() }
func (w *alltoallwRequest) endpoint() *peer.Endpoint { return w.coll.endpoint() }
func (w *alltoallwRequest) cancel() error            { return w.coll.cancel() }
func (w *alltoallwRequest) detach() error            { return w.coll.detach() }

func (w *alltoallwRequest) release() {
	w.coll.release()
	w.put()
}

// prepare checks the call and translates it into an Alltoallv of bytes
// over the engine's buffers (taken now, packed by stage).
func (w *alltoallwRequest) prepare(c *Comm, send []byte, sendcounts, senddispls []int, sendtypes []*Datatype,
	recv []byte, recvcounts, recvdispls []int, recvtypes []*Datatype) collCall {
	const k = coll.Alltoallv
	fail := func(err error) collCall { return collCall{err: fmt.Errorf("alltoallw on %s: %w", c, err)} }
	if err := c.check(); err != nil {
		return fail(err)
	}
	n := c.Size()
	a := coll.Args{Coll: k, ElemSize: 1, Type: op.Uint8, InPlace: isInPlace(send)}
	if c.TestInter() { // one block per rank of the remote group; no in place (MPI-4.1 §6.8)
		if a.InPlace {
			return fail(fmt.Errorf("in place on an intercommunicator: %w", ErrArg))
		}
		n = c.RemoteSize()
	}
	w.inPlace = a.InPlace
	if err := w.recv.resolve("receive", recv, recvcounts, recvdispls, recvtypes, n); err != nil {
		return fail(err)
	}
	a.Counts, a.Displs = w.recv.lens, w.recv.offs
	if a.InPlace {
		a.SendCounts, a.SendDispls = a.Counts, a.Displs
		return collCall{a: a, recv: w.recv.engineBuf()}
	}
	if err := w.send.resolve("send", send, sendcounts, senddispls, sendtypes, n); err != nil {
		return fail(err)
	}
	a.SendCounts, a.SendDispls = w.send.lens, w.send.offs
	if w.aliased() {
		return fail(fmt.Errorf("send and receive buffers overlap (use InPlace): %w", ErrBuffer))
	}
	return collCall{a: a, send: w.send.engineBuf(), recv: w.recv.engineBuf()}
}

func alltoallw(c *Comm, form collForm, send []byte, sendcounts, senddispls []int, sendtypes []*Datatype,
	recv []byte, recvcounts, recvdispls []int, recvtypes []*Datatype, hs []Hint) (*Request, error) {
	w := &alltoallwRequest{}
	call := w.prepare(c, send, sendcounts, senddispls, sendtypes, recv, recvcounts, recvdispls, recvtypes)
	return w.run(c, form, call, hs)
}

// Alltoallw sends to each rank r sendcounts[r] elements of sendtypes[r]
// starting at byte displacement senddispls[r] of send, and receives rank
// r's data as recvcounts[r] elements of recvtypes[r] at byte displacement
// recvdispls[r] of recv (MPI_Alltoallw). The type signatures of each pair
// must match, as in MPI; the datatypes may differ. send may be InPlace
// (InPlace[byte]()): the send arguments are then ignored and the data for
// rank r is taken from recv as laid out by recvcounts[r], recvdispls[r]
// and recvtypes[r], then replaced by rank r's data. On an
// intercommunicator r ranges over the remote group, and in place is an
// error.
func Alltoallw(c *Comm, send []byte, sendcounts, senddispls []int, sendtypes []*Datatype,
	recv []byte, recvcounts, recvdispls []int, recvtypes []*Datatype, hs ...Hint) error {
	_, err := alltoallw(c, blocking, send, sendcounts, senddispls, sendtypes, recv, recvcounts, recvdispls, recvtypes, hs)
	return err
}

// Ialltoallw starts Alltoallw and returns its request (MPI_Ialltoallw).
// recv holds the result once Wait or Test reports the request complete.
func Ialltoallw(c *Comm, send []byte, sendcounts, senddispls []int, sendtypes []*Datatype,
	recv []byte, recvcounts, recvdispls []int, recvtypes []*Datatype, hs ...Hint) (*Request, error) {
	return alltoallw(c, nonblocking, send, sendcounts, senddispls, sendtypes, recv, recvcounts, recvdispls, recvtypes, hs)
}

// AlltoallwInit creates a persistent Alltoallw, planned once, run by each
// Start (MPI_Alltoallw_init). Non-contiguous sides keep their packed
// buffers for the request's life.
func AlltoallwInit(c *Comm, send []byte, sendcounts, senddispls []int, sendtypes []*Datatype,
	recv []byte, recvcounts, recvdispls []int, recvtypes []*Datatype, hs ...Hint) (*Request, error) {
	return alltoallw(c, persistent, send, sendcounts, senddispls, sendtypes, recv, recvcounts, recvdispls, recvtypes, hs)
}
