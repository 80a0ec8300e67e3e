package meshmpi

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/meshmpi/meshmpi/agree"
	"github.com/meshmpi/meshmpi/peer"
)

// Special ranks, tags and values (MPI_ANY_SOURCE, MPI_PROC_NULL,
// MPI_ANY_TAG, MPI_UNDEFINED, MPI_TAG_UB).
const (
	// AnySource matches a message from any rank.
	AnySource = peer.AnySource
	// ProcNull is a rank that does not exist: operations on it complete at
	// once and move nothing.
	ProcNull = -2
	// AnyTag matches a message with any tag.
	AnyTag = peer.AnyTag
	// Undefined is the color for Split that leaves a rank out, and the
	// value returned where a rank or index does not exist.
	Undefined = -32766
	// TagUB is the largest valid tag.
	TagUB = 1<<31 - 1
)

// Context ids. Each communicator owns an id c and, on the wire, separate
// matching contexts for point-to-point and collectives (p2pContext), so
// user messages never match collective traffic. Ids are agreed collectively
// (the lowest id no member uses), so every member of a communicator holds
// the same one.
const (
	worldContext = 0
	selfContext  = 1  // Comm.Self's, reserved on every process
	ctxWords     = 64 // 4096 ids
)

type ctxMask [ctxWords]uint64

func (m *ctxMask) set(id int)   { m[id/64] |= 1 << (id % 64) }
func (m *ctxMask) clear(id int) { m[id/64] &^= 1 << (id % 64) }

// lowestFree returns the lowest id not set, or -1.
func (m *ctxMask) lowestFree() int {
	for i, w := range m {
		if w != ^uint64(0) {
			return i*64 + bits.TrailingZeros64(^w)
		}
	}
	return -1
}

// Comm is a communicator (MPI_Comm): a group of ranks and the contexts their
// messages travel in. A Comm belongs to one rank; methods and functions that
// take it are collective where MPI says so. A Comm may be used from several
// goroutines for point-to-point; collective calls on one Comm must be made
// in the same order on every rank, from one goroutine at a time.
type Comm struct {
	p     *proc
	id    int
	rank  int
	ranks []int   // world rank of each rank
	local []int32 // rank of each world rank, or -1
	name  string
	topo  *topology     // process topology (topo.go), nil for none; immutable
	inter *interComm    // an intercommunicator's remote group (intercomm.go); nil for an intracommunicator
	seq   atomic.Uint32 // collective sequence: the tag of the next collective
	freed atomic.Bool
	refs  atomic.Int32 // 1 until freed, plus one per pending operation

	planMu sync.Mutex
	plans  map[commPlanKey]*planEntry // plans of the shapes called so far
	// lastPlan is the entry the last call used: a loop calling one
	// collective finds it without a lock or a hash.
	lastPlan atomic.Pointer[planEntry]

	activeMu sync.Mutex
	active   []activeRun  // collectives running on this rank
	aborted  []uint32     // sequence numbers reported mismatched before they started here
	control  [4]byte      // the pending control notice
	late     lateMismatch // mismatches reported after they completed here (collcontrol.go)

	commTrails // collectives that completed before their tokens came (colltrail.go)

	commFT // failures, revocation, agreement (ft.go)
}

// newComm makes a communicator over ranks (world ranks, in rank order)
// with context id; nonce names it in fault-tolerance messages, the same
// on every member (mixNonce).
func newComm(p *proc, id int, ranks []int, nonce uint64) *Comm {
	return newInterCommOf(p, id, ranks, nonce, nil)
}

// newInterCommOf is newComm for an intercommunicator whose remote side is
// inter (nil: an intracommunicator): set before the communicator is
// registered for failure notices, which read it.
func newInterCommOf(p *proc, id int, ranks []int, nonce uint64, inter *interComm) *Comm {
	c := &Comm{p: p, id: id, ranks: ranks, local: make([]int32, p.ep.Size()), rank: Undefined, inter: inter}
	c.revokedC = make(chan struct{})
	c.nonce = nonce
	c.refs.Store(1)
	for i := range c.local {
		c.local[i] = -1
	}
	for r, w := range ranks {
		c.local[w] = int32(r)
		if w == p.ep.Rank() {
			c.rank = r
		}
	}
	// each listener holds a reference until its receive is cancelled,
	// so the context is not reused while one may still be posted
	c.refs.Add(2)
	c.listen()
	c.agree = agree.New(len(ranks), max(c.rank, 0), nonce, (*agreeTransport)(c))
	c.buf = make([]byte, 1+max(9, agree.MaxMessage(len(ranks), shrinkVec(len(ranks)))))
	p.register(c)
	c.listenFT()
	return c
}

// Rank returns the calling rank's rank in c (MPI_Comm_rank).
func (c *Comm) Rank() int {
	if c == nil {
		return Undefined
	}
	return c.rank
}

// Size returns the number of ranks in c (MPI_Comm_size).
func (c *Comm) Size() int {
	if c == nil {
		return 0
	}
	return len(c.ranks)
}

// String names the communicator for errors and logs.
func (c *Comm) String() string {
	if c == nil {
		return "comm(nil)"
	}
	if c.name != "" {
		return fmt.Sprintf("comm %s (rank %d of %d)", c.name, c.rank, len(c.ranks))
	}
	return fmt.Sprintf("comm %d (rank %d of %d)", c.id, c.rank, len(c.ranks))
}

// Each context id c gives its own matching contexts (ctxPerID of them,
// 8c to 8c+7): point-to-point, collectives, the communicator's control
// notices (a collective's ranks disagree; see abortSeq), the leaders'
// exchange of IntercommCreate on a peer communicator (bridgeContext) and
// fault tolerance (revocation and agreement, ft.go), which a revocation
// leaves working. Each is matched apart, so none takes another's message.
const ctxShift = 3

func (c *Comm) p2pContext() uint32     { return uint32(c.id) << ctxShift }
func (c *Comm) collContext() uint32    { return uint32(c.id)<<ctxShift | 1 }
func (c *Comm) controlContext() uint32 { return uint32(c.id)<<ctxShift | 2 }
func (c *Comm) bridgeContext() uint32  { return uint32(c.id)<<ctxShift | 3 }
func (c *Comm) ftContext() uint32      { return uint32(c.id)<<ctxShift | 4 }

func (c *Comm) check() error {
	if c == nil {
		return fmt.Errorf("nil communicator: %w", ErrComm)
	}
	if c.freed.Load() {
		return fmt.Errorf("%s was freed: %w", c, ErrComm)
	}
	if c.p.finalized.Load() {
		if cause := c.p.endCause.Load(); cause != nil {
			return fmt.Errorf("%s: %w", c, *cause)
		}
		return fmt.Errorf("%s: rank finalized: %w", c, ErrComm)
	}
	return nil
}

// Group returns the group of c (MPI_Comm_group).
func (c *Comm) Group() (*Group, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	return &Group{ranks: c.ranks, self: c.p.ep.Rank()}, nil
}

// Dup returns a new communicator with the same group and new contexts
// (MPI_Comm_dup). Collective over c.
func (c *Comm) Dup() (*Comm, error) {
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("dup: %w", err)
	}
	if c.inter != nil {
		return c.interDup()
	}
	n, err := c.create(nil, func([][]byte) []int { return identityRanks(len(c.ranks)) })
	if err != nil {
		return nil, fmt.Errorf("dup on %s: %w", c, err)
	}
	n.topo = c.topo // a duplicate keeps the topology (MPI-4.1 §7.4.2)
	return n, nil
}

// Split partitions c by color (MPI_Comm_split): ranks that pass the same
// color form a new communicator, ordered by key and then by their rank in
// c. A rank passing Undefined takes part but gets nil. Collective over c.
func (c *Comm) Split(color, key int) (*Comm, error) {
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("split: %w", err)
	}
	if color < 0 && color != Undefined {
		return nil, fmt.Errorf("split on %s: color %d: %w", c, color, ErrArg)
	}
	if c.inter != nil {
		return c.interSplit(color, key)
	}
	var rec [16]byte
	binary.LittleEndian.PutUint64(rec[:], uint64(int64(color)))
	binary.LittleEndian.PutUint64(rec[8:], uint64(int64(key)))
	n, err := c.create(rec[:], func(recs [][]byte) []int {
		if color == Undefined {
			return nil
		}
		type member struct{ key, rank int }
		var mine []member
		for r, b := range recs {
			if int(int64(binary.LittleEndian.Uint64(b))) == color {
				mine = append(mine, member{int(int64(binary.LittleEndian.Uint64(b[8:]))), r})
			}
		}
		slices.SortStableFunc(mine, func(a, b member) int { return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.rank, b.rank)) })
		ranks := make([]int, len(mine))
		for i, m := range mine {
			ranks[i] = m.rank
		}
		return ranks
	})
	if err != nil {
		return nil, fmt.Errorf("split on %s: %w", c, err)
	}
	return n, nil
}

// Create returns a communicator over g, a subgroup of c's group
// (MPI_Comm_create). Every rank of c calls it with the same group; ranks
// outside g get nil.
func (c *Comm) Create(g *Group) (*Comm, error) {
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("create: %w", err)
	}
	if g == nil {
		return nil, fmt.Errorf("create on %s: nil group: %w", c, ErrGroup)
	}
	if c.inter != nil {
		return nil, fmt.Errorf("create on %s: intercommunicators: %w", c, ErrNotSupported)
	}
	for _, w := range g.ranks {
		if c.local[w] < 0 {
			return nil, fmt.Errorf("create on %s: world rank %d is not in the communicator: %w", c, w, ErrGroup)
		}
	}
	n, err := c.create(nil, func([][]byte) []int {
		if !slices.Contains(g.ranks, c.p.ep.Rank()) {
			return nil
		}
		ranks := make([]int, len(g.ranks))
		for i, w := range g.ranks {
			ranks[i] = int(c.local[w])
		}
		return ranks
	})
	if err != nil {
		return nil, fmt.Errorf("create on %s: %w", c, err)
	}
	return n, nil
}

// create is the collective core of Dup, Split and Create. Every rank of c
// contributes rec, and all agree on a context id (agreeContext) that
// members of the new communicator can use (ranks of different Split
// colors may share it: their groups are disjoint). members turns
// everyone's records into the caller's new group, as ranks of c in order;
// nil means the caller is not a member.
func (c *Comm) create(rec []byte, members func(recs [][]byte) []int) (*Comm, error) {
	allgather := func(rec []byte) ([][]byte, [][]byte, error) {
		all, err := c.allgather(rec)
		if err != nil {
			return nil, nil, err
		}
		return splitRecs(all, len(rec)), nil, nil
	}
	id, recs, _, lent, err := agreeContext(c, allgather, rec)
	if err != nil {
		return nil, err
	}
	group := members(recs)
	if len(group) == 0 {
		c.returnMask(lent)
		return nil, nil
	}
	ranks := make([]int, len(group))
	for i, r := range group {
		ranks[i] = c.ranks[r]
	}
	n := newComm(c.p, id, ranks, c.childNonce(id))
	reserve(c, id, lent)
	return n, nil
}

// agreeMaskLen is the part of a rank's record in every agreeContext
// round that is its mask of used context ids: a "real mask" flag, then
// the mask.
const agreeMaskLen = 1 + ctxWords*8

// agreeRound is one round of a communicator construction: it takes the
// calling rank's record and returns every record of its own group and,
// for an intercommunicator, of the other, in rank order. All records have
// one length.
type agreeRound func(rec []byte) (mine, theirs [][]byte, err error)

// agreeContext finds the lowest context id free on every rank taking part
// in c's construction, with rounds of xchg carrying each rank's mask of
// used ids and rec. It returns the id, the records (without the masks)
// and whether this rank lent its mask, which the caller gives back
// through reserve once it has reserved the id, or returnMask.
//
// Constructions on different communicators may run at once on one rank
// (from several goroutines), so the rank's mask of used ids is lent to one
// construction at a time (MPICH's mask lock): the others contribute "all
// used", which makes their round fail on every rank alike, and try again.
// The waiting construction whose parent has the lowest id gets the mask
// next, so the oldest communicators make progress and no round repeats
// forever.
func agreeContext(c *Comm, xchg agreeRound, rec []byte) (int, [][]byte, [][]byte, bool, error) {
	const maskLen = agreeMaskLen
	p := c.p
	p.mu.Lock()
	p.waiting = append(p.waiting, c.id)
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.waiting = slices.Delete(p.waiting, slices.Index(p.waiting, c.id), slices.Index(p.waiting, c.id)+1)
		p.mu.Unlock()
	}()
	out := make([]byte, maskLen+len(rec))
	copy(out[maskLen:], rec)
	for {
		p.mu.Lock()
		lent := !p.maskLent && c.id == slices.Min(p.waiting)
		p.maskLent = p.maskLent || lent
		p.putMask(out, lent)
		p.mu.Unlock()
		mine, theirs, err := xchg(out)
		if err != nil {
			c.returnMask(lent)
			return 0, nil, nil, false, err
		}
		used, allLent := orMasks(mine, theirs)
		for _, recs := range [][][]byte{mine, theirs} {
			for i, b := range recs {
				recs[i] = b[maskLen:]
			}
		}
		// a borrowed-out mask reads "all used", so a free id means every
		// rank lent its real one
		if id := used.lowestFree(); id >= 0 {
			return id, mine, theirs, lent, nil
		}
		c.returnMask(lent)
		if allLent {
			return 0, nil, nil, false, fmt.Errorf("no context id is free on every rank (%d in use): %w", ctxWords*64, ErrComm)
		}
	}
}

// putMask writes this rank's part of a context-id agreement at the head
// of out: whether it lent its real mask, then the mask (all ones when it
// did not, so that only lent masks free an id). p.mu is held.
func (p *proc) putMask(out []byte, lent bool) {
	out[0] = 0
	if lent {
		out[0] = 1
	}
	for i, w := range p.ctxUsed {
		if !lent {
			w = ^uint64(0)
		}
		binary.LittleEndian.PutUint64(out[1+8*i:], w)
	}
}

// orMasks is the union of the masks at the head of every record of a
// context-id agreement, and whether every rank lent its real one.
func orMasks(groups ...[][]byte) (used ctxMask, allLent bool) {
	allLent = true
	for _, recs := range groups {
		for _, b := range recs {
			allLent = allLent && b[0] == 1
			for j := range used {
				used[j] |= binary.LittleEndian.Uint64(b[1+8*j:])
			}
		}
	}
	return used, allLent
}

// reserve marks id used on this rank (when it is a member of the new
// communicator) and gives back the lent mask.
func reserve(c *Comm, id int, lent bool) {
	c.p.mu.Lock()
	c.p.ctxUsed.set(id)
	c.p.mu.Unlock()
	c.returnMask(lent)
}

func (c *Comm) returnMask(lent bool) {
	if lent {
		c.p.mu.Lock()
		c.p.maskLent = false
		c.p.mu.Unlock()
	}
}

// hold and drop count the operations pending on c: a freed communicator's
// context id is released only when the last one is done (MPI-4.1 §7.4.3:
// pending operations complete normally), so a new communicator cannot
// capture their messages.
func (c *Comm) hold() { c.refs.Add(1) }

func (c *Comm) drop() {
	if c.refs.Add(-1) == 0 {
		c.p.unregister(c)
		if c.retired() {
			return // the id stays used here for good (see retired)
		}
		for _, w := range c.lostMembers() {
			// what the failed members sent and nobody took
			c.p.ep.DropFrom(w, uint32(c.id)<<ctxShift, 1<<ctxShift)
		}
		c.p.mu.Lock()
		c.p.ctxUsed.clear(c.id)
		c.p.mu.Unlock()
	}
}

// Free releases c (MPI_Comm_free). Operations on c afterwards fail with
// ErrComm; operations already pending complete normally, and c's context
// is reused only after they have. The world communicator cannot be freed.
func (c *Comm) Free() error {
	if err := c.check(); err != nil {
		return fmt.Errorf("free: %w", err)
	}
	if c.id == worldContext || c.id == selfContext {
		return fmt.Errorf("free %s: a predefined communicator cannot be freed: %w", c, ErrComm)
	}
	if c.freed.Swap(true) {
		return fmt.Errorf("free %s: already freed: %w", c, ErrComm)
	}
	c.p.ep.CancelTagged(c.controlContext(), 0, 0, errFreed) // stop listening for notices
	// the fault-tolerance listener stays until the agreement group lets
	// this rank go: a rank that took the decision of a coordinator that
	// failed mid-broadcast may be the only one that can tell the others
	c.agree.Leave(func() {
		c.ftDone.Store(true)
		c.p.ep.CancelTagged(c.ftContext(), 0, 0, errFreed)
	})
	// the trails that finish from now on sweep themselves (trailReaper)
	_ = c.sweepTrails(false)
	c.drop()
	return nil
}

// Comparison is the result of comparing communicators or groups.
type Comparison int

// Results of Compare (MPI_IDENT, MPI_CONGRUENT, MPI_SIMILAR, MPI_UNEQUAL).
const (
	Ident     Comparison = iota // the same communicator, or groups with the same members in the same order
	Congruent                   // same members in the same order, different contexts
	Similar                     // same members, different order
	Unequal                     // different members
)

func (r Comparison) String() string {
	switch r {
	case Ident:
		return "ident"
	case Congruent:
		return "congruent"
	case Similar:
		return "similar"
	case Unequal:
		return "unequal"
	}
	return fmt.Sprintf("Comparison(%d)", int(r))
}

// Compare compares two communicators of the same rank (MPI_Comm_compare).
func Compare(a, b *Comm) (Comparison, error) {
	if err := a.check(); err != nil {
		return Unequal, fmt.Errorf("compare: %w", err)
	}
	if err := b.check(); err != nil {
		return Unequal, fmt.Errorf("compare: %w", err)
	}
	if a == b {
		return Ident, nil
	}
	if a.inter != nil || b.inter != nil {
		return compareInter(a, b), nil
	}
	switch compareRanks(a.ranks, b.ranks) {
	case Ident:
		return Congruent, nil
	case Similar:
		return Similar, nil
	}
	return Unequal, nil
}
