package coll_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/meshmpi/meshmpi/coll"
	"github.com/meshmpi/meshmpi/coll/colltest"
	"github.com/meshmpi/meshmpi/op"
)

// familyOps holds every predefined op on a type where it is defined, and
// the non-commutative colltest.Affine. Replace and NoOp are not
// commutative either: their fold is x0 and x_{n-1}.
var familyOps = []sweepOp{
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
	for _, size := range sweepSizes {
		for _, count := range sweepCounts {
			ops := []sweepOp{familyOps[0], familyOps[len(familyOps)-1]} // Sum, Affine
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

// familySweep checks alg on every case of the sweep whose restrictions
// hold: colltest.Check (static verification, a run, the reference) and
// colltest.CheckStatic (hazards, message sizes) once per plan shape, then a
// persistent run of every seed on the same Runs and buffers, the inputs
// changed between starts (UCC's set_input(i+1)).
func familySweep(t *testing.T, c coll.Coll, name string) {
	t.Helper()
	alg := algorithm(t, c, name)
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
			if err := colltest.Check(alg, cs, sweepSeeds[0]); err != nil {
				t.Fatal(err)
			}
			if _, err := colltest.CheckStatic(alg, args); err != nil {
				t.Fatalf("%s %s: %v", cs, name, err)
			}
			verified[shape] = true
		}
		// CheckPersistent seeds its starts 1, 2, …: sweepSeeds
		if err := colltest.CheckPersistent(alg, cs, len(sweepSeeds)); err != nil {
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

var familyAllreduceAlgs = []string{"recursive_doubling", "ring", "rabenseifner", "reduce_bcast"}

func TestAllreduceRecursiveDoubling(t *testing.T) {
	familySweep(t, coll.Allreduce, "recursive_doubling")
}
func TestAllreduceRing(t *testing.T)         { familySweep(t, coll.Allreduce, "ring") }
func TestAllreduceRabenseifner(t *testing.T) { familySweep(t, coll.Allreduce, "rabenseifner") }
func TestAllreduceReduceBcast(t *testing.T)  { familySweep(t, coll.Allreduce, "reduce_bcast") }

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
		algorithm(t, coll.Allreduce, name)
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

// Ranks that share cores get the allreduce with the fewest messages for
// small vectors, and only they: selection by the Oversubscribed input.
func TestAllreduceSelectOversubscribed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		over  bool
		count int
		want  string
	}{
		{false, 1, "recursive_doubling"},
		{true, 1, "reduce_bcast"},
		{true, 4 << 10, "reduce_bcast"}, // 32 KiB of int64
		{true, 1 << 17, "rabenseifner"}, // 1 MiB
		{false, 1 << 17, "rabenseifner"},
	} {
		args := colltest.Case{Coll: coll.Allreduce, Size: 8, Count: tc.count, Op: op.Sum, Type: op.Int64}.Args()
		a := args[3]
		a.Oversubscribed = tc.over
		alg, err := coll.Select(&a, "")
		if err != nil || alg.Name != tc.want {
			t.Errorf("oversubscribed %v, %d elements: got %q (%v), want %q", tc.over, tc.count, alg.Name, err, tc.want)
		}
	}
}
