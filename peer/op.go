package peer

import "sync/atomic"

// Wildcards for receives and probes (MPI_ANY_SOURCE, MPI_ANY_TAG).
const (
	AnySource = -1
	AnyTag    = -1
)

// Mode selects a send's protocol.
type Mode uint8

const (
	// Standard sends eagerly up to the endpoint's eager limit and by
	// rendezvous above it (MPI_Send).
	Standard Mode = iota
	// Synchronous always uses rendezvous, so the send completes only after
	// the receiver matched it (MPI_Ssend).
	Synchronous
	// modeCancel marks an Op that carries a cancel (cancel.go), not a
	// message.
	modeCancel
)

// Completer receives the completion of an Op started with SetCompleter:
// exactly one Complete(id, n, err) per start, where n is the number of bytes
// moved. It runs on whatever goroutine completed the operation, with no
// endpoint lock held, and must not block.
type Completer interface {
	Complete(id int32, n int, err error)
}

// SourceCompleter is a Completer of RecvNotify that also learns which rank
// sent the message it received (an AnySource receive's sender): its
// CompleteFrom is called instead of Complete.
type SourceCompleter interface {
	Completer
	CompleteFrom(id int32, source, n int, err error)
}

type opKind uint8

const (
	opSend opKind = 1 + iota
	opRecv
	opCTS    // a clear-to-send control frame waiting in a conn's queue
	opCredit // a credit grant waiting in a conn's queue (want: bytes)
	// opCancelReply is a cancel reply waiting in a conn's control queue
	// (cancel.go): seq and rid as the request had them, want the
	// reply's flags.
	opCancelReply
)

// Op life cycle. Only the goroutine that wins the CAS from opActive writes
// the result, so a completion racing a failure cannot tear it.
const (
	opIdle uint32 = iota
	opActive
	opCompleting
	opDone
	opDetached // freed by its owner while active; released on completion
)

// Send phases.
const (
	phaseEager   uint8 = iota // one eager frame to write
	phaseRTS                  // RTS to write, then wait for CTS
	phaseWaitCTS              // RTS written; registered in the slot table
	phaseData                 // data frames to write
	// phaseCancel: a cancel Op (cancel.go) whose frame is queued behind
	// the message it names; once written it waits for the reply in
	// phaseWaitCTS, where peerFailed finds it.
	phaseCancel
)

// Result is the outcome of a completed Op.
type Result struct {
	Source    int   // world rank the message came from (receives)
	Tag       int   // tag of the matched message (receives)
	N         int   // bytes moved into or out of the buffer
	Total     int   // bytes the message had (receives; > N after truncation)
	Err       error // nil, or why the operation failed
	Cancelled bool  // the receive was cancelled before it matched
}

// Op is one point-to-point operation in flight: a send or a receive. Ops
// come from an Endpoint's pool and are reused, which is what keeps the
// message path free of allocation; a persistent request keeps one Op for
// its whole life.
type Op struct {
	ep    *Endpoint
	kind  opKind
	mode  Mode
	phase uint8
	ctx   uint32
	peer  int // destination, or source / AnySource
	tag   int32
	mask  int32 // tag bits a receive matches on (-1: all)
	buf   []byte

	state atomic.Uint32
	done  chan struct{} // a token per completion that a waiter asked for; created once
	// waiting is set by Done: a goroutine may sleep on done, so the
	// completer sends it a token. Without one (a waiter that polls, or a
	// completer) a completion costs no channel operation, whose lock
	// was a fifth of a message's cost.
	waiting   atomic.Bool
	completer Completer
	cid       int32
	auto      bool // the endpoint owns the op: back to the pool after Complete

	slot     uint32 // our rendezvous id while registered
	rid      uint32 // send: the receiver's id; cts: the receive's id
	seq      uint32 // cts: the sender's id
	want     int    // bytes the data phase moves
	off      int    // data bytes sent or received so far
	inPosted bool
	refused  bool  // cts: the receiver has no slot for the data (FlagRefused)
	copying  bool  // under e.mu: a data frame is being copied into buf
	abandon  error // under e.mu: withdrawn while its RTS was queued or its data copied

	acc     accumulator          // an accumulating receive's reduction; zero otherwise
	carry   [maxCarry / 8]uint64 // a partial element between fragments (aligned)
	carried int                  // bytes in carry
	stage   *[stageWords]uint64  // aligned staging for misaligned fragments; kept across starts

	res Result

	prev, next   *Op    // posted queue or a conn's send queue
	bprev, bnext *Op    // the posted queue's bucket, while it is indexed
	pseq         uint64 // posting number, under e.mu while posted
}

// SetCompleter makes the next completions of op call c.Complete(id, …)
// instead of waking Done. Call it only while op is not active. Such an op
// may report Finished a moment before its Result is written: its outcome
// is what Complete is given.
func (op *Op) SetCompleter(c Completer, id int32) { op.completer, op.cid = c, id }

// Done returns a channel that receives a token when op completes, or a
// closed one if it has. A token may be stale (left from an earlier
// start), so check Finished after waking.
func (op *Op) Done() <-chan struct{} {
	// Dekker with complete: it stores opDone, then looks at waiting; we
	// store waiting, then look at the state. One of the two sees the
	// other's write, so a waiter never sleeps through its completion.
	op.waiting.Store(true)
	if op.state.Load() == opDone {
		return closedDone
	}
	return op.done
}

// closedDone is the channel Done returns for a finished op.
var closedDone = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// Finished reports whether op has completed.
func (op *Op) Finished() bool { return op.state.Load() == opDone }

// Active reports whether op was started and has not completed.
func (op *Op) Active() bool {
	s := op.state.Load()
	return s == opActive || s == opCompleting
}

// Result returns op's outcome; valid once Finished reports true.
func (op *Op) Result() Result { return op.res }

// arm prepares op for a new start.
func (op *Op) arm(kind opKind, peer int, ctx uint32, tag int32, buf []byte) {
	if op.waiting.Swap(false) { // only a waiter's start can have left a token
		select { // drop a token a previous start left unread
		case <-op.done:
		default:
		}
	}
	op.kind, op.peer, op.ctx, op.tag, op.buf = kind, peer, ctx, tag, buf
	op.mask = -1
	op.slot, op.rid, op.seq, op.want, op.off, op.abandon, op.copying = 0, 0, 0, 0, 0, nil, false
	op.acc, op.carried = accumulator{}, 0
	op.res = Result{}
	op.state.Store(opActive)
}

// opList is an intrusive FIFO of Ops.
type opList struct{ head, tail *Op }

func (l *opList) empty() bool { return l.head == nil }

func (l *opList) push(op *Op) {
	op.next, op.prev = nil, l.tail
	if l.tail == nil {
		l.head = op
	} else {
		l.tail.next = op
	}
	l.tail = op
}

func (l *opList) remove(op *Op) {
	if op.prev == nil {
		l.head = op.next
	} else {
		op.prev.next = op.next
	}
	if op.next == nil {
		l.tail = op.prev
	} else {
		op.next.prev = op.prev
	}
	op.prev, op.next = nil, nil
}

func (l *opList) pop() *Op {
	op := l.head
	if op != nil {
		l.remove(op)
	}
	return op
}
