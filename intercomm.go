package meshmpi

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/meshmpi/meshmpi/coll"
)

// Intercommunicators (MPI-4.1 §7.6): a communicator joining two disjoint
// groups. Rank, Size and Group describe the calling rank's own group (the
// local group); point-to-point ranks and the roots of collectives name
// ranks of the other one (the remote group). Both groups share one context
// id, agreed across both when the intercommunicator is made, so a message
// between the groups is matched like any other.

// Root is the root argument the root of a rooted intercommunicator
// collective passes (MPI_ROOT); the other ranks of its group pass ProcNull
// and the other group passes the root's rank in the remote group.
const Root = -3

// interComm is the remote side of an intercommunicator.
type interComm struct {
	ranks []int   // world rank of each remote rank
	local []int32 // remote rank of each world rank, or -1
}

func newInterComm(worldSize int, ranks []int) *interComm {
	ic := &interComm{ranks: ranks, local: make([]int32, worldSize)}
	for i := range ic.local {
		ic.local[i] = -1
	}
	for r, w := range ranks {
		ic.local[w] = int32(r)
	}
	return ic
}

// peerRanks returns the world rank of each rank that point-to-point
// operations on c address: c's group, or an intercommunicator's remote
// group.
func (c *Comm) peerRanks() []int {
	if c.inter != nil {
		return c.inter.ranks
	}
	return c.ranks
}

// peerRank returns the rank in peerRanks of a world rank (a message's
// source), or -1.
func (c *Comm) peerRank(world int) int {
	if c.inter != nil {
		return int(c.inter.local[world])
	}
	return int(c.local[world])
}

// TestInter reports whether c is an intercommunicator (MPI_Comm_test_inter).
func (c *Comm) TestInter() bool { return c != nil && c.inter != nil }

// RemoteSize returns the size of an intercommunicator's remote group, 0 for
// an intracommunicator (MPI_Comm_remote_size).
func (c *Comm) RemoteSize() int {
	if !c.TestInter() {
		return 0
	}
	return len(c.inter.ranks)
}

// RemoteGroup returns an intercommunicator's remote group
// (MPI_Comm_remote_group).
func (c *Comm) RemoteGroup() (*Group, error) {
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("remote group: %w", err)
	}
	if c.inter == nil {
		return nil, fmt.Errorf("remote group of %s: not an intercommunicator: %w", c, ErrComm)
	}
	return &Group{ranks: c.inter.ranks, self: c.p.ep.Rank()}, nil
}

// IntercommCreate makes an intercommunicator joining local's group with
// another, disjoint one (MPI_Intercomm_create). Every rank of both groups
// calls it; localLeader is a rank of local, and at the leaders peer is a
// communicator holding both leaders, remoteLeader the other leader's rank
// in peer and tag the tag both leaders pass (peer, remoteLeader and tag
// are not used at other ranks). The leaders compare their tags rather
// than match on them, so leaders that pass different tags get ErrArg
// instead of waiting forever; two IntercommCreate calls between the same
// leaders over the same peer communicator must therefore be made in the
// same order on both.
func IntercommCreate(local *Comm, localLeader int, peer *Comm, remoteLeader, tag int) (*Comm, error) {
	if err := local.check(); err != nil {
		return nil, fmt.Errorf("intercomm create: %w", err)
	}
	if local.inter != nil {
		return nil, fmt.Errorf("intercomm create: %s is an intercommunicator: %w", local, ErrComm)
	}
	if localLeader < 0 || localLeader >= len(local.ranks) {
		return nil, fmt.Errorf("intercomm create on %s: local leader %d: %w", local, localLeader, ErrRank)
	}
	var remote []int
	id, _, _, lent, err := agreeContext(local, leaderRound(local, localLeader, &remote, func(out []byte, failed error) ([]byte, error) {
		return bridge(local, peer, remoteLeader, tag, out, failed)
	}), nil)
	if err != nil {
		return nil, fmt.Errorf("intercomm create on %s: %w", local, err)
	}
	return newIntercomm(local, id, remote, lent), nil
}

// leaderWord tells local's ranks whether its leader's err is nil, and
// returns it at every rank: the error's class, and its text.
func leaderWord(local *Comm, leader int, err error) error {
	if len(local.ranks) == 1 {
		return err
	}
	var head [2]int64 // error class + 1 (0: none), bytes that follow
	var blob []byte
	if local.rank == leader && err != nil {
		blob = []byte(err.Error())
		head = [2]int64{int64(errClass(err)) + 1, int64(len(blob))}
	}
	if err := Bcast(local, head[:], leader); err != nil {
		return err
	}
	if head[0] == 0 {
		return nil
	}
	if local.rank != leader {
		blob = make([]byte, head[1])
	}
	if err := Bcast(local, blob, leader); err != nil {
		return err
	}
	if local.rank == leader {
		return err
	}
	return fmt.Errorf("the leader failed: %s: %w", blob, errClasses[min(head[0]-1, int64(len(errClasses)-1))])
}

// leaderRound is an agreement round (agreeContext) of an
// intercommunicator construction between local and another group: every
// rank's record to local's leader, which swaps its group and records with
// the other group's leader through cross (its input and result are group
// records, encodeGroup) and tells its group the other group and records,
// or its error, which every rank then returns. remote is set to the other
// group. A leader whose group's records did not come (a member failed)
// still crosses, with its error instead of its group (cross's failed):
// the other leader, alive and waiting for it, returns that error too.
func leaderRound(local *Comm, leader int, remote *[]int, cross func(out []byte, failed error) ([]byte, error)) agreeRound {
	return func(rec []byte) (mine, theirs [][]byte, err error) {
		all, err := local.allgather(rec)
		if err != nil {
			if local.rank == leader {
				_, _ = cross(encodeGroup(local.ranks, make([]byte, len(rec)*len(local.ranks))), err)
			}
			return nil, nil, err
		}
		// the leader's word to its group: the other group, or its error
		var head [2]int64 // error class + 1 (0: none), bytes that follow
		var blob []byte
		var bad error
		if local.rank == leader {
			if blob, bad = cross(encodeGroup(local.ranks, all), nil); bad != nil {
				blob = []byte(bad.Error())
				head[0] = int64(errClass(bad)) + 1
			}
			head[1] = int64(len(blob))
		}
		if err := Bcast(local, head[:], leader); err != nil {
			return nil, nil, err
		}
		if local.rank != leader {
			blob = make([]byte, head[1])
		}
		if err := Bcast(local, blob, leader); err != nil {
			return nil, nil, err
		}
		switch {
		case bad != nil:
			return nil, nil, bad
		case head[0] != 0:
			return nil, nil, fmt.Errorf("the leader failed: %s: %w", blob, errClasses[head[0]-1])
		}
		*remote, theirs, err = decodeGroup(blob, len(rec), local.p.ep.Size())
		if err != nil {
			return nil, nil, err
		}
		return splitRecs(all, len(rec)), theirs, nil
	}
}

// newIntercomm makes the intercommunicator of local's group and remote
// on context id, which agreeContext found (lent: local's rank lent its
// mask).
func newIntercomm(local *Comm, id int, remote []int, lent bool) *Comm {
	c := newInterCommOf(local.p, id, local.ranks, interNonce(id, local.ranks, remote), newInterComm(local.p.ep.Size(), remote))
	reserve(local, id, lent)
	return c
}

// encodeGroup is a group as a leader sends it: its size, its world ranks
// and its ranks' records of an agreement round.
func encodeGroup(ranks []int, recs []byte) []byte {
	out := binary.LittleEndian.AppendUint32(nil, uint32(len(ranks)))
	for _, w := range ranks {
		out = binary.LittleEndian.AppendUint32(out, uint32(w))
	}
	return append(out, recs...)
}

func decodeGroup(b []byte, recLen, worldSize int) ([]int, [][]byte, error) {
	if len(b) < 4 {
		return nil, nil, fmt.Errorf("short group record: %w", ErrArg)
	}
	n := int(binary.LittleEndian.Uint32(b))
	if n < 1 || n > worldSize || len(b) != 4+n*4+n*recLen {
		return nil, nil, fmt.Errorf("group record of %d bytes for %d ranks: %w", len(b), n, ErrArg)
	}
	ranks := make([]int, n)
	for i := range ranks {
		ranks[i] = int(binary.LittleEndian.Uint32(b[4+4*i:]))
		if ranks[i] >= worldSize {
			return nil, nil, fmt.Errorf("world rank %d in a group record: %w", ranks[i], ErrArg)
		}
	}
	return ranks, splitRecs(b[4+4*n:], recLen), nil
}

func splitRecs(b []byte, n int) [][]byte {
	if n == 0 {
		return make([][]byte, 0)
	}
	out := make([][]byte, 0, len(b)/n)
	for i := 0; i+n <= len(b); i += n {
		out = append(out, b[i:i+n])
	}
	return out
}

// bridge is the leaders' exchange of IntercommCreate: out to the other
// leader, and its message back, over peer's bridge context. A leader whose
// checks fail still tells the other one when it can reach it, so both fail.
// The groups must be disjoint; both leaders check.
func bridge(local, peer *Comm, remoteLeader, tag int, out []byte, failed error) ([]byte, error) {
	if err := peer.check(); err != nil {
		return nil, fmt.Errorf("peer: %w", err)
	}
	if remoteLeader < 0 || remoteLeader >= len(peer.peerRanks()) {
		return nil, fmt.Errorf("remote leader %d of %s: %w", remoteLeader, peer, ErrRank)
	}
	world, n := peer.peerRanks()[remoteLeader], len(local.ranks)
	recLen := (len(out) - 4 - 4*n) / n
	if local.local[world] >= 0 {
		return nil, fmt.Errorf("remote leader %d of %s is in the local group: %w", remoteLeader, peer, ErrRank)
	}
	fail := failed
	if tag < 0 || tag > TagUB {
		fail = fmt.Errorf("tag %d: %w", tag, ErrTag)
	}
	msg := append([]byte{byte(errClass(fail) + 1)}, out...)
	if fail == nil {
		msg[0] = 0
	}
	in := make([]byte, 1+4+local.p.ep.Size()*(4+recLen)) // at most a world's ranks and records
	st, err := exchange(peer, world, peer.bridgeContext(), min(max(tag, 0), TagUB), AnyTag, msg, in)
	switch {
	case fail != nil:
		return nil, fail
	case err != nil:
		return nil, err
	case st.Tag != tag:
		return nil, fmt.Errorf("the leaders passed tags %d and %d: %w", tag, st.Tag, ErrArg)
	case st.Bytes < 1:
		return nil, fmt.Errorf("empty message from the remote leader: %w", ErrArg)
	case in[0] != 0:
		return nil, fmt.Errorf("the remote leader cannot go on (its checks, or its group, failed): %w", errClasses[min(int(in[0])-1, len(errClasses)-1)])
	}
	return in[1:st.Bytes], disjoint(local, in[1:st.Bytes], recLen)
}

// disjoint checks that the group record b, of the other group of an
// intercommunicator construction, is well formed and shares no rank with
// local.
func disjoint(local *Comm, b []byte, recLen int) error {
	ranks, _, err := decodeGroup(b, recLen, local.p.ep.Size())
	if err != nil {
		return err
	}
	for _, w := range ranks {
		if local.local[w] >= 0 {
			return fmt.Errorf("world rank %d is in both groups: %w", w, ErrGroup)
		}
	}
	return nil
}

// errClasses are the classes an intercommunicator construction's leader
// reports to its group; the last one stands for any other.
var errClasses = []error{ErrRank, ErrTag, ErrGroup, ErrComm, ErrProcFailed, ErrPort, ErrArg}

// errClass returns the index of err's class in errClasses.
func errClass(err error) int {
	for i, c := range errClasses {
		if errors.Is(err, c) {
			return i
		}
	}
	return len(errClasses) - 1
}

// exchange sends out to a world rank and receives its message into in, in
// context ctx, without deadlocking against the same call there: the
// receive is posted first.
func exchange(c *Comm, world int, ctx uint32, sendTag, recvTag int, out, in []byte) (Status, error) {
	r := p2pRequest{c: c, kind: p2pRecv, rank: 0, world: world, tag: recvTag, ctx: ctx, buf: in, elem: 1}
	s := p2pRequest{c: c, kind: p2pSend, rank: 0, world: world, tag: sendTag, ctx: ctx, buf: out, elem: 1}
	if err := r.start(); err != nil {
		return Status{}, err
	}
	if err := r.failedInternal(); err != nil {
		return Status{}, err
	}
	_, serr := s.run()
	c.p.await(r.op, r.block())
	st, rerr := r.result(false)
	if serr != nil {
		return st, serr
	}
	return st, rerr
}

// interAllgather is an agreement round over an intercommunicator: every
// rank's record to its group's rank 0, the rank 0s swap their groups'
// records, and each sends both sets back to its group; in c's collective
// context under a fresh collective sequence number, as Comm.allgather.
func (c *Comm) interAllgather(rec []byte) (mine, theirs [][]byte, err error) {
	return c.interAllgatherOn(int(int32(coll.Tag(c.seq.Add(1)-1, internalSig))), rec)
}

// interAllgatherOn is interAllgather on a given tag: Idup's, whose
// sequence number was taken at its call.
func (c *Comm) interAllgatherOn(tag int, rec []byte) (mine, theirs [][]byte, err error) {
	n, nl, nr := len(rec), len(c.ranks), len(c.inter.ranks)
	xfer := func(kind p2pKind, world int, b []byte) error {
		q := p2pRequest{c: c, kind: kind, world: world, tag: tag, ctx: c.collContext(), buf: b, elem: 1}
		st, err := q.run()
		if err == nil && st.Bytes != len(b) {
			err = fmt.Errorf("world rank %d sent %d bytes, want %d: %w", world, st.Bytes, len(b), ErrCount)
		}
		return err
	}
	all := make([]byte, (nl+nr)*n)
	if c.rank != 0 {
		if err := xfer(p2pSend, c.ranks[0], rec); err != nil {
			return nil, nil, err
		}
		if err := xfer(p2pRecv, c.ranks[0], all); err != nil {
			return nil, nil, err
		}
		return splitRecs(all[:nl*n], n), splitRecs(all[nl*n:], n), nil
	}
	copy(all, rec)
	for r := 1; r < nl; r++ {
		if err := xfer(p2pRecv, c.ranks[r], all[r*n:(r+1)*n]); err != nil {
			return nil, nil, err
		}
	}
	st, err := exchange(c, c.inter.ranks[0], c.collContext(), tag, tag, all[:nl*n], all[nl*n:])
	if err == nil && st.Bytes != nr*n {
		err = fmt.Errorf("the remote group sent %d bytes, want %d: %w", st.Bytes, nr*n, ErrCount)
	}
	if err != nil {
		return nil, nil, err
	}
	for r := 1; r < nl; r++ {
		if err := xfer(p2pSend, c.ranks[r], all); err != nil {
			return nil, nil, err
		}
	}
	return splitRecs(all[:nl*n], n), splitRecs(all[nl*n:], n), nil
}

// interCreate is the collective core of Dup, Split and Merge on an
// intercommunicator: an agreement round carrying rec, then build turns
// both groups' records into the caller's new communicator (nil for none),
// given the agreed id.
func (c *Comm) interCreate(rec []byte, build func(id int, mine, theirs [][]byte) (*Comm, error)) (*Comm, error) {
	id, mine, theirs, lent, err := agreeContext(c, c.interAllgather, rec)
	if err != nil {
		return nil, err
	}
	n, err := build(id, mine, theirs)
	if n == nil || err != nil {
		c.returnMask(lent)
		return nil, err
	}
	reserve(c, id, lent)
	return n, nil
}

func (c *Comm) interDup() (*Comm, error) {
	n, err := c.interCreate(nil, func(id int, _, _ [][]byte) (*Comm, error) {
		return newInterCommOf(c.p, id, c.ranks, c.childNonce(id), c.inter), nil
	})
	if err != nil {
		return nil, fmt.Errorf("dup on %s: %w", c, err)
	}
	return n, nil
}

// interSplit splits an intercommunicator (MPI-4.1 §7.6.2): the ranks of
// each color form an intercommunicator of that color's ranks in both
// groups, each group ordered by key and then by old rank. A color with no
// rank in the other group gives nil (MPI_COMM_NULL), as does Undefined.
func (c *Comm) interSplit(color, key int) (*Comm, error) {
	var rec [16]byte
	binary.LittleEndian.PutUint64(rec[:], uint64(int64(color)))
	binary.LittleEndian.PutUint64(rec[8:], uint64(int64(key)))
	pick := func(recs [][]byte, ranks []int) []int {
		type member struct{ key, rank int }
		var ms []member
		for r, b := range recs {
			if int(int64(binary.LittleEndian.Uint64(b))) == color {
				ms = append(ms, member{int(int64(binary.LittleEndian.Uint64(b[8:]))), r})
			}
		}
		slices.SortStableFunc(ms, func(a, b member) int { return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.rank, b.rank)) })
		out := make([]int, len(ms))
		for i, m := range ms {
			out[i] = ranks[m.rank]
		}
		return out
	}
	n, err := c.interCreate(rec[:], func(id int, mine, theirs [][]byte) (*Comm, error) {
		if color == Undefined {
			return nil, nil
		}
		local, remote := pick(mine, c.ranks), pick(theirs, c.inter.ranks)
		if len(remote) == 0 {
			return nil, nil
		}
		return newInterCommOf(c.p, id, local, c.childNonce(id), newInterComm(c.p.ep.Size(), remote)), nil
	})
	if err != nil {
		return nil, fmt.Errorf("split on %s: %w", c, err)
	}
	return n, nil
}

// IntercommMerge makes an intracommunicator of both groups of an
// intercommunicator (MPI_Intercomm_merge). Every rank of a group passes the
// same high; the group passing false comes first. When both groups pass
// the same value, the group whose rank 0 has the lower world rank comes
// first.
func (c *Comm) IntercommMerge(high bool) (*Comm, error) {
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("intercomm merge: %w", err)
	}
	if c.inter == nil {
		return nil, fmt.Errorf("intercomm merge on %s: not an intercommunicator: %w", c, ErrComm)
	}
	rec := []byte{0}
	if high {
		rec[0] = 1
	}
	n, err := c.interCreate(rec, func(id int, mine, theirs [][]byte) (*Comm, error) {
		for _, recs := range [][][]byte{mine, theirs} {
			for _, b := range recs {
				if !bytes.Equal(b, recs[0]) {
					return nil, fmt.Errorf("the ranks of a group passed different high flags: %w", ErrArg)
				}
			}
		}
		first, second := c.ranks, c.inter.ranks
		if mine[0][0] > theirs[0][0] || mine[0][0] == theirs[0][0] && c.ranks[0] > c.inter.ranks[0] {
			first, second = second, first
		}
		return newComm(c.p, id, slices.Concat(first, second), c.childNonce(id)), nil
	})
	if err != nil {
		return nil, fmt.Errorf("intercomm merge on %s: %w", c, err)
	}
	return n, nil
}

// compareInter compares communicators of which at least one is an
// intercommunicator (MPI-4.1 §7.4.1): both groups must compare.
func compareInter(a, b *Comm) Comparison {
	if a.inter == nil || b.inter == nil {
		return Unequal
	}
	l, r := compareRanks(a.ranks, b.ranks), compareRanks(a.inter.ranks, b.inter.ranks)
	switch {
	case l == Ident && r == Ident:
		return Congruent
	case l != Unequal && r != Unequal:
		return Similar
	}
	return Unequal
}

// interNonce names a new intercommunicator alike in both groups, which
// derive it from different parents: from its context id and members.
// Unlike a derived nonce it does not tell it from an earlier
// intercommunicator of the same groups and id (see ft.go).
func interNonce(id int, local, remote []int) uint64 {
	a, b := local, remote
	if b[0] < a[0] {
		a, b = b, a
	}
	vs := []uint64{'i', uint64(id)}
	for _, w := range slices.Concat(a, []int{-1}, b) {
		vs = append(vs, uint64(w))
	}
	return mixNonce(vs...)
}
