package coll

// Agreement tokens of the rooted collectives.
//
// A message whose signature differs from its receiver's fails the
// receive (tag.go), but a rooted collective whose ranks pass different
// roots may send no message that reaches a rank of another root: each
// rank follows the tree of its own root, so with Reduce rooted at 0 on
// rank 0 and at 1 on rank 1, both wait for the other and neither sends;
// with Bcast both send and neither receives. So the ranks of a rooted
// collective also exchange zero-byte tokens under the collective's tag,
// which wait for nothing: they add a message or two per rank and no
// round, and a rank's own transfers go on while its tokens travel.
//
// On an intracommunicator every rank sends a token to the next rank of a
// ring and receives one from the previous:
//
//	rank r:  send token → (r+1) mod n      receive token ← (r-1) mod n
//
// The ring joins every rank, so if any two ranks disagree (on the root or
// any other argument of the signature), some rank receives a token from a
// rank that disagrees with it and fails with ErrMismatch; its transport
// then tells the others (Transport.Abandon).
//
// What the proof needs of an edge r → r+1 is only that r's first message
// to r+1 goes at once with r's signature and that r+1's first receive from
// r is posted at once, with r+1's: the receive then takes that message
// whatever either rank made of the call, and fails if the two disagree. So
// where the algorithm's own data has that shape (Algorithm.DataLeads: the
// root's first send to the rank after it, as in a binomial Bcast; or
// Algorithm.DataEnds: the first send of the rank before the root to the
// root, as in a binomial Reduce or Gather of 2, 3, 5 or 9 ranks, where that
// rank is a leaf and the root's child), the data opens the edge and
// its token is left out, on both sides by each rank's own arguments:
//
//	root:            send data → root+1 (no token)   receive token ← root-1
//	root+1:          send token → root+2             receive data ← root (no token)
//
// A rank that sees another root (or another count, so no data) keeps its
// token on that edge, and its first message or receive meets the other
// rank's data or token under a differing signature. At 2 ranks this halves
// the tokens: the root sends data and receives a token, the other rank
// sends a token and receives data, where each did both before. (Two ranks
// that each name the other as root still meet: each sends a token, and
// each token lands in the other's data receive.)
//
// On an intercommunicator the ranks' roles differ (the root, the rest of
// its group, the other group naming the root), and the tag's signature
// leaves the root out (InterAgreed), so each token carries, in place of
// the call's signature (Step.Sig), the role its sender takes, and its
// receiver expects the role a correct call gives the sender (the other
// arguments are checked by the data's messages, as ever):
//
//	local ring     each group as above; the root's group says "root
//	               group", the other group "remote, root i"
//	leaders        local rank 0 ↔ remote rank 0: "my group is the root's"
//	               or not; each expects the opposite
//	claims         every rank of the root's group → rank 0 of the other:
//	               "I am the root, rank j" or "not the root"; that rank
//	               expects "root" from rank i only
//
// so two roots, none, a root other than the one the other group names,
// or a group that disagrees on it, always meet a token of another role.
//
// A token receive that no step of the rank's own waits for (a Bcast
// root's, a Reduce leaf's) only checks: a Run is settled without it
// (Run.Settled), and a blocking call returns then, leaving the run to
// finish, as MPICH's eager root returns before its receivers arrive. A
// disagreement it shows still fails the run, and the run still tells the
// other ranks at once (Transport.Abandon); the caller reports it in a
// later call.
//
// Receives match on the sequence bits and the source only, so a token and
// data between the same pair must not be confused: on every rank the
// tokens are the first messages to a peer and the first receives from it,
// because the algorithm's transfers with that peer depend on them.

// tokenSig hashes a token's role into the 12 signature bits (never 0, so
// a token's tag always differs from the run's own).
func tokenSig(kind, v int) uint16 {
	h := uint32(kind+1)*0x9E3779B1 ^ uint32(v+7)*0x85EBCA77
	h ^= h >> 15
	s := uint16(h & (1<<SigBits - 1))
	if s == 0 {
		s = 1
	}
	return s
}

// token kinds and roles (tokenSig's arguments)
const (
	tokRing = iota
	tokLeader
	tokClaim

	roleRootGroup = -1 // the ring and leader tokens of the root's group
	roleNotRoot   = -1 // a claim: not the root
)

// addTokens adds the token steps of a's plan to b, which must be empty,
// and returns how many it added: a plan's first n steps are its tokens.
// dataLeads leaves out the ring token from the root to the next rank
// (Algorithm.DataLeads), dataEnds the one from the rank before the root
// to the root (Algorithm.DataEnds).
func addTokens(b *Builder, a *Args, dataLeads, dataEnds bool) int {
	if !a.Coll.Rooted() || a.Nbr != nil {
		return 0
	}
	tok := func(k StepKind, peer int, sig uint16) {
		b.steps = append(b.steps, Step{Kind: k, Peer: int32(peer), Sig: sig})
		b.deps = append(b.deps, nil)
	}
	ring := func(sig uint16) {
		if a.Size > 1 {
			tok(StepSend, (a.Rank+1)%a.Size, sig)
			tok(StepRecv, (a.Rank+a.Size-1)%a.Size, sig)
		}
	}
	if a.RemoteSize == 0 {
		if (dataLeads || dataEnds) && a.Size > 1 {
			next, prev := (a.Rank+1)%a.Size, (a.Rank+a.Size-1)%a.Size
			// an edge r → r+1 keeps its token unless data opens it
			if !(dataLeads && a.Rank == a.Root || dataEnds && next == a.Root) {
				tok(StepSend, next, 0)
			}
			if !(dataLeads && prev == a.Root || dataEnds && a.Rank == a.Root) {
				tok(StepRecv, prev, 0)
			}
			return len(b.steps)
		}
		ring(0)
		return len(b.steps)
	}
	rootGroup := a.Root == InterRootSelf || a.Root == InterRootNone
	if rootGroup {
		ring(tokenSig(tokRing, roleRootGroup))
	} else {
		ring(tokenSig(tokRing, a.Root))
	}
	if a.Rank == 0 {
		mine, theirs := tokenSig(tokLeader, 1), tokenSig(tokLeader, 0)
		if !rootGroup {
			mine, theirs = theirs, mine
		}
		tok(StepSend, a.remote(0), mine)
		tok(StepRecv, a.remote(0), theirs)
	}
	switch {
	case a.Root == InterRootSelf:
		tok(StepSend, a.remote(0), tokenSig(tokClaim, a.Rank))
	case a.Root == InterRootNone:
		tok(StepSend, a.remote(0), tokenSig(tokClaim, roleNotRoot))
	case a.Rank == 0:
		for r := range a.RemoteSize {
			role := roleNotRoot
			if r == a.Root {
				role = r
			}
			tok(StepRecv, a.remote(r), tokenSig(tokClaim, role))
		}
	}
	return len(b.steps)
}

// afterTokens makes every step that the algorithm added and that
// transfers with a peer wait for the last token step of the same
// direction with that peer, and every token for the one before it with
// the same peer and direction, so that messages between a pair, and the
// receives that take them, keep the plan's order.
func afterTokens(b *Builder, n int) {
	type key struct {
		send bool
		peer int32
	}
	last := make(map[key]StepID, n)
	for i := range n {
		s := b.steps[i]
		k := key{s.Kind == StepSend, s.Peer}
		if d, ok := last[k]; ok {
			b.deps[i] = append(b.deps[i], d)
		}
		last[k] = StepID(i)
	}
	for i := n; i < len(b.steps); i++ {
		s := b.steps[i]
		if !s.Kind.transfer() {
			continue
		}
		if d, ok := last[key{s.Kind == StepSend, s.Peer}]; ok {
			b.deps[i] = append(b.deps[i], d)
		}
	}
}
