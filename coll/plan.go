package coll

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/meshmpi/meshmpi/op"
)

// Buf names one of the buffers a Plan refers to.
type Buf uint8

// The buffers of a Plan: the caller's send and receive buffers and the
// Run's scratch area.
const (
	BufSend Buf = iota
	BufRecv
	BufScratch
	numBufs
)

func (b Buf) String() string {
	switch b {
	case BufSend:
		return "send"
	case BufRecv:
		return "recv"
	case BufScratch:
		return "scratch"
	}
	return fmt.Sprintf("Buf(%d)", uint8(b))
}

// Ref is a byte range of a symbolic buffer.
type Ref struct {
	Buf      Buf
	Off, Len int
}

// Sub returns the range [off, off+n) of r.
func (r Ref) Sub(off, n int) Ref { return Ref{r.Buf, r.Off + off, n} }

// StepKind is what a step does.
type StepKind uint8

// Step kinds.
const (
	StepSend   StepKind = iota + 1 // send A to Peer
	StepRecv                       // receive exactly A.Len bytes from Peer into A
	StepReduce                     // B = A ⊕ B, A the left operand
	StepCopy                       // B = A
	StepNop                        // a join point (fences)
	// StepRecvReduce receives exactly B.Len bytes from Peer and reduces
	// them into B as they land (B = msg ⊕ B, the message the left
	// operand), through a transport that is a RecvReducer; with any other
	// transport it receives into A, scratch of B's size, then reduces A
	// into B. Plan makes these out of a receive and the reduce of what
	// it received (see fuseRecvReduce).
	StepRecvReduce
)

// transfer reports whether steps of kind k move a message.
func (k StepKind) transfer() bool { return k == StepSend || k == StepRecv || k == StepRecvReduce }

func (k StepKind) String() string {
	switch k {
	case StepSend:
		return "send"
	case StepRecv:
		return "recv"
	case StepReduce:
		return "reduce"
	case StepCopy:
		return "copy"
	case StepNop:
		return "nop"
	case StepRecvReduce:
		return "recv-reduce"
	}
	return fmt.Sprintf("StepKind(%d)", uint8(k))
}

// Step is one vertex of a Plan: a tagged union in MPICH's style.
type Step struct {
	Kind StepKind
	// Sig, if not 0, replaces the signature bits of the run's tag for a
	// transfer: an intercommunicator's agreement tokens (agree.go) carry
	// the role their sender takes, where the ranks' arguments
	// legitimately differ.
	Sig          uint16
	Peer         int32
	A, B         Ref
	NDeps        int32
	succLo, succ int32 // successors: Plan.succ[succLo:succ]
}

// StepID names a step of the Plan being built.
type StepID int32

// Plan is the immutable shape of one rank's part of a collective. Plans are
// shared by every Run of that shape and never hold buffer addresses.
type Plan struct {
	Steps   []Step
	succ    []int32
	run     runGraph     // what Runs execute (rungraph.go)
	Scratch int          // bytes of scratch the Run needs
	Need    [numBufs]int // bytes each buffer must hold
	Op      *op.Op
	Type    op.Type
	Name    string // algorithm, for errors and traces
	// Tokens is the number of agreement-token steps at the start of
	// Steps (agree.go): zero-byte transfers that carry no data.
	Tokens int

	transfers int // send, receive and receive-reduce steps

	// spare holds one idle Run outside poolMu: a blocking collective
	// takes and returns a Run per call, and one atomic swap costs less
	// than a lock and an unlock (as the endpoint's spare Ops).
	spare  atomic.Pointer[Run]
	poolMu sync.Mutex
	pool   []*Run // idle Runs (GetRun, PutRun)
}

// Successors returns the steps that depend on step i.
func (p *Plan) Successors(i int) []int32 { return p.succ[p.Steps[i].succLo:p.Steps[i].succ] }

// Builder assembles a Plan. Every add names its dependencies explicitly;
// an add with none depends on the last Fence (gentran's last_fence), so
// round-shaped algorithms write one Fence per round.
type Builder struct {
	steps      []Step
	deps       [][]StepID
	fence      StepID // -1: none yet
	sinceFence []StepID
	scratch    int
	op         *op.Op
	typ        op.Type
	err        error
}

// NewBuilder starts a plan whose reduce steps use o on elements of t.
func NewBuilder(o *op.Op, t op.Type) *Builder {
	return &Builder{fence: -1, op: o, typ: t}
}

// Scratch reserves n bytes of scratch and returns a reference to them.
func (b *Builder) Scratch(n int) Ref {
	r := Ref{BufScratch, b.scratch, n}
	b.scratch += n
	return r
}

func (b *Builder) add(s Step, deps []StepID) StepID {
	id := StepID(len(b.steps))
	if len(deps) == 0 && b.fence >= 0 {
		deps = []StepID{b.fence}
	}
	for _, d := range deps {
		if d < 0 || d >= id {
			b.fail(fmt.Errorf("step %d depends on unknown step %d", id, d))
		}
	}
	b.steps = append(b.steps, s)
	b.deps = append(b.deps, append([]StepID(nil), deps...))
	b.sinceFence = append(b.sinceFence, id)
	return id
}

func (b *Builder) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

// Send adds a step sending r to peer.
func (b *Builder) Send(peer int, r Ref, deps ...StepID) StepID {
	return b.add(Step{Kind: StepSend, Peer: int32(peer), A: r}, deps)
}

// Recv adds a step receiving exactly r.Len bytes from peer into r.
func (b *Builder) Recv(peer int, r Ref, deps ...StepID) StepID {
	return b.add(Step{Kind: StepRecv, Peer: int32(peer), A: r}, deps)
}

// Reduce adds dst = src ⊕ dst, with src the left operand (the lower ranks'
// contribution for non-commutative ops).
func (b *Builder) Reduce(src, dst Ref, deps ...StepID) StepID {
	if src.Len != dst.Len {
		b.fail(fmt.Errorf("reduce of %d bytes into %d", src.Len, dst.Len))
	}
	return b.add(Step{Kind: StepReduce, A: src, B: dst}, deps)
}

// Copy adds dst = src.
func (b *Builder) Copy(src, dst Ref, deps ...StepID) StepID {
	if src.Len != dst.Len {
		b.fail(fmt.Errorf("copy of %d bytes into %d", src.Len, dst.Len))
	}
	return b.add(Step{Kind: StepCopy, A: src, B: dst}, deps)
}

// Join adds a step that completes when all deps have.
func (b *Builder) Join(deps ...StepID) StepID {
	return b.add(Step{Kind: StepNop}, deps)
}

// Fence closes a round: later steps added without dependencies wait for
// every step added since the previous fence (and for that fence).
func (b *Builder) Fence() {
	if len(b.sinceFence) == 0 {
		return
	}
	deps := b.sinceFence
	b.sinceFence = nil
	id := StepID(len(b.steps))
	b.steps = append(b.steps, Step{Kind: StepNop})
	b.deps = append(b.deps, deps)
	b.fence = id
}

// Plan finishes the build.
func (b *Builder) Plan(name string) (*Plan, error) {
	if b.err != nil {
		return nil, fmt.Errorf("plan %s: %w", name, b.err)
	}
	b.fuseRecvReduce()
	p := &Plan{Steps: b.steps, Scratch: b.scratch, Op: b.op, Type: b.typ, Name: name}
	count := make([]int32, len(b.steps))
	for _, s := range b.steps {
		for _, r := range []Ref{s.A, s.B} {
			if r.Len > 0 {
				p.Need[r.Buf] = max(p.Need[r.Buf], r.Off+r.Len)
			}
		}
		if (s.Kind == StepReduce || s.Kind == StepRecvReduce) && b.op == nil {
			return nil, fmt.Errorf("plan %s: reduce step without an op", name)
		}
		if s.Kind.transfer() {
			p.transfers++
		}
	}
	for i, ds := range b.deps {
		p.Steps[i].NDeps = int32(len(ds))
		for _, d := range ds {
			count[d]++
		}
	}
	off := int32(0)
	for i := range p.Steps {
		p.Steps[i].succLo, p.Steps[i].succ = off, off
		off += count[i]
	}
	p.succ = make([]int32, off)
	for i, ds := range b.deps {
		for _, d := range ds {
			s := &p.Steps[d]
			p.succ[s.succ] = int32(i)
			s.succ++
		}
	}
	p.run = newRunGraph(p.Steps, b.deps)
	return p, nil
}
