package faultinject

import (
	"math/rand/v2"
	"strconv"
	"time"
)

// The example runs fault the fault-tolerant examples as they compute,
// each rank a process of its own under meshrun --keep-going:
//
//   - examples/resilient, a 1-D heat iteration with in-memory
//     checkpoints at ring neighbours, which revokes, shrinks, agrees on a
//     checkpoint and rolls back when a rank fails; any rank may be the
//     victim (one fault a run: resilient loses data only when two ring
//     neighbours fail together).
//   - examples/farm, a manager (rank 0) and workers, which requeues the
//     task of a failed worker; the victim is a worker (the manager's
//     failure ends the farm, by design).
//
// The fault strikes Plan.Delay after rank 0 prints its first line (the
// job formed, the computation starts). ExampleVerdict says what the run
// must show.

// The examples (Plan.Op of an example run).
const (
	Resilient = "resilient"
	Farm      = "farm"
)

// Examples are the examples a run may fault.
var Examples = []string{Resilient, Farm}

// Example reports whether p runs one of the examples.
func (p Plan) Example() bool { return p.Op == Resilient || p.Op == Farm }

// ExampleArgs are the example's arguments: its size.
func (p Plan) ExampleArgs() []string {
	switch p.Op {
	case Resilient:
		return []string{"-iters", strconv.Itoa(p.Iters), "-points", strconv.Itoa(p.Points), "-every", strconv.Itoa(p.Every)}
	case Farm:
		return []string{"-tasks", strconv.Itoa(p.Tasks), "-work", strconv.Itoa(p.Work)}
	}
	return nil
}

// The examples' cost, as measured on a loaded 2-core machine: a
// resilient iteration (lock-step, its time mostly the halo exchange's
// round trip, whatever the ranks), a farm hash step (the workers share
// the cores), natively and under wazero. A job with a WASI rank goes at
// the WASI pace (resilient waits for its slowest rank; farm's manager is
// rank 0, under WASI in a mixed job).
const (
	resilientIterNative = 450 * time.Microsecond
	resilientIterWASI   = 2500 * time.Microsecond
	farmStepNative      = 7 * time.Nanosecond
	farmStepWASI        = 40 * time.Nanosecond
)

// Estimate is how long p's example computes unfaulted, from rank 0's
// first line to its end, by the costs above; 0 for other runs.
func (p Plan) Estimate() time.Duration {
	wasi := p.Mode != Native
	switch p.Op {
	case Resilient:
		if wasi {
			return time.Duration(p.Iters) * resilientIterWASI
		}
		return time.Duration(p.Iters) * resilientIterNative
	case Farm:
		if wasi {
			return time.Duration(p.Tasks*p.Work) * farmStepWASI
		}
		return time.Duration(p.Tasks*p.Work) * farmStepNative
	}
	return 0
}

// RandomExamplePlan draws a run of an example from modes: 4 to 6 ranks,
// any fault, any victim (a worker for farm), a size for which the
// example computes for about 0.5 to 2 s unfaulted (Estimate; smaller
// under WASI, which is several times slower), and a delay within that
// time from rank 0's first line: most faults strike the computation,
// some miss it (the job was over).
func RandomExamplePlan(rng *rand.Rand, modes []Mode) Plan {
	pick := func(xs ...int) int { return xs[rng.IntN(len(xs))] }
	p := Plan{
		Mode:  modes[rng.IntN(len(modes))],
		Kind:  []Kind{Kill, Freeze}[rng.IntN(2)],
		Ranks: 4 + rng.IntN(3),
		Op:    Examples[rng.IntN(len(Examples))],
		Phase: Op,
	}
	wasi := p.Mode != Native
	switch p.Op {
	case Resilient:
		p.Victim = rng.IntN(p.Ranks)
		p.Points = pick(1000, 2000, 4000)
		if wasi {
			p.Iters, p.Every = pick(300, 450, 600), pick(25, 50, 100)
		} else {
			p.Iters, p.Every = pick(2000, 3000, 4000), pick(50, 100, 200)
		}
	case Farm:
		p.Victim = 1 + rng.IntN(p.Ranks-1)
		if wasi {
			p.Tasks, p.Work = pick(80, 120), pick(200_000, 400_000)
		} else {
			p.Tasks, p.Work = pick(150, 200, 300), pick(500_000, 1_000_000)
		}
	}
	p.Delay = time.Duration(rng.Int64N(int64(p.Estimate())))
	p.setWASI(rng)
	return p
}
