package meshmpi

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sync/atomic"
)

// createGroupCalls numbers this process's CreateGroup calls: each member
// contributes its number to the new communicator's nonce, so two
// communicators made over one group with one tag (the first freed, its
// context id reused) are still told apart in fault-tolerance messages.
var createGroupCalls atomic.Uint64

// CreateGroup returns a communicator over g, a subgroup of c's group
// (MPI_Comm_create_group, MPI-4.1 §7.4.2). Unlike Create it is collective
// only over g's members: the other ranks of c do not call it. tag tells
// apart constructions that overlap on c (from several goroutines); every
// member must pass the same one. A caller outside g, and every caller of
// an empty g, gets nil. A member that fails makes the others return an
// error (ErrProcFailed) rather than wait for it.
//
// The members exchange their context masks in c's bridge context on
// exactly tag, gathered at g's first member and sent back from it: a
// member that passes another tag matches nothing, as a receive with the
// wrong tag would, which MPI leaves erroneous.
func (c *Comm) CreateGroup(g *Group, tag int) (*Comm, error) {
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("create group: %w", err)
	}
	if g == nil {
		return nil, fmt.Errorf("create group on %s: nil group: %w", c, ErrGroup)
	}
	if c.inter != nil {
		return nil, fmt.Errorf("create group on %s: intercommunicators: %w", c, ErrComm)
	}
	if tag < 0 || tag > TagUB {
		return nil, fmt.Errorf("create group on %s: tag %d: %w", c, tag, ErrTag)
	}
	members := make([]int, len(g.ranks)) // ranks of c, in g's order
	for i, w := range g.ranks {
		if w < 0 || w >= len(c.local) || c.local[w] < 0 {
			return nil, fmt.Errorf("create group on %s: world rank %d is not in the communicator: %w", c, w, ErrGroup)
		}
		members[i] = int(c.local[w])
	}
	me := slices.Index(members, c.rank)
	if me < 0 {
		return nil, nil
	}
	var rec [8]byte
	binary.LittleEndian.PutUint64(rec[:], createGroupCalls.Add(1))
	id, recs, _, lent, err := agreeContext(c, groupRound(c, members, me, tag), rec[:])
	if err != nil {
		return nil, fmt.Errorf("create group on %s with tag %d: %w", c, tag, err)
	}
	ranks := make([]int, len(members))
	nonce := []uint64{c.nonce, uint64(id), uint64(tag)}
	for i, r := range members {
		ranks[i] = c.ranks[r]
		nonce = append(nonce, binary.LittleEndian.Uint64(recs[i]))
	}
	n := newComm(c.p, id, ranks, mixNonce(nonce...))
	reserve(c, id, lent)
	return n, nil
}

// groupRound is an agreement round (agreeContext) among the members of a
// CreateGroup: every member's record to the first one, which sends all of
// them back, or its error, which every member then returns. members are
// ranks of c; me is the caller's index in them.
func groupRound(c *Comm, members []int, me, tag int) agreeRound {
	ctx := c.bridgeContext()
	xfer := func(kind p2pKind, m int, b []byte) (Status, error) {
		q := p2pRequest{c: c, kind: kind, rank: members[m], world: c.ranks[members[m]], tag: tag, ctx: ctx, buf: b, elem: 1}
		return q.run()
	}
	return func(rec []byte) (mine, theirs [][]byte, err error) {
		n, size := len(rec), len(members)
		// the first member's word: a status byte (0: the records follow;
		// else the error class + 1) and every member's record
		all := make([]byte, 1+n*size)
		if me != 0 {
			if _, err := xfer(p2pSend, 0, rec); err != nil {
				return nil, nil, err
			}
			st, err := xfer(p2pRecv, 0, all)
			switch {
			case err != nil:
				return nil, nil, err
			case st.Bytes < 1:
				return nil, nil, fmt.Errorf("empty message from the group's first member: %w", ErrArg)
			case all[0] != 0:
				return nil, nil, fmt.Errorf("the group's first member failed to gather the group: %w", errClasses[min(int(all[0])-1, len(errClasses)-1)])
			case st.Bytes != len(all):
				return nil, nil, fmt.Errorf("the group's first member sent %d bytes, want %d (do the members pass one group?): %w", st.Bytes, len(all), ErrArg)
			}
			return splitRecs(all[1:], n), nil, nil
		}
		copy(all[1:], rec)
		var bad error
		// every member's record is taken even after one failed, so none
		// stays behind to match a later construction with this tag
		for m := 1; m < size; m++ {
			st, err := xfer(p2pRecv, m, all[1+m*n:1+(m+1)*n])
			switch {
			case bad != nil:
			case err != nil:
				bad = fmt.Errorf("member %d: %w", m, err)
			case st.Bytes != n:
				bad = fmt.Errorf("member %d sent %d bytes, want %d: %w", m, st.Bytes, n, ErrArg)
			}
		}
		if bad != nil {
			// the others wait for this word: tell them, so none hangs on
			// a member that failed (its own send fails, which is fine)
			word := []byte{byte(errClass(bad) + 1)}
			for m := 1; m < size; m++ {
				_, _ = xfer(p2pSend, m, word)
			}
			return nil, nil, bad
		}
		var first error
		for m := 1; m < size; m++ {
			if _, err := xfer(p2pSend, m, all); err != nil && first == nil {
				first = fmt.Errorf("member %d: %w", m, err)
			}
		}
		if first != nil {
			return nil, nil, first
		}
		return splitRecs(all[1:], n), nil, nil
	}
}
