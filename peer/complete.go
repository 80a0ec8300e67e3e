package peer

// complete publishes op's result and wakes whoever waits for it.
func (e *Endpoint) complete(op *Op, err error) {
	if op.completer != nil && !op.auto {
		// an op its owner restarts only once told (a collective's
		// channel): nobody reads the result but the completer, so one
		// atomic step ends it instead of two
		if !op.state.CompareAndSwap(opActive, opDone) {
			return
		}
		n := op.res.N
		if op.kind == opSend && err == nil {
			n = len(op.buf)
		}
		op.res.Err, op.res.N = err, n
		op.completer.Complete(op.cid, n, err)
		e.wake()
		return
	}
	if !op.state.CompareAndSwap(opActive, opCompleting) {
		if op.state.CompareAndSwap(opDetached, opIdle) {
			e.PutOp(op)
		}
		return
	}
	op.res.Err = err
	if op.kind == opSend {
		op.res.N = len(op.buf)
		if err != nil {
			op.res.N = 0
		}
	}
	// once opDone is visible the owner may recycle op: read what we need first
	c, id, n, auto, src := op.completer, op.cid, op.res.N, op.auto, op.res.Source
	if auto {
		// nobody observes an op the endpoint owns: straight back to the
		// pool (one atomic store, not two)
		e.PutOp(op)
	} else {
		op.state.Store(opDone)
	}
	if sc, ok := c.(SourceCompleter); ok {
		sc.CompleteFrom(id, src, n, err)
	} else if c != nil {
		c.Complete(id, n, err)
	} else if op.waiting.Load() {
		select {
		case op.done <- struct{}{}:
		default:
		}
	}
	e.wake()
}

// Watch registers ch to receive a token (non-blocking) whenever any
// operation of this endpoint completes or an unexpected message arrives;
// Waitany, Waitsome and blocking probes sleep on it.
func (e *Endpoint) Watch(ch chan struct{}) {
	e.watchMu.Lock()
	e.watchers = append(e.watchers, ch)
	e.nwatch.Add(1)
	e.watchMu.Unlock()
}

// Unwatch removes ch registered by Watch.
func (e *Endpoint) Unwatch(ch chan struct{}) {
	e.watchMu.Lock()
	for i, w := range e.watchers {
		if w == ch {
			e.watchers = append(e.watchers[:i], e.watchers[i+1:]...)
			e.nwatch.Add(-1)
			break
		}
	}
	e.watchMu.Unlock()
}

// Wake pokes every watcher; completions of operations outside the endpoint
// (collective schedules) call it too.
func (e *Endpoint) Wake() { e.wake() }

func (e *Endpoint) wake() {
	e.polls.threads.ring() // threads asleep in SpinPoll (poll_thread.go)
	if e.nwatch.Load() == 0 {
		return
	}
	e.watchMu.Lock()
	for _, w := range e.watchers {
		select {
		case w <- struct{}{}:
		default:
		}
	}
	e.watchMu.Unlock()
}
