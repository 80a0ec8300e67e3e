package coll_test

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/meshmpi/meshmpi/coll"
	"github.com/meshmpi/meshmpi/coll/colltest"
	"github.com/meshmpi/meshmpi/op"
)

// The sweep of the allreduce, reduce-scatter and scan tests
// (reducescatter_test.go and scan_test.go use it too).
var (
	familySizes  = []int{1, 2, 3, 4, 5, 7, 8, 11, 16}
	familyCounts = []int{0, 1, 3, 7, 8, 9, 31, 33, 257}
	familySeeds  = []int{1, 2}
)

// familyOp is an op and an element type it is defined on.
type familyOp struct {
	op  *op.Op
	typ op.Type
}

// familyOps holds every predefined op on a type where it is defined, and
// the non-commutative colltest.Affine. Replace and NoOp are not
// commutative either: their fold is x0 and x_{n-1}.
var familyOps = []familyOp{
	{op.Sum, op.Int64}, {op.Prod, op.Int32}, {op.Max, op.Int64}, {op.Min, op.Int32},
	{op.Land, op.Int64}, {op.Lor, op.Int32}, {op.Lxor, op.Int64},
	{op.Band, op.Int32}, {op.Bor, op.Int64}, {op.Bxor, op.Int32},
	{op.Replace, op.Int64}, {op.NoOp, op.Int32},
	{op.MaxLoc, op.LocInt64}, {op.MinLoc, op.LocInt64},
	{colltest.Affine, op.Uint64},
}

// familyCases returns the sweep of a reduction collective: every count
// with Sum and Affine, every op on count 9, in place and not, a small
// Segment on the large counts, and one below an element's size.
func familyCases(c coll.Coll) []colltest.Case {
	var cases []colltest.Case
	for _, size := range familySizes {
		for _, count := range familyCounts {
			ops := []familyOp{familyOps[0], familyOps[len(familyOps)-1]} // Sum, Affine
			if count == 9 {
				ops = familyOps
			}
			for _, o := range ops {
				for _, inPlace := range []bool{false, true} {
					cs := colltest.Case{Coll: c, Size: size, Count: count, Op: o.op, Type: o.typ, InPlace: inPlace}
					cases = append(cases, cs)
					if count == 9 && o.typ == op.LocInt64 {
						cs.Segment = 8 // less than an element: one per piece
						cases = append(cases, cs)
					}
					if count >= 31 {
						cs.Segment = 16 // two int64s: many pieces per message
						if count == 257 {
							cs.Segment = 16 * 8
						}
						cases = append(cases, cs)
					}
				}
			}
		}
	}
	return cases
}

// familyAlg returns the registered algorithm name of c.
func familyAlg(t *testing.T, c coll.Coll, name string) coll.Algorithm {
	t.Helper()
	for _, alg := range coll.Algorithms(c) {
		if alg.Name == name {
			return alg
		}
	}
	t.Fatalf("%s algorithm %q is not registered", c, name)
	return coll.Algorithm{}
}

// familySweep checks alg on every case of the sweep whose restrictions
// hold: colltest.Check (static verification, a run, the reference) and
// the hazard check once per plan shape, then a persistent run of every
// seed on the same Runs and buffers, the inputs changed between starts.
func familySweep(t *testing.T, c coll.Coll, name string) {
	t.Helper()
	alg := familyAlg(t, c, name)
	t.Parallel()
	ran := 0
	verified := map[familyShape]bool{}
	for _, cs := range familyCases(c) {
		args := cs.Args()
		if _, err := coll.Select(&args[0], name); err != nil {
			if !errors.Is(err, coll.ErrAlgorithm) {
				t.Fatalf("%s: %v", cs, err)
			}
			continue
		}
		// a plan's shape does not depend on which op it reduces with, nor,
		// unsegmented, on the element size but for scaling
		shape := familyShape{cs.Size, cs.Count, 0, cs.Segment, cs.InPlace}
		if cs.Segment > 0 {
			shape.elem = args[0].ElemSize
		}
		if !verified[shape] {
			if err := colltest.Check(alg, cs, familySeeds[0]); err != nil {
				t.Fatal(err)
			}
			if err := familyHazards(alg, args); err != nil {
				t.Fatalf("%s %s: %v", cs, name, err)
			}
			verified[shape] = true
		}
		if err := familyPersistent(alg, cs); err != nil {
			t.Fatal(err)
		}
		ran++
	}
	if ran == 0 {
		t.Fatalf("%s %s: no case ran", c, name)
	}
}

type familyShape struct {
	size, count, elem, segment int
	inPlace                    bool
}

// familyPersistent runs alg on cs once per seed, restarting the same
// Runs on the same buffers with new inputs (UCC's set_input(i+1)), and
// compares every rank's receive buffer with the reference each time.
func familyPersistent(alg coll.Algorithm, cs colltest.Case) error {
	args := cs.Args()
	f := colltest.NewFabric(cs.Size)
	runs := make([]*coll.Run, cs.Size)
	send, recv := make([][]byte, cs.Size), make([][]byte, cs.Size)
	for start, seed := range familySeeds {
		for r := range args {
			s, rv := colltest.Buffers(args, r, seed)
			if start > 0 {
				copy(send[r], s)
				copy(recv[r], rv)
				continue
			}
			p, err := coll.Build(alg, &args[r])
			if err != nil {
				return fmt.Errorf("%s %s rank %d: %w", cs, alg.Name, r, err)
			}
			send[r], recv[r] = s, rv
			runs[r] = coll.NewRun(p, f.Transport(r), 9, nil)
			if err := runs[r].Bind(send[r], recv[r]); err != nil {
				return fmt.Errorf("%s %s rank %d: %w", cs, alg.Name, r, err)
			}
		}
		want, err := colltest.Reference(args, send, recv)
		if err != nil {
			return fmt.Errorf("%s: reference: %w", cs, err)
		}
		for r, run := range runs {
			if err := run.Start(); err != nil {
				return fmt.Errorf("%s %s start %d rank %d: %w", cs, alg.Name, start, r, err)
			}
		}
		for r, run := range runs {
			if !run.Finished() || run.Err() != nil {
				return fmt.Errorf("%s %s start %d rank %d: finished %v, %v", cs, alg.Name, start, r, run.Finished(), run.Err())
			}
			if !bytes.Equal(recv[r], want[r]) {
				return fmt.Errorf("%s %s start %d (seed %d): rank %d's receive buffer differs from the reference", cs, alg.Name, start, seed, r)
			}
		}
		if err := f.Pending(); err != nil {
			return fmt.Errorf("%s %s start %d: %w", cs, alg.Name, start, err)
		}
	}
	return nil
}

// familyHazards builds every rank's plan and checks it for data races the
// deterministic fabric cannot show: two steps that no dependency orders
// may run in either order (or at once, on a real network), so they must
// not touch overlapping bytes when either writes them. Nothing may write
// the caller's send buffer, and a reduction's operands must not overlap.
func familyHazards(alg coll.Algorithm, args []coll.Args) error {
	for r := range args {
		p, err := coll.Build(alg, &args[r])
		if err != nil {
			return err
		}
		if err := familyPlanHazards(p); err != nil {
			return fmt.Errorf("rank %d: %w", r, err)
		}
	}
	return nil
}

type familyAccess struct {
	step  int
	ref   coll.Ref
	write bool
}

func familyPlanHazards(p *coll.Plan) error {
	n := len(p.Steps)
	words := (n + 63) / 64
	// reach[i]: the steps i transitively depends on; the builder only
	// lets a step depend on earlier ones, so index order is topological
	reach := make([]uint64, n*words)
	for i := range n {
		for _, s := range p.Successors(i) {
			row := reach[int(s)*words : int(s+1)*words]
			row[i/64] |= 1 << (i % 64)
			for w, x := range reach[i*words : (i+1)*words] {
				row[w] |= x
			}
		}
	}
	ordered := func(i, j int) bool { // i < j
		return reach[j*words+i/64]&(1<<(i%64)) != 0
	}
	var acc []familyAccess
	for i, s := range p.Steps {
		if s.A.Len == 0 && s.B.Len == 0 {
			continue
		}
		switch s.Kind {
		case coll.StepSend:
			acc = append(acc, familyAccess{i, s.A, false})
		case coll.StepRecv:
			acc = append(acc, familyAccess{i, s.A, true})
		case coll.StepReduce, coll.StepCopy:
			if s.Kind == coll.StepReduce && familyOverlap(s.A, s.B) {
				return fmt.Errorf("step %d reduces %v into overlapping %v", i, s.A, s.B)
			}
			acc = append(acc, familyAccess{i, s.A, false}, familyAccess{i, s.B, true})
		}
	}
	for _, x := range acc {
		if x.write && x.ref.Buf == coll.BufSend && x.ref.Len > 0 {
			return fmt.Errorf("step %d (%s) writes the send buffer %v", x.step, p.Steps[x.step].Kind, x.ref)
		}
	}
	// sweep each buffer's accesses by offset: only those starting inside
	// x can overlap it and come after it
	slices.SortFunc(acc, func(x, y familyAccess) int {
		return cmp.Or(cmp.Compare(x.ref.Buf, y.ref.Buf), cmp.Compare(x.ref.Off, y.ref.Off))
	})
	for i, x := range acc {
		for _, y := range acc[i+1:] {
			if y.ref.Buf != x.ref.Buf || y.ref.Off >= x.ref.Off+x.ref.Len {
				break
			}
			if x.step == y.step || !x.write && !y.write || !familyOverlap(x.ref, y.ref) {
				continue
			}
			lo, hi := min(x.step, y.step), max(x.step, y.step)
			if !ordered(lo, hi) {
				return fmt.Errorf("steps %d (%s %v) and %d (%s %v) touch the same bytes unordered",
					x.step, p.Steps[x.step].Kind, x.ref, y.step, p.Steps[y.step].Kind, y.ref)
			}
		}
	}
	return nil
}

func familyOverlap(a, b coll.Ref) bool {
	return a.Buf == b.Buf && a.Len > 0 && b.Len > 0 && a.Off < b.Off+b.Len && b.Off < a.Off+a.Len
}

var familyAllreduceAlgs = []string{"recursive_doubling", "ring", "rabenseifner"}

func TestAllreduceRecursiveDoubling(t *testing.T) {
	familySweep(t, coll.Allreduce, "recursive_doubling")
}
func TestAllreduceRing(t *testing.T)         { familySweep(t, coll.Allreduce, "ring") }
func TestAllreduceRabenseifner(t *testing.T) { familySweep(t, coll.Allreduce, "rabenseifner") }

// TestAllreduceDifferential runs every applicable allreduce algorithm on
// the same inputs: with integer ops, associativity and commutativity are
// exact, so all must give bit-identical results.
func TestAllreduceDifferential(t *testing.T) {
	t.Parallel()
	for _, size := range []int{2, 3, 6, 13} {
		for _, count := range []int{1, 5, 64} {
			for _, o := range familyOps {
				if !o.op.Commutative() {
					continue // only recursive_doubling applies
				}
				for _, inPlace := range []bool{false, true} {
					cs := colltest.Case{Coll: coll.Allreduce, Size: size, Count: count, Op: o.op, Type: o.typ, InPlace: inPlace}
					if count == 64 {
						cs.Segment = 24
					}
					if n := familyDifferential(t, cs); n < len(familyAllreduceAlgs) {
						t.Fatalf("%s: only %d algorithms compared", cs, n)
					}
				}
			}
		}
	}
}

// familyDifferential runs every allreduce algorithm that applies to cs
// and fails unless all give the same bytes; it returns how many ran.
func familyDifferential(t *testing.T, cs colltest.Case) int {
	t.Helper()
	args := cs.Args()
	var first [][]byte
	var firstName string
	ran := 0
	for _, alg := range coll.Algorithms(coll.Allreduce) {
		if _, err := coll.Select(&args[0], alg.Name); err != nil {
			continue
		}
		ran++
		recv, err := familyOutputs(alg, args, 3)
		if err != nil {
			t.Fatalf("%s %s: %v", cs, alg.Name, err)
		}
		if first == nil {
			first, firstName = recv, alg.Name
			continue
		}
		for r := range recv {
			if !bytes.Equal(recv[r], first[r]) {
				t.Fatalf("%s: rank %d: %s and %s differ", cs, r, firstName, alg.Name)
			}
		}
	}
	return ran
}

// familyOutputs runs alg on fresh inputs and returns the receive buffers
// (without colltest.Verify, to keep the differential test fast; the
// sweeps verify every algorithm's plans).
func familyOutputs(alg coll.Algorithm, args []coll.Args, seed int) ([][]byte, error) {
	n := len(args)
	f := colltest.NewFabric(n)
	runs := make([]*coll.Run, n)
	recv := make([][]byte, n)
	for r := range args {
		p, err := coll.Build(alg, &args[r])
		if err != nil {
			return nil, err
		}
		var send []byte
		send, recv[r] = colltest.Buffers(args, r, seed)
		runs[r] = coll.NewRun(p, f.Transport(r), 9, nil)
		if err := runs[r].Bind(send, recv[r]); err != nil {
			return nil, err
		}
	}
	for _, run := range runs {
		if err := run.Start(); err != nil {
			return nil, err
		}
	}
	for r, run := range runs {
		if !run.Finished() || run.Err() != nil {
			return nil, fmt.Errorf("rank %d: finished %v, %v", r, run.Finished(), run.Err())
		}
	}
	return recv, f.Pending()
}

func TestAllreduceRegistered(t *testing.T) {
	for _, name := range familyAllreduceAlgs {
		familyAlg(t, coll.Allreduce, name)
	}
	familyRestricted(t, colltest.Case{Coll: coll.Allreduce, Size: 4, Count: 8, Op: colltest.Affine}, "ring", "rabenseifner")
	familyRestricted(t, colltest.Case{Coll: coll.Allreduce, Size: 4, Count: 8, Op: op.Replace}, "ring", "rabenseifner")
	// recursive doubling takes any op and size
	for _, o := range []*op.Op{colltest.Affine, op.Sum} {
		args := colltest.Case{Coll: coll.Allreduce, Size: 7, Count: 3, Op: o}.Args()
		if _, err := coll.Select(&args[0], "recursive_doubling"); err != nil {
			t.Fatal(err)
		}
	}
}

// familyRestricted checks that forcing each named algorithm on cs fails
// with ErrAlgorithm.
func familyRestricted(t *testing.T, cs colltest.Case, names ...string) {
	t.Helper()
	args := cs.Args()
	for _, name := range names {
		if _, err := coll.Select(&args[0], name); !errors.Is(err, coll.ErrAlgorithm) {
			t.Errorf("%s forced to %s: got %v, want ErrAlgorithm", cs, name, err)
		}
	}
}
