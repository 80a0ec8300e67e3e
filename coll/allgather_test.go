package coll_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/meshmpi/meshmpi/coll"
	"github.com/meshmpi/meshmpi/coll/colltest"
	"github.com/meshmpi/meshmpi/op"
)

// Shared by allgather_test.go and alltoall_test.go: the all-to-all family's
// sweep (sweepSizes × sweepCounts, then segmented cases), with every case's
// plans also checked statically (colltest.CheckStatic: no two unordered steps
// touch the same bytes unless both only read; messages respect Segment).

// a2aCases is the sweep of one collective: every size × count × in place,
// then segmented cases with 1-, 4-, 8- and 16-byte elements (a 16-byte
// element under an 8-byte Segment must still travel whole; 12 bytes of
// 8-byte elements is one element).
func a2aCases(c coll.Coll) []colltest.Case {
	var cs []colltest.Case
	for _, n := range sweepSizes {
		for _, count := range sweepCounts {
			for _, inPlace := range []bool{false, true} {
				cs = append(cs, colltest.Case{Coll: c, Size: n, Count: count, InPlace: inPlace})
			}
		}
	}
	// colltest.Verify is quadratic in a plan's steps, so the many-piece
	// cases stay on small groups
	for _, inPlace := range []bool{false, true} {
		cs = append(cs, colltest.Case{Coll: c, Size: 2, Count: 257, InPlace: inPlace, Segment: 16})
		for _, n := range []int{1, 3, 5} {
			cs = append(cs,
				colltest.Case{Coll: c, Size: n, Count: 33, InPlace: inPlace, Segment: 8},
				colltest.Case{Coll: c, Size: n, Count: 31, InPlace: inPlace, Segment: 3, Type: op.Int8},
				colltest.Case{Coll: c, Size: n, Count: 9, InPlace: inPlace, Segment: 8, Type: op.LocInt64})
		}
		for _, n := range []int{3, 8, 11} {
			cs = append(cs,
				colltest.Case{Coll: c, Size: n, Count: 7, InPlace: inPlace, Segment: 12, Type: op.Int32},
				colltest.Case{Coll: c, Size: n, Count: 7, InPlace: inPlace, Segment: 12})
		}
	}
	return cs
}

// a2aSweep runs the algorithm over the collective's sweep with every seed,
// and checks every case's plans statically; the test runs in parallel.
func a2aSweep(t *testing.T, c coll.Coll, name string) {
	t.Helper()
	t.Parallel()
	alg := algorithm(t, c, name)
	for _, cs := range a2aCases(c) {
		for _, seed := range sweepSeeds {
			if err := colltest.Check(alg, cs, seed); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := colltest.CheckStatic(alg, cs.Args()); err != nil {
			t.Fatalf("%s %s: %v", cs, name, err)
		}
	}
}

// a2aPersistent restarts each algorithm's Runs (one plan and one scratch
// area per rank) three times over one fabric with fresh inputs, as a
// persistent collective does: a plan relying on scratch left over from the
// previous start, or on its initial contents, fails here. The test runs in
// parallel.
func a2aPersistent(t *testing.T, algs ...collAlg) {
	t.Helper()
	t.Parallel()
	for _, x := range algs {
		alg := algorithm(t, x.coll, x.name)
		for _, n := range []int{1, 5, 6, 8} {
			for _, inPlace := range []bool{false, true} {
				for _, cs := range []colltest.Case{
					{Coll: x.coll, Size: n, Count: 9, InPlace: inPlace},
					{Coll: x.coll, Size: n, Count: 33, InPlace: inPlace, Segment: 16},
				} {
					if err := colltest.CheckPersistent(alg, cs, 3); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
}

func TestAllgatherRing(t *testing.T)              { a2aSweep(t, coll.Allgather, "ring") }
func TestAllgathervRing(t *testing.T)             { a2aSweep(t, coll.Allgatherv, "ring") }
func TestAllgatherBruck(t *testing.T)             { a2aSweep(t, coll.Allgather, "bruck") }
func TestAllgatherRecursiveDoubling(t *testing.T) { a2aSweep(t, coll.Allgather, "recursive_doubling") }
func TestAllgatherGatherBcast(t *testing.T)       { a2aSweep(t, coll.Allgather, "gather_bcast") }

// TestAllgatherPersistent restarts each algorithm's runs with new inputs.
func TestAllgatherPersistent(t *testing.T) {
	a2aPersistent(t, collAlg{coll.Allgather, "ring"}, collAlg{coll.Allgather, "bruck"},
		collAlg{coll.Allgather, "recursive_doubling"}, collAlg{coll.Allgather, "gather_bcast"},
		collAlg{coll.Allgatherv, "ring"})
}

// TestAllgatherSelect checks the registrations: every algorithm is listed,
// none has restrictions (each handles any size and in place), a name that
// is not registered is ErrAlgorithm, and the default rules pick one of
// them for every size and message size.
func TestAllgatherSelect(t *testing.T) {
	t.Parallel()
	a2aSelect(t, coll.Allgather, []string{"bruck", "gather_bcast", "recursive_doubling", "ring"})
	a2aSelect(t, coll.Allgatherv, []string{"ring"})
}

func a2aSelect(t *testing.T, c coll.Coll, names []string) {
	t.Helper()
	for _, name := range names {
		if alg := algorithm(t, c, name); alg.Requires != 0 || alg.Desc == "" {
			t.Errorf("%s %s: Requires %b, Desc %q", c, name, alg.Requires, alg.Desc)
		}
	}
	for _, n := range []int{1, 2, 3, 6, 16, 17} {
		for _, count := range []int{0, 1, 100, 100000} {
			for _, inPlace := range []bool{false, true} {
				args := colltest.Case{Coll: c, Size: n, Count: count, InPlace: inPlace}.Args()
				a := args[n-1]
				for _, name := range names {
					if _, err := coll.Select(&a, name); err != nil {
						t.Errorf("%s n=%d count=%d in place=%v: forcing %s: %v", c, n, count, inPlace, name, err)
					}
				}
				alg, err := coll.Select(&a, "")
				if err != nil || !slices.Contains(names, alg.Name) {
					t.Errorf("%s n=%d count=%d: default %q, %v", c, n, count, alg.Name, err)
				}
				if _, err := coll.Select(&a, "no_such_algorithm"); !errors.Is(err, coll.ErrAlgorithm) {
					t.Errorf("%s: forcing an unknown algorithm: %v", c, err)
				}
			}
		}
	}
}

// Ranks that share cores get the allgather with the fewest messages for
// small blocks, and only they: selection by the Oversubscribed input.
func TestAllgatherSelectOversubscribed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		over        bool
		size, count int
		want        string
	}{
		{false, 8, 1, "recursive_doubling"},
		{true, 8, 1, "gather_bcast"},
		{true, 5, 32, "gather_bcast"}, // 256 B of int64
		{true, 8, 33, "recursive_doubling"},
		{true, 5, 1 << 17, "ring"}, // 1 MiB
	} {
		args := colltest.Case{Coll: coll.Allgather, Size: tc.size, Count: tc.count}.Args()
		a := args[tc.size-1]
		a.Oversubscribed = tc.over
		alg, err := coll.Select(&a, "")
		if err != nil || alg.Name != tc.want {
			t.Errorf("oversubscribed %v, %d ranks, %d elements: got %q (%v), want %q", tc.over, tc.size, tc.count, alg.Name, err, tc.want)
		}
	}
}
