package colltest

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/meshmpi/meshmpi/coll"
)

// Static checks of one rank's plan, for what the deterministic Fabric cannot
// show: it runs one step at a time and delivers eagerly, so a schedule that
// races, or that ignores Args.Segment, still gives the right bytes there.

// Hazards reports a data race in p: two steps that no chain of dependencies
// orders may run in either order (or at once, on a real network), so they
// must not touch overlapping bytes of one buffer while either of them writes
// (a receive into a block a pending send still reads, say). It also reports
// a step that writes the caller's send buffer, and a copy or reduction whose
// source and destination overlap. Empty ranges touch nothing.
func Hazards(p *coll.Plan) error {
	order := topoOrder(p)
	if order == nil {
		return fmt.Errorf("%s has a dependency cycle", p.Name)
	}
	reach := reachability(p, order)
	type access struct {
		step  int
		ref   coll.Ref
		write bool
	}
	var acc []access
	for i, s := range p.Steps {
		switch s.Kind {
		case coll.StepSend:
			acc = append(acc, access{i, s.A, false})
		case coll.StepRecv:
			acc = append(acc, access{i, s.A, true})
		case coll.StepRecvReduce: // lands in B, or in A then reduced into B
			acc = append(acc, access{i, s.A, true}, access{i, s.B, true})
		case coll.StepCopy, coll.StepReduce:
			if overlap(s.A, s.B) {
				return fmt.Errorf("%s step %d: %s of %v into overlapping %v", p.Name, i, s.Kind, s.A, s.B)
			}
			acc = append(acc, access{i, s.A, false}, access{i, s.B, true})
		}
	}
	acc = slices.DeleteFunc(acc, func(x access) bool { return x.ref.Len <= 0 })
	for _, x := range acc {
		if x.write && x.ref.Buf == coll.BufSend {
			return fmt.Errorf("%s step %d (%s) writes the send buffer %v", p.Name, x.step, p.Steps[x.step].Kind, x.ref)
		}
	}
	// sweep each buffer's accesses by offset: of those after x, only the
	// ones starting inside x can overlap it
	slices.SortFunc(acc, func(x, y access) int {
		return cmp.Or(cmp.Compare(x.ref.Buf, y.ref.Buf), cmp.Compare(x.ref.Off, y.ref.Off))
	})
	for i, x := range acc {
		for _, y := range acc[i+1:] {
			if y.ref.Buf != x.ref.Buf || y.ref.Off >= x.ref.Off+x.ref.Len {
				break
			}
			if x.step == y.step || !x.write && !y.write || reach[x.step].has(y.step) || reach[y.step].has(x.step) {
				continue
			}
			return fmt.Errorf("%s steps %d (%s %v) and %d (%s %v) touch the same bytes unordered",
				p.Name, x.step, p.Steps[x.step].Kind, x.ref, y.step, p.Steps[y.step].Kind, y.ref)
		}
	}
	return nil
}

// overlap reports whether two ranges share a byte.
func overlap(a, b coll.Ref) bool {
	return a.Buf == b.Buf && a.Len > 0 && b.Len > 0 && a.Off < b.Off+b.Len && b.Off < a.Off+a.Len
}

// Segments checks the size of every message of p, rank a's plan: a
// barrier's messages carry no data; any other collective's are non-empty
// (both sides skip empty transfers; the agreement tokens, Plan.Tokens,
// carry nothing), whole elements, and, when a.Segment
// is set, no longer than a.Segment rounded down to whole elements but at
// least one element (an element never travels in pieces).
func Segments(p *coll.Plan, a *coll.Args) error {
	barrier := a.Coll == coll.Barrier
	if !barrier && a.ElemSize <= 0 {
		return fmt.Errorf("%s: elements of %d bytes", p.Name, a.ElemSize)
	}
	limit := 0
	if !barrier && a.Segment > 0 {
		limit = max(a.ElemSize, a.Segment/a.ElemSize*a.ElemSize)
	}
	for i, s := range p.Steps {
		if i < p.Tokens || s.Kind != coll.StepSend && s.Kind != coll.StepRecv && s.Kind != coll.StepRecvReduce {
			continue
		}
		bad := s.A.Len != 0
		if !barrier {
			bad = s.A.Len <= 0 || s.A.Len%a.ElemSize != 0 || limit > 0 && s.A.Len > limit
		}
		if bad {
			return fmt.Errorf("%s step %d: %s of %d bytes (elements of %d, segment %d)", p.Name, i, s.Kind, s.A.Len, a.ElemSize, a.Segment)
		}
	}
	return nil
}

// CheckStatic builds every rank's plan of alg for args (args[r] is rank
// r's call) and checks each with Hazards and Segments. It returns the plans.
func CheckStatic(alg coll.Algorithm, args []coll.Args) ([]*coll.Plan, error) {
	plans := make([]*coll.Plan, len(args))
	for r := range args {
		p, err := coll.Build(alg, &args[r])
		if err != nil {
			return nil, fmt.Errorf("rank %d: %w", r, err)
		}
		if err := Segments(p, &args[r]); err != nil {
			return nil, fmt.Errorf("rank %d: %w", r, err)
		}
		if err := Hazards(p); err != nil {
			return nil, fmt.Errorf("rank %d: %w", r, err)
		}
		plans[r] = p
	}
	return plans, nil
}

// CheckPersistent checks alg on c as a persistent collective runs: it
// builds every rank's plan once, binds one Run per rank to one Fabric and
// to one pair of buffers, and starts those Runs starts times, with new
// inputs (seeded 1, 2, …, starts) written into the bound buffers before
// every start, comparing every rank's receive buffer with Reference after
// each. A plan relying on what a previous start left in scratch or in the
// receive buffer, or on scratch's initial contents, fails here. The plans
// are not verified statically (Check and CheckStatic do that).
func CheckPersistent(alg coll.Algorithm, c Case, starts int) error {
	args := c.Args()
	f := NewFabric(c.Size)
	runs := make([]*coll.Run, c.Size)
	send, recv := make([][]byte, c.Size), make([][]byte, c.Size)
	for r := range args {
		p, err := coll.Build(alg, &args[r])
		if err != nil {
			return fmt.Errorf("%s %s rank %d: %w", c, alg.Name, r, err)
		}
		send[r], recv[r] = Buffers(args, r, 1)
		runs[r] = coll.NewRun(p, f.Transport(r), 9, nil)
		if err := runs[r].Bind(send[r], recv[r]); err != nil {
			return fmt.Errorf("%s %s rank %d: %w", c, alg.Name, r, err)
		}
	}
	for start := range starts {
		seed := start + 1
		for r := range args { // new inputs, in the bound buffers
			s, v := Buffers(args, r, seed)
			copy(send[r], s)
			copy(recv[r], v)
		}
		want, err := Reference(args, send, recv)
		if err != nil {
			return fmt.Errorf("%s: reference: %w", c, err)
		}
		if err := startAll(runs, f); err != nil {
			return fmt.Errorf("%s %s start %d (seed %d): %w", c, alg.Name, start, seed, err)
		}
		if err := compare(recv, want); err != nil {
			return fmt.Errorf("%s %s start %d (seed %d): %w", c, alg.Name, start, seed, err)
		}
	}
	return nil
}
