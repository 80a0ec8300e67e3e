package faultinject

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Mode is how a job's ranks run.
type Mode string

// The job kinds a fault is injected into.
const (
	// Native ranks are processes of one meshrun -n N --native, with its
	// embedded signaling server: the fault hits a rank process.
	Native Mode = "native"
	// WASI ranks each run in a meshrun join of their own, on the
	// harness's signaling server: the fault hits the meshrun process that
	// hosts the victim (the WASI host is the rank, as far as its peers
	// can tell).
	WASI Mode = "wasi"
	// Mixed jobs have WASI ranks first and native ones after, each in a
	// meshrun join of its own: the fault hits the victim's process (a
	// native rank's own, a WASI rank's meshrun).
	Mixed Mode = "mixed"
)

// Kind is the fault.
type Kind string

// Faults.
const (
	Kill   Kind = "kill"   // SIGKILL: the rank is gone, its sockets close
	Freeze Kind = "freeze" // SIGSTOP: the rank is there and answers nothing
)

// Phase is when the fault strikes.
type Phase string

// Phases.
const (
	Formation Phase = "formation" // while the job forms: Init has not returned on every rank
	Op        Phase = "op"        // while every rank loops the operation
	Finalize  Phase = "finalize"  // once the victim has started Finalize
)

// Ops are the workload's operations: point-to-point and one of each
// collective family.
var Ops = []string{"p2p", "barrier", "bcast", "reduce", "allreduce", "gather", "scatter", "allgather", "alltoall", "reducescatter", "scan"}

// Forms are the three forms of each operation.
var Forms = []string{"blocking", "nonblocking", "persistent"}

// Plan is one fault-injected run.
type Plan struct {
	Mode   Mode
	Kind   Kind
	Phase  Phase
	Ranks  int
	WASI   int // ranks 0 … WASI-1 run under WASI (all of them in WASI mode)
	Victim int
	Op     string
	Form   string
	Count  int           // elements per rank and operation
	Delay  time.Duration // from the phase's start to the fault
	// A ulfm run (Op ULFMOp) has Rounds rounds, and its Op phase strikes
	// Delay after the victim starts step Step of round Round.
	Rounds, Round int
	Step          string
	// An example run (Op Resilient or Farm) strikes Delay after rank 0
	// prints its first line, with the example's size: resilient's
	// -iters, -points and -every, farm's -tasks and -work.
	Iters, Points, Every int
	Tasks, Work          int
}

// ULFM reports whether p is a run of the fault-tolerant workload.
func (p Plan) ULFM() bool { return p.Op == ULFMOp }

// Where is the phase the plan strikes in, with a ulfm run's step for the
// loop: formation, revoke, agree, shrink or finalize.
func (p Plan) Where() string {
	if p.ULFM() && p.Phase == Op {
		return p.Step
	}
	return string(p.Phase)
}

func (p Plan) String() string {
	if p.Example() {
		return fmt.Sprintf("%s %s of rank %d/%d during %s (%s) +%v",
			p.Mode, p.Kind, p.Victim, p.Ranks, p.Op, strings.Join(p.ExampleArgs(), " "), p.Delay)
	}
	if p.ULFM() {
		at := string(p.Phase)
		if p.Phase == Op {
			at = fmt.Sprintf("%s of round %d", p.Step, p.Round)
		}
		return fmt.Sprintf("%s %s of rank %d/%d during %s (ulfm, %d rounds) +%v",
			p.Mode, p.Kind, p.Victim, p.Ranks, at, p.Rounds, p.Delay)
	}
	return fmt.Sprintf("%s %s of rank %d/%d during %s (%s %s, count %d) +%v",
		p.Mode, p.Kind, p.Victim, p.Ranks, p.Phase, p.Form, p.Op, p.Count, p.Delay)
}

// RandomPlan draws a run from modes: 3 or 4 ranks, any victim, any fault,
// phase, operation, form and size, and a delay within the phase (up to
// 400 ms during formation, up to 300 ms into the loop, up to 10 ms into
// Finalize, which is short).
func RandomPlan(rng *rand.Rand, modes []Mode) Plan {
	p := Plan{
		Mode:  modes[rng.IntN(len(modes))],
		Kind:  []Kind{Kill, Freeze}[rng.IntN(2)],
		Ranks: 3 + rng.IntN(2),
		Op:    Ops[rng.IntN(len(Ops))],
		Form:  Forms[rng.IntN(len(Forms))],
		Count: []int{1, 1024, 32 << 10}[rng.IntN(3)],
	}
	// Formation and Finalize are one phase each; the loop is most of a
	// program's life.
	switch x := rng.IntN(10); {
	case x < 3:
		// From the victim's start (native) or its join (the others):
		// a native job forms in about half a second, the others as soon
		// as the last rank joins, so most later faults would strike the
		// loop instead.
		p.Phase = Formation
		p.Delay = time.Duration(rng.Int64N(int64(400 * time.Millisecond)))
	case x < 8:
		p.Phase = Op
		p.Delay = time.Duration(rng.Int64N(int64(300 * time.Millisecond)))
	default:
		p.Phase = Finalize
		p.Delay = time.Duration(rng.Int64N(int64(10 * time.Millisecond)))
	}
	p.Victim = rng.IntN(p.Ranks)
	p.setWASI(rng)
	return p
}

// setWASI draws how many of a mixed job's ranks run under WASI.
func (p *Plan) setWASI(rng *rand.Rand) {
	switch p.Mode {
	case WASI:
		p.WASI = p.Ranks
	case Mixed:
		p.WASI = 1 + rng.IntN(p.Ranks-1)
	}
}

// RandomULFMPlan draws a run of the fault-tolerant workload (ULFMOp) of
// rounds rounds from modes: 3 or 4 ranks, any victim and fault, struck
// during formation (up to 150 ms from the victim's start or join: the
// whole job may be over in a few hundred), at a step (Revoke, Agree,
// Shrink) of a random round, up to 2 ms after the victim starts it, or in
// Finalize (up to 10 ms into it).
func RandomULFMPlan(rng *rand.Rand, modes []Mode, rounds int) Plan {
	p := Plan{
		Mode:   modes[rng.IntN(len(modes))],
		Kind:   []Kind{Kill, Freeze}[rng.IntN(2)],
		Ranks:  3 + rng.IntN(2),
		Op:     ULFMOp,
		Rounds: rounds,
	}
	var revokes, connects []int // the rounds that revoke, that connect
	for k := range rounds {
		if _, ok := ULFMRevoker(k, p.Ranks); ok {
			revokes = append(revokes, k)
		}
		if ULFMConnects(k, p.Ranks-1) { // at most one rank fails
			connects = append(connects, k)
		}
	}
	switch x := rng.IntN(20); {
	case x < 3:
		p.Phase = Formation
		p.Delay = time.Duration(rng.Int64N(int64(150 * time.Millisecond)))
	case x < 17:
		p.Phase = Op
		p.Step = []string{StepRevoke, StepConnect, StepAgree, StepShrink}[rng.IntN(4)]
		switch {
		case p.Step == StepRevoke && len(revokes) > 0:
			p.Round = revokes[rng.IntN(len(revokes))]
		case p.Step == StepConnect && len(connects) > 0:
			p.Round = connects[rng.IntN(len(connects))]
		default:
			p.Step = []string{StepAgree, StepShrink}[rng.IntN(2)]
			p.Round = rng.IntN(rounds)
		}
		p.Delay = time.Duration(rng.Int64N(int64(2 * time.Millisecond)))
	default:
		p.Phase = Finalize
		p.Delay = time.Duration(rng.Int64N(int64(10 * time.Millisecond)))
	}
	p.Victim = rng.IntN(p.Ranks)
	p.setWASI(rng)
	return p
}
