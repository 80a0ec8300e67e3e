package peer

// postedQueue is the posted receive queue. An arriving message takes the
// oldest posted receive that matches it. As with the unexpected queue
// (unexpQueue), a short queue is one arrival-ordered list, scanned; past
// indexAt receives each receive is also filed in exactly one bucket: by
// (context, source, tag) if it names both, by (context, source) if its
// tag is a wildcard or masked, or among the AnySource receives. A message
// then looks at its exact bucket's head, the first match in its source's
// bucket and the first match among the AnySource receives, and takes the
// oldest of the three by posting number: the same receive the scan finds.
type postedQueue struct {
	all   opList
	n     int
	seq   uint64               // posting number of the next receive
	exact map[tagKey]*opBucket // nil while the queue is short
	bySrc map[srcKey]*opBucket // receives with a specific source only
	any   opBucket             // AnySource receives, while indexed
	spare spares[opBucket]     // empty buckets for reuse
}

// opBucket is an intrusive FIFO of Ops along their bucket links.
type opBucket struct{ head, tail *Op }

func (l *opBucket) push(op *Op) {
	op.bnext, op.bprev = nil, l.tail
	if l.tail == nil {
		l.head = op
	} else {
		l.tail.bnext = op
	}
	l.tail = op
}

func (l *opBucket) remove(op *Op) {
	if op.bprev == nil {
		l.head = op.bnext
	} else {
		op.bprev.bnext = op.bnext
	}
	if op.bnext == nil {
		l.tail = op.bprev
	} else {
		op.bnext.bprev = op.bprev
	}
	op.bprev, op.bnext = nil, nil
}

// takes reports whether receive op matches a message (src, tag) in ctx.
func (op *Op) takes(ctx uint32, src int, tag int32) bool {
	return op.ctx == ctx && (op.peer == AnySource || op.peer == src) && (op.tag == AnyTag || (op.tag^tag)&op.mask == 0)
}

func (q *postedQueue) head() *Op { return q.all.head }

func (q *postedQueue) push(op *Op) {
	op.pseq = q.seq
	q.seq++
	q.all.push(op)
	q.n++
	switch {
	case q.exact != nil:
		q.file(op)
	case q.n > indexAt:
		q.exact, q.bySrc = make(map[tagKey]*opBucket), make(map[srcKey]*opBucket)
		for o := q.all.head; o != nil; o = o.next {
			q.file(o)
		}
	}
}

// file adds op to its bucket.
func (q *postedQueue) file(op *Op) {
	switch {
	case op.peer == AnySource:
		q.any.push(op)
	case op.tag == AnyTag || op.mask != -1:
		k := srcKey{op.ctx, int32(op.peer)}
		l := q.bySrc[k]
		if l == nil {
			l = q.spare.get()
			q.bySrc[k] = l
		}
		l.push(op)
	default:
		k := tagKey{op.ctx, int32(op.peer), op.tag}
		l := q.exact[k]
		if l == nil {
			l = q.spare.get()
			q.exact[k] = l
		}
		l.push(op)
	}
}

func (q *postedQueue) remove(op *Op) {
	q.all.remove(op)
	q.n--
	if q.exact == nil {
		return
	}
	if q.n == 0 {
		q.exact, q.bySrc, q.spare, q.any = nil, nil, nil, opBucket{}
		op.bprev, op.bnext = nil, nil
		return
	}
	switch {
	case op.peer == AnySource:
		q.any.remove(op)
	case op.tag == AnyTag || op.mask != -1:
		k := srcKey{op.ctx, int32(op.peer)}
		if l := q.bySrc[k]; l != nil {
			if l.remove(op); l.head == nil {
				delete(q.bySrc, k)
				q.spare.put(l)
			}
		}
	default:
		k := tagKey{op.ctx, int32(op.peer), op.tag}
		if l := q.exact[k]; l != nil {
			if l.remove(op); l.head == nil {
				delete(q.exact, k)
				q.spare.put(l)
			}
		}
	}
}

func (q *postedQueue) pop() *Op {
	op := q.all.head
	if op != nil {
		q.remove(op)
	}
	return op
}

// match returns the oldest posted receive that takes a message (src, tag)
// in ctx.
func (q *postedQueue) match(ctx uint32, src int, tag int32) *Op {
	if q.exact == nil {
		for op := q.all.head; op != nil; op = op.next {
			if op.takes(ctx, src, tag) {
				return op
			}
		}
		return nil
	}
	var best *Op
	if l := q.exact[tagKey{ctx, int32(src), tag}]; l != nil {
		best = l.head
	}
	older := func(l *opBucket) {
		for op := l.head; op != nil; op = op.bnext {
			if op.takes(ctx, src, tag) {
				if best == nil || op.pseq < best.pseq {
					best = op
				}
				return
			}
		}
	}
	if l := q.bySrc[srcKey{ctx, int32(src)}]; l != nil {
		older(l)
	}
	older(&q.any)
	return best
}
