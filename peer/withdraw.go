package peer

// CancelTagged completes with err every pending operation in context ctx
// whose tag agrees with tag in the bits of mask: posted receives, matched
// receives still waiting for data, and sends still waiting for their
// receiver to clear them. Sends already moving data finish. A failed
// collective withdraws its transfers this way, so nothing waits on a
// schedule that will not run. Unexpected messages with such tags are
// dropped too: nothing will receive them, and a persistent collective,
// whose tag is the same at every start, must not take them later.
//
// The dropped messages' eager credit goes back to their senders.
func (e *Endpoint) CancelTagged(ctx uint32, tag, mask int32, err error) {
	var failed opList
	e.mu.Lock()
	dropped := false
	for m := e.unexp.head(); m != nil; {
		next := next(m)
		if m.ctx == ctx && (m.tag^tag)&mask == 0 {
			e.unexp.remove(m)
			c := e.conns[m.src].Load()
			if c != nil {
				c.owed += e.releaseLocked(c, m) // granted below, unlocked
			}
			e.putMessageLocked(m)
			dropped = true
		}
		m = next
	}
	for op := e.posted.head(); op != nil; {
		next := op.next
		if op.ctx == ctx && (op.tag^tag)&mask == 0 {
			e.posted.remove(op)
			op.inPosted = false
			failed.push(op)
		}
		op = next
	}
	for _, op := range e.slots {
		if op == nil || op.ctx != ctx || (op.tag^tag)&mask != 0 {
			continue
		}
		switch {
		case op.copying:
			op.abandon = err // its data is being copied: the copier fails it after
		case op.kind == opRecv, op.phase == phaseWaitCTS:
			// a receive waiting for data, a send waiting for its CTS: what
			// the peer still sends for them is dropped as stale
			e.unregister(op)
			failed.push(op)
		case op.abandon == nil:
			op.abandon = err // its RTS is still queued: the writer drops it
		}
	}
	var grants []int64
	if dropped {
		grants = make([]int64, len(e.conns))
		for i := range e.conns {
			if c := e.conns[i].Load(); c != nil && c.owed > 0 {
				grants[i], c.owed = c.owed, 0
			}
		}
	}
	e.mu.Unlock()
	for i, g := range grants {
		if g > 0 {
			e.conns[i].Load().grant(g)
		}
	}
	for op := failed.pop(); op != nil; op = failed.pop() {
		e.complete(op, err)
	}
}

// peerFailed completes every operation waiting on rank with err: posted
// receives from it and rendezvous transfers in either direction. The conn
// is marked dead before: a receive that matches the rank's announcement
// later fails at once (deliverLocked), as does a receive posted for it
// (startRecv). AnySource receives stay posted: another rank may still be
// their sender, and whether a failure interrupts them is the
// communicator's to decide (ULFM's "pending" semantics), which the
// failure hooks tell.
func (e *Endpoint) peerFailed(rank int, err error) {
	var failed opList
	e.mu.Lock()
	for op := e.posted.head(); op != nil; {
		next := op.next
		if op.peer == rank {
			e.posted.remove(op)
			op.inPosted = false
			failed.push(op)
		}
		op = next
	}
	for _, op := range e.slots {
		// a send whose RTS is queued (or about to be) is the conn's to
		// fail: its queue is dropped when the conn fails (conn.drop)
		if op != nil && (op.kind == opSend && op.peer == rank && op.phase == phaseWaitCTS || op.kind == opRecv && op.res.Source == rank) {
			if op.copying {
				op.abandon = err // the copier fails it after
				continue
			}
			e.unregister(op)
			failed.push(op)
		}
	}
	local := e.closed != nil
	e.mu.Unlock()
	for op := failed.pop(); op != nil; op = failed.pop() {
		e.complete(op, err)
	}
	if !local {
		e.hookMu.Lock()
		hooks := e.hooks
		e.hookMu.Unlock()
		for _, h := range hooks {
			h(rank, err)
		}
		if e.dialer == nil {
			// every link was attached up front (an in-process world):
			// a lost link is the peer's end, nobody else to confirm it
			e.declare(rank, err)
		}
	}
	e.wake()
}

// declare tells the OnPeerDeclared functions, once per rank, that rank's
// failure is confirmed.
func (e *Endpoint) declare(rank int, err error) {
	c := e.conns[rank].Load()
	if c == nil || c.declared.Swap(true) {
		return
	}
	e.hookMu.Lock()
	hooks := e.declHooks
	e.hookMu.Unlock()
	for _, h := range hooks {
		h(rank, err)
	}
	e.wake()
}

// OnPeerDeclared adds f to the functions told, once per rank, that a
// peer's failure is confirmed: FailPeer declared it (the job's authority,
// the signaling server, announced its departure), or, for an endpoint
// whose links were all attached up front (no Dialer: an in-process
// world), its link was lost. A lost link alone is a suspicion where the
// job has an authority: two live ranks whose path broke must not both
// act on it (each would go on without the other); the authority hears of
// it and declares one of them, for everyone. f runs as OnPeerFailed's do.
func (e *Endpoint) OnPeerDeclared(f func(rank int, err error)) {
	e.hookMu.Lock()
	e.declHooks = append(e.declHooks[:len(e.declHooks):len(e.declHooks)], f)
	e.hookMu.Unlock()
}

// OnPeerFailed adds f to the functions told, once per rank, that a peer
// failed (its link was lost, or FailPeer declared it): the communicators
// above learn of failures this way, and the mesh spreads them. f runs on
// the goroutine that saw the failure, after the operations on the rank
// have failed; it must not block. A failure caused by closing the
// endpoint itself is not reported.
func (e *Endpoint) OnPeerFailed(f func(rank int, err error)) {
	e.hookMu.Lock()
	e.hooks = append(e.hooks[:len(e.hooks):len(e.hooks)], f)
	e.hookMu.Unlock()
}

// DropFrom removes the unexpected messages of rank, a failed peer, on
// the n contexts from lo: those of a freed communicator whose other
// members all failed. Nobody can receive them any more, and the
// communicator that reuses the contexts must not.
func (e *Endpoint) DropFrom(rank int, lo uint32, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for m := e.unexp.head(); m != nil; {
		next := m.links[byArrival].next
		if m.src == rank && m.ctx >= lo && m.ctx-lo < uint32(n) {
			e.unexp.remove(m)
		}
		m = next
	}
}
