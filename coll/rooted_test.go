package coll_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/meshmpi/meshmpi/coll"
	"github.com/meshmpi/meshmpi/coll/colltest"
	"github.com/meshmpi/meshmpi/op"
)

// rootedAlgs lists the algorithms of the sweep of the rooted collectives:
// bcast, gather(v), scatter(v), reduce.
var rootedAlgs = []collAlg{
	{coll.Bcast, "binomial"}, {coll.Bcast, "scatter_allgather"},
	{coll.Gather, "binomial"}, {coll.Gatherv, "linear"},
	{coll.Scatter, "binomial"}, {coll.Scatterv, "linear"},
	{coll.Reduce, "binomial"}, {coll.Reduce, "rabenseifner"},
}

// rootedOps holds every predefined op on a type where it is defined, and
// the non-commutative colltest.Affine; Replace and NoOp are not commutative
// either (their rank-order fold is x0 and x_{n-1}).
var rootedOps = []sweepOp{
	{op.Sum, op.Int64}, {op.Prod, op.Int32}, {op.Max, op.Int32}, {op.Min, op.Int64},
	{op.Land, op.Int32}, {op.Lor, op.Int64}, {op.Lxor, op.Int32},
	{op.Band, op.Int64}, {op.Bor, op.Int32}, {op.Bxor, op.Int64},
	{op.Replace, op.Int32}, {op.NoOp, op.Int64},
	{op.MaxLoc, op.LocInt64}, {op.MinLoc, op.LocInt64},
	{colltest.Affine, op.Uint64},
}

// rootedRoots returns the roots the sweep tries on n ranks: the first, the
// middle and the last.
func rootedRoots(n int) []int {
	roots := []int{0}
	for _, r := range []int{n / 2, n - 1} {
		if r != roots[len(roots)-1] {
			roots = append(roots, r)
		}
	}
	return roots
}

// rootedCases returns the sweep of c on n ranks: every count and root, in
// place and not, a small Segment on some counts (forcing many messages;
// larger on 257, as the verifier is quadratic in a plan's steps). A
// reduction runs every count with Sum and Affine and every op on a few.
func rootedCases(c coll.Coll, n int) []colltest.Case {
	var cases []colltest.Case
	for _, count := range sweepCounts {
		ops := []sweepOp{{}}
		if c == coll.Reduce {
			ops = []sweepOp{rootedOps[0], rootedOps[len(rootedOps)-1]}
			if count == 1 || count == 9 || count == 33 {
				ops = rootedOps
			}
		}
		for _, o := range ops {
			for _, root := range rootedRoots(n) {
				for _, inPlace := range []bool{false, true} {
					if inPlace && c == coll.Bcast {
						continue // bcast has no in place
					}
					cs := colltest.Case{Coll: c, Size: n, Count: count, Root: root, Op: o.op, Type: o.typ, InPlace: inPlace}
					cases = append(cases, cs)
					if (count == 9 || count == 33 || count == 257) && (o.op == nil || o.op == op.Sum || o.op == colltest.Affine) {
						switch count {
						case 9:
							cs.Segment = 5 // less than an element: one element a message
						case 33:
							cs.Segment = 16 // two 8-byte elements
						case 257:
							cs.Segment = 8*24 + 5 // 24 elements, the 5 rounded away
						}
						cases = append(cases, cs)
					}
				}
			}
		}
	}
	return cases
}

// TestRooted checks every algorithm of the sweep on every case whose
// restrictions hold, against the reference, with two seeds, and every
// rank's plan statically (rootedStatic).
func TestRooted(t *testing.T) {
	for _, ra := range rootedAlgs {
		alg := algorithm(t, ra.coll, ra.name)
		for _, n := range sweepSizes {
			t.Run(fmt.Sprintf("%s/%s/n=%d", ra.coll, ra.name, n), func(t *testing.T) {
				t.Parallel()
				ran := 0
				for _, cs := range rootedCases(ra.coll, n) {
					args := cs.Args()
					if _, err := coll.Select(&args[cs.Root], ra.name); err != nil {
						if !errors.Is(err, coll.ErrAlgorithm) || ra.name != "rabenseifner" || cs.Op.Commutative() {
							t.Fatalf("%s: %v", cs, err)
						}
						continue
					}
					for _, seed := range sweepSeeds {
						if err := colltest.Check(alg, cs, seed); err != nil {
							t.Fatal(err)
						}
					}
					if err := rootedStatic(alg, args); err != nil {
						t.Fatalf("%s %s: %v", cs, ra.name, err)
					}
					ran++
				}
				if ran == 0 {
					t.Fatal("no case ran")
				}
			})
		}
	}
}

// rootedStatic checks every rank's plan with colltest.CheckStatic (no
// message exceeds the segment bound; nothing writes the send buffer; no two
// steps that dependencies leave unordered touch the same bytes while one of
// them writes), and that only the buffers MPI lets a rank use are touched:
// a non-root has no receive buffer in gather and reduce and no send buffer
// in scatter; in place, the root's send buffer is not there, or, for
// scatter, its receive buffer.
func rootedStatic(alg coll.Algorithm, args []coll.Args) error {
	plans, err := colltest.CheckStatic(alg, args)
	if err != nil {
		return err
	}
	for r, p := range plans {
		a := &args[r]
		isRoot := r == a.Root
		noRecv := !isRoot && (a.Coll == coll.Gather || a.Coll == coll.Gatherv || a.Coll == coll.Reduce) ||
			isRoot && a.InPlace && (a.Coll == coll.Scatter || a.Coll == coll.Scatterv)
		noSend := a.Coll == coll.Bcast || !isRoot && (a.Coll == coll.Scatter || a.Coll == coll.Scatterv) ||
			isRoot && a.InPlace && a.Coll != coll.Scatter && a.Coll != coll.Scatterv
		if noRecv && p.Need[coll.BufRecv] > 0 || noSend && p.Need[coll.BufSend] > 0 {
			return fmt.Errorf("rank %d (root %d, in place %v) uses %d bytes of its send and %d of its receive buffer",
				r, a.Root, a.InPlace, p.Need[coll.BufSend], p.Need[coll.BufRecv])
		}
	}
	return nil
}

// TestRootedRegistered checks that every algorithm of the sweep is listed,
// and that forcing one whose restrictions fail is ErrAlgorithm.
func TestRootedRegistered(t *testing.T) {
	for _, ra := range rootedAlgs {
		algorithm(t, ra.coll, ra.name)
	}
	for _, o := range []*op.Op{colltest.Affine, op.Replace, op.NoOp} {
		cs := colltest.Case{Coll: coll.Reduce, Size: 6, Count: 64, Root: 2, Op: o}
		args := cs.Args()
		if _, err := coll.Select(&args[2], "rabenseifner"); !errors.Is(err, coll.ErrAlgorithm) {
			t.Errorf("%s forced to rabenseifner: got %v, want ErrAlgorithm", cs, err)
		}
		// the default rules fall back to the order-preserving tree, even
		// for vectors too large for it
		args[2].Count = 1 << 20
		if alg, err := coll.Select(&args[2], ""); err != nil || alg.Name != "binomial" {
			t.Errorf("%s, 1 Mi elements: selected %q (%v), want binomial", cs, alg.Name, err)
		}
	}
	for _, ra := range rootedAlgs {
		args := colltest.Case{Coll: ra.coll, Size: 4, Count: 4}.Args()
		if _, err := coll.Select(&args[0], "no_such_algorithm"); !errors.Is(err, coll.ErrAlgorithm) {
			t.Errorf("%s forced to an unknown algorithm: got %v, want ErrAlgorithm", ra.coll, err)
		}
	}
}

// TestRootedPersistent starts each algorithm's runs several times on the
// same bound buffers, with new inputs before every start (UCC's
// set_input(i+1)): a plan that relied on scratch or receive buffers left
// from the previous start would show.
func TestRootedPersistent(t *testing.T) {
	for _, ra := range rootedAlgs {
		alg := algorithm(t, ra.coll, ra.name)
		for _, inPlace := range []bool{false, true} {
			cs := colltest.Case{Coll: ra.coll, Size: 7, Count: 33, Root: 3, Segment: 16, InPlace: inPlace && ra.coll != coll.Bcast}
			if ra.coll == coll.Reduce {
				cs.Op, cs.Type = op.Sum, op.Int64
			}
			if err := colltest.CheckPersistent(alg, cs, 3); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestRootedLarge runs each algorithm on larger groups than the sweep,
// where the trees are deeper and most subtrees are cut by n, and on a
// larger vector in many segments.
func TestRootedLarge(t *testing.T) {
	for _, ra := range rootedAlgs {
		alg := algorithm(t, ra.coll, ra.name)
		cs := colltest.Case{Coll: ra.coll, Size: 13, Count: 1000, Root: 6, Segment: 8 * 100}
		if err := colltest.Check(alg, cs, 3); err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{33, 64} {
			cs := colltest.Case{Coll: ra.coll, Size: n, Count: 5, Root: n - 3, InPlace: ra.coll != coll.Bcast}
			if err := colltest.Check(alg, cs, 1); err != nil {
				t.Fatal(err)
			}
			cs.Count, cs.Root, cs.InPlace, cs.Segment = 70, n/2+1, false, 8*16
			if err := colltest.Check(alg, cs, 2); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// Ranks that share cores broadcast on the tree at every size, and only
// they: selection by the Oversubscribed input.
func TestBcastSelectOversubscribed(t *testing.T) {
	for _, tc := range []struct {
		over  bool
		count int
		want  string
	}{
		{false, 8, "binomial"},
		{false, 64 << 10, "scatter_allgather"},
		{true, 64 << 10, "binomial"},
		{true, 1 << 20, "binomial"},
	} {
		args := colltest.Case{Coll: coll.Bcast, Size: 8, Count: tc.count, Type: op.Uint8}.Args()
		a := args[3]
		a.Oversubscribed = tc.over
		alg, err := coll.Select(&a, "")
		if err != nil || alg.Name != tc.want {
			t.Errorf("oversubscribed %v, %d bytes: got %q (%v), want %q", tc.over, tc.count, alg.Name, err, tc.want)
		}
	}
}
