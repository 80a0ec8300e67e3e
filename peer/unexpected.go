package peer

// Message is a message removed from matching by Improbe (MPI_Message), and
// the unexpected queue's entry type. An eager message holds its payload; a
// rendezvous message holds only its announcement.
type Message struct {
	kind  Kind
	ctx   uint32
	src   int
	tag   int32
	total int
	seq   uint32
	cost  int64 // eager credit the entry holds (credit.go)
	data  []byte
	// links in the queue's lists: arrival order, and, while the queue is
	// indexed, its (context, source) and (context, source, tag) buckets
	links [numOrders]msgLinks
}

// Envelope describes m.
func (m *Message) envelope() Envelope { return Envelope{Source: m.src, Tag: int(m.tag), Len: m.total} }

// Envelope returns the source, tag and length of m.
func (m *Message) Envelope() Envelope { return m.envelope() }

// The lists a queued message is on.
const (
	byArrival = iota // every message, oldest first
	bySource         // the messages of one (context, source)
	byTag            // the messages of one (context, source, tag)
	numOrders
)

type msgLinks struct{ prev, next *Message }

// msgList is an intrusive FIFO of Messages along one of their links.
type msgList struct{ head, tail *Message }

func (l *msgList) push(m *Message, k int) {
	m.links[k] = msgLinks{prev: l.tail}
	if l.tail == nil {
		l.head = m
	} else {
		l.tail.links[k].next = m
	}
	l.tail = m
}

func (l *msgList) remove(m *Message, k int) {
	lk := &m.links[k]
	if lk.prev == nil {
		l.head = lk.next
	} else {
		lk.prev.links[k].next = lk.next
	}
	if lk.next == nil {
		l.tail = lk.prev
	} else {
		lk.next.links[k].prev = lk.prev
	}
	*lk = msgLinks{}
}

// unexpQueue is the unexpected message queue. Matching must find the
// oldest message a receive takes, and MPI's non-overtaking order is
// arrival order per (source, context), so a plain arrival-ordered list is
// enough, and for the few messages a correct program usually has queued
// it is the fastest. A long queue (a peer far ahead of its receives, or a
// flood) would make each receive scan it all, so past indexAt entries the
// queue also files each message in a bucket per (context, source) and per
// (context, source, tag), each in arrival order: a receive from a
// specific source with a specific tag takes its bucket's head, one with a
// specific source and a tag mask (a collective's) scans only that
// source's messages, and only AnySource receives scan the arrival list.
// The index is dropped when the queue empties. After a flood (a peak
// past keepIndexAt) its maps go back to the garbage collector; after a
// smaller one they are kept, emptied, for the next time: a rank that runs
// ahead of its peer over and over (the head of a chain, a broadcast's
// root) would otherwise have the peer make both maps again every time.
type unexpQueue struct {
	all     msgList
	n       int
	indexed bool                // the buckets below are in use
	peak    int                 // the longest the queue was while indexed
	bySrc   map[srcKey]*msgList // nil until the queue first grows long
	byTag   map[tagKey]*msgList
	spare   spares[msgList] // empty buckets for reuse
}

type srcKey struct {
	ctx uint32
	src int32
}

type tagKey struct {
	ctx      uint32
	src, tag int32
}

// indexAt is the queue length past which the queue keeps its index.
const indexAt = 64

// keepIndexAt is the peak length up to which an emptied queue keeps its
// index's maps and buckets.
const keepIndexAt = 1024

func (q *unexpQueue) head() *Message { return q.all.head }

func next(m *Message) *Message { return m.links[byArrival].next }

func (q *unexpQueue) push(m *Message) {
	q.all.push(m, byArrival)
	q.n++
	switch {
	case q.indexed:
		q.file(m)
		q.peak = max(q.peak, q.n)
	case q.n > indexAt:
		if q.bySrc == nil {
			q.bySrc, q.byTag = make(map[srcKey]*msgList), make(map[tagKey]*msgList)
		}
		q.indexed, q.peak = true, q.n
		for o := q.all.head; o != nil; o = next(o) {
			q.file(o)
		}
	}
}

// dropIndex stops indexing an empty queue, keeping the emptied maps and
// buckets unless the queue was a flood (keepIndexAt).
func (q *unexpQueue) dropIndex() {
	q.indexed = false
	if q.peak > keepIndexAt {
		q.bySrc, q.byTag, q.spare, q.peak = nil, nil, nil, 0
		return
	}
	// only the last message's buckets are left: the others went to spare
	// as they emptied
	for _, l := range q.bySrc {
		*l = msgList{}
		q.spare.put(l)
	}
	for _, l := range q.byTag {
		*l = msgList{}
		q.spare.put(l)
	}
	clear(q.bySrc)
	clear(q.byTag)
	q.peak = 0
}

// file adds m to its buckets.
func (q *unexpQueue) file(m *Message) {
	sk := srcKey{m.ctx, int32(m.src)}
	tk := tagKey{m.ctx, int32(m.src), m.tag}
	q.bucket(q.bySrc, sk).push(m, bySource)
	l := q.byTag[tk]
	if l == nil {
		l = q.spare.get()
		q.byTag[tk] = l
	}
	l.push(m, byTag)
}

func (q *unexpQueue) bucket(mp map[srcKey]*msgList, k srcKey) *msgList {
	l := mp[k]
	if l == nil {
		l = q.spare.get()
		mp[k] = l
	}
	return l
}

func (q *unexpQueue) remove(m *Message) {
	q.all.remove(m, byArrival)
	q.n--
	if !q.indexed {
		return
	}
	if q.n == 0 {
		q.dropIndex()
		m.links = [numOrders]msgLinks{}
		return
	}
	sk := srcKey{m.ctx, int32(m.src)}
	tk := tagKey{m.ctx, int32(m.src), m.tag}
	if l := q.bySrc[sk]; l != nil {
		if l.remove(m, bySource); l.head == nil {
			delete(q.bySrc, sk)
			q.spare.put(l)
		}
	}
	if l := q.byTag[tk]; l != nil {
		if l.remove(m, byTag); l.head == nil {
			delete(q.byTag, tk)
			q.spare.put(l)
		}
	}
}

// match returns the oldest unexpected message a receive (src, tag) in ctx
// takes: arrival order is what makes matching non-overtaking.
func (q *unexpQueue) match(ctx uint32, src int, tag, mask int32) *Message {
	if q.indexed && src != AnySource {
		if tag != AnyTag && mask == -1 {
			if l := q.byTag[tagKey{ctx, int32(src), tag}]; l != nil {
				return l.head
			}
			return nil
		}
		l := q.bySrc[srcKey{ctx, int32(src)}]
		if l == nil {
			return nil
		}
		for m := l.head; m != nil; m = m.links[bySource].next {
			if tag == AnyTag || (m.tag^tag)&mask == 0 {
				return m
			}
		}
		return nil
	}
	for m := q.all.head; m != nil; m = next(m) {
		if m.ctx == ctx && (src == AnySource || m.src == src) && (tag == AnyTag || (m.tag^tag)&mask == 0) {
			return m
		}
	}
	return nil
}
