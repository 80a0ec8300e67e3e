package meshmpi

import (
	"cmp"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/meshmpi/meshmpi/coll"
	"github.com/meshmpi/meshmpi/peer"
)

// idupSig marks the tags of Idup's exchanges: never the engine's
// internal allgather's (internalSig), whose masked receives would take
// them, and its sequence number is one the engine never uses, since Idup
// took it.
const idupSig = internalSig - 1

// idupMark tells an Idup's nonce from a Dup's made with the same
// sequence number and context id.
const idupMark = 0x1d0b

// Idup starts duplicating c (MPI_Comm_idup): the returned request
// completes when the new communicator, with c's group and topology and
// new contexts, is made, and then stores it in *newcomm; *newcomm must
// not be read before. Collective over c, and ordered as a nonblocking
// collective: it takes c's collective sequence number at the call, so
// other collectives may be started on c before it completes, and several
// Idups of c may be in flight at once. A member that fails makes the
// request complete with an error (ErrProcFailed) instead of never. The
// request cannot be cancelled or freed while active (ErrRequest), as a
// collective's.
//
// An intercommunicator's duplicate keeps its remote group.
func (c *Comm) Idup(newcomm **Comm) (*Request, error) {
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("idup: %w", err)
	}
	if newcomm == nil {
		return nil, fmt.Errorf("idup on %s: newcomm is nil: %w", c, ErrArg)
	}
	q := &idupRequest{c: c, seq: c.seq.Add(1) - 1, out: newcomm, ch: make(chan struct{})}
	c.hold() // the parent's context stays reserved until the copy is made
	q.prev = idups.enter(c, q.ch)
	go q.run()
	r := &Request{wait: c.p.wait, impl: q, state: Active}
	return r, nil
}

// idupChains orders the Idups of one communicator on a rank: each waits
// for the one started before it, so every rank runs them in the same
// order and their context-id agreements (which lend one mask per rank at
// a time) never contend with each other.
type idupChains struct {
	mu   sync.Mutex
	last map[*Comm]chan struct{} // the done channel of the newest Idup of each
}

var idups = idupChains{last: map[*Comm]chan struct{}{}}

// enter records done as c's newest Idup and returns the one before it,
// or nil.
func (ch *idupChains) enter(c *Comm, done chan struct{}) chan struct{} {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	prev := ch.last[c]
	ch.last[c] = done
	return prev
}

// leave forgets c's chain if done is still its newest Idup.
func (ch *idupChains) leave(c *Comm, done chan struct{}) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.last[c] == done {
		delete(ch.last, c)
	}
}

// idupRequest is the operation of an Idup's request: a goroutine makes
// the communicator and closes ch.
type idupRequest struct {
	c    *Comm
	seq  uint32 // c's collective sequence number, taken at the call
	out  **Comm
	prev chan struct{} // the Idup of c started before, or nil
	ch   chan struct{}
	n    *Comm // the new communicator, set before ch closes
	err  error
}

func (q *idupRequest) run() {
	defer close(q.ch)
	defer idups.leave(q.c, q.ch)
	defer q.c.drop()
	if q.prev != nil {
		<-q.prev
	}
	round := q.round
	if q.c.inter != nil {
		tag := int(int32(coll.Tag(q.seq, idupSig)))
		round = func(rec []byte) ([][]byte, [][]byte, error) { return q.c.interAllgatherOn(tag, rec) }
	}
	id, lent, err := q.agree(round)
	if err != nil {
		q.err = fmt.Errorf("idup on %s: %w", q.c, err)
		return
	}
	n := newInterCommOf(q.c.p, id, q.c.ranks, mixNonce(q.c.nonce, uint64(q.seq), uint64(id), idupMark), q.c.inter)
	n.topo = q.c.topo // a duplicate keeps the topology (MPI-4.1 §7.4.2)
	reserve(q.c, id, lent)
	q.n = n
}

// round is an agreement round of Idup: every rank's record gathered at
// rank 0 and sent back to all, on the exact tag of Idup's sequence
// number in c's collective context. Rounds repeat on the one tag, which
// point-to-point order keeps apart.
func (q *idupRequest) round(rec []byte) (mine, theirs [][]byte, err error) {
	c := q.c
	if err := c.collectiveErr(); err != nil {
		return nil, nil, err
	}
	tag := int(int32(coll.Tag(q.seq, idupSig)))
	n, size := len(rec), len(c.ranks)
	xfer := func(kind p2pKind, rank int, b []byte) error {
		r := p2pRequest{c: c, kind: kind, rank: rank, world: c.ranks[rank], tag: tag, ctx: c.collContext(), buf: b, elem: 1}
		st, err := r.run()
		var tm *peer.TagMismatchError
		switch {
		case errors.As(err, &tm):
			err = fmt.Errorf("rank %d: %w", rank, ErrArg)
		case err == nil && st.Bytes != len(b):
			err = fmt.Errorf("rank %d sent %d bytes, want %d: %w", rank, st.Bytes, len(b), ErrCount)
		}
		return err
	}
	all := make([]byte, n*size)
	if c.rank != 0 {
		if err := xfer(p2pSend, 0, rec); err != nil {
			return nil, nil, err
		}
		if err := xfer(p2pRecv, 0, all); err != nil {
			return nil, nil, err
		}
		return splitRecs(all, n), nil, nil
	}
	copy(all, rec)
	for r := 1; r < size; r++ {
		if err := xfer(p2pRecv, r, all[r*n:(r+1)*n]); err != nil {
			return nil, nil, err
		}
	}
	for r := 1; r < size; r++ {
		if err := xfer(p2pSend, r, all); err != nil {
			return nil, nil, err
		}
	}
	return splitRecs(all, n), nil, nil
}

// idupWaiting lists, per process, the Idups whose context-id agreement
// is in progress, by (parent id, sequence number).
var idupWaiting = struct {
	sync.Mutex
	m map[*proc][][2]uint64
}{m: map[*proc][][2]uint64{}}

func (q *idupRequest) key() [2]uint64 { return [2]uint64{uint64(q.c.id), uint64(q.seq)} }

// agree is agreeContext for an Idup, whose rounds run beside the
// caller's own constructions on the same parent (agreeContext's turns go
// by parent id only, so two of one parent would take the rank's mask by
// chance, rank by rank, and could fail round after round): an Idup lends
// the rank's mask only when no blocking construction waits for it and
// it is the lowest waiting Idup by parent id and sequence number, an
// order every rank shares. A blocking construction, collective over its
// parent, thus wins at every member within a round, and among Idups the
// lowest waiting anywhere wins at all its members.
func (q *idupRequest) agree(xchg agreeRound) (int, bool, error) {
	p, me := q.c.p, q.key()
	idupWaiting.Lock()
	idupWaiting.m[p] = append(idupWaiting.m[p], me)
	idupWaiting.Unlock()
	defer func() {
		idupWaiting.Lock()
		w := idupWaiting.m[p]
		w = slices.Delete(w, slices.Index(w, me), slices.Index(w, me)+1)
		if len(w) == 0 {
			delete(idupWaiting.m, p)
		} else {
			idupWaiting.m[p] = w
		}
		idupWaiting.Unlock()
	}()
	out := make([]byte, agreeMaskLen)
	for {
		p.mu.Lock()
		idupWaiting.Lock()
		first := slices.MinFunc(idupWaiting.m[p], func(a, b [2]uint64) int {
			return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
		}) == me
		idupWaiting.Unlock()
		lent := !p.maskLent && len(p.waiting) == 0 && first
		p.maskLent = p.maskLent || lent
		p.putMask(out, lent)
		p.mu.Unlock()
		mine, theirs, err := xchg(out)
		if err != nil {
			q.c.returnMask(lent)
			return 0, false, err
		}
		used, allLent := orMasks(mine, theirs)
		if id := used.lowestFree(); id >= 0 {
			return id, lent, nil
		}
		q.c.returnMask(lent)
		if allLent {
			return 0, false, fmt.Errorf("no context id is free on every rank (%d in use): %w", ctxWords*64, ErrComm)
		}
		if !lent {
			// not this rank's turn: let the construction whose it is run
			runtime.Gosched()
		}
	}
}

func (q *idupRequest) start() error { return nil }

func (q *idupRequest) finished() bool {
	select {
	case <-q.ch:
		return true
	default:
		return false
	}
}

func (q *idupRequest) done() <-chan struct{} { return q.ch }

func (q *idupRequest) result(bool) (Status, error) {
	if q.err != nil {
		return Status{Source: Undefined, Tag: Undefined, Err: q.err}, q.err
	}
	*q.out = q.n
	return Status{Source: AnySource, Tag: AnyTag}, nil
}

func (q *idupRequest) cancel() error {
	return fmt.Errorf("cancel: a communicator duplication cannot be cancelled: %w", ErrRequest)
}

func (q *idupRequest) detach() error {
	return fmt.Errorf("free: an active communicator duplication cannot be freed: %w", ErrRequest)
}

func (q *idupRequest) release() {}

// endpoint is nil: the request is not driven by waiting on the
// endpoint, its goroutine makes progress by itself.
func (q *idupRequest) endpoint() *peer.Endpoint { return nil }
