package coll

// Agreement tokens of the rooted collectives.
//
// A message whose signature differs from its receiver's fails the
// receive (tag.go), but a rooted collective whose ranks pass different
// roots may send no message that reaches a rank of another root: each
// rank follows the tree of its own root, so with Reduce rooted at 0 on
// rank 0 and at 1 on rank 1, both wait for the other and neither sends;
// with Bcast both send and neither receives. So every rank of a rooted
// collective also sends a zero-byte token, under the collective's tag, to
// the next rank of a ring and receives one from the previous:
//
//	rank r:  send token → (r+1) mod n      receive token ← (r-1) mod n
//
// The ring joins every rank, so if any two ranks disagree (on the root or
// any other argument of the signature), some rank receives a token from a
// rank that disagrees with it and fails with ErrMismatch; its transport
// then tells the others (Transport.Abandon). Tokens wait for nothing, so
// they add one message per rank and no round: a rank's own sends and
// receives go on while its token travels.
//
// Receives match on the sequence bits and the source only, so a token and
// data between the same pair must not be confused: on every rank the
// token is the first message to the next rank and the first receive from
// the previous one, because the transfers to and from those ranks depend
// on the token steps.

// ringTokens adds the token steps of rank's part of a rooted collective on
// size ranks to b, which must be empty, and returns them.
func ringTokens(b *Builder, rank, size int) (send, recv StepID) {
	send = b.Send((rank+1)%size, Ref{})
	recv = b.Recv((rank+size-1)%size, Ref{})
	b.sinceFence = nil // the algorithm's first fence does not wait for them
	return send, recv
}

// afterTokens makes every transfer with the ring neighbors that the
// algorithm added wait for the token steps: sends to the next rank for
// the token sent, receives from the previous rank for the token received.
func afterTokens(b *Builder, send, recv StepID) {
	next, prev := b.steps[send].Peer, b.steps[recv].Peer
	for i := int(recv) + 1; i < len(b.steps); i++ {
		switch s := b.steps[i]; {
		case s.Kind == StepSend && s.Peer == next:
			b.deps[i] = append(b.deps[i], send)
		case (s.Kind == StepRecv || s.Kind == StepRecvReduce) && s.Peer == prev:
			b.deps[i] = append(b.deps[i], recv)
		}
	}
}

// needsTokens reports whether a's plan carries agreement tokens: the
// rooted intracommunicator collectives on more than one rank.
func needsTokens(a *Args) bool {
	return a.Coll.Rooted() && a.RemoteSize == 0 && a.Nbr == nil && a.Size > 1
}
