package coll_test

import (
	"testing"

	"github.com/meshmpi/meshmpi/coll"
	"github.com/meshmpi/meshmpi/coll/colltest"
)

func TestScanRecursiveDoubling(t *testing.T)   { familySweep(t, coll.Scan, "recursive_doubling") }
func TestExscanRecursiveDoubling(t *testing.T) { familySweep(t, coll.Exscan, "recursive_doubling") }

func TestScanRegistered(t *testing.T) {
	algorithm(t, coll.Scan, "recursive_doubling")
	algorithm(t, coll.Exscan, "recursive_doubling")
	for _, c := range []coll.Coll{coll.Scan, coll.Exscan} {
		args := colltest.Case{Coll: c, Size: 6, Count: 2, Op: colltest.Affine}.Args()
		if _, err := coll.Select(&args[0], "recursive_doubling"); err != nil {
			t.Fatal(err)
		}
		familyRestricted(t, colltest.Case{Coll: c, Size: 6, Count: 2}, "no_such_algorithm")
	}
}

func TestScanLinear(t *testing.T) { familySweep(t, coll.Scan, "linear") }

// Every piece of the linear scan lands in the result as it arrives: each
// receive fuses with its reduction, so the prefix crosses memory once.
func TestScanLinearFused(t *testing.T) {
	alg := algorithm(t, coll.Scan, "linear")
	for _, seg := range []int{0, 8, 24} {
		args := colltest.Case{Coll: coll.Scan, Size: 4, Count: 10, Segment: seg}.Args()
		for r := 1; r < 4; r++ {
			p, err := coll.Build(alg, &args[r])
			if err != nil {
				t.Fatal(err)
			}
			pieces := countKind(p, coll.StepRecvReduce) + countKind(p, coll.StepRecv)
			if fused := countKind(p, coll.StepRecvReduce); fused == 0 || fused != pieces {
				t.Errorf("segment %d, rank %d: %d of %d receives fused", seg, r, fused, pieces)
			}
		}
	}
}

// Ranks that share cores get the linear scan, and only they: selection by
// the Oversubscribed input, at every size.
func TestScanSelectOversubscribed(t *testing.T) {
	for _, tc := range []struct {
		over  bool
		count int
		want  string
	}{
		{false, 1, "recursive_doubling"},
		{true, 1, "linear"},
		{true, 1 << 17, "linear"}, // 1 MiB
		{false, 1 << 17, "recursive_doubling"},
	} {
		args := colltest.Case{Coll: coll.Scan, Size: 8, Count: tc.count}.Args()
		a := args[3]
		a.Oversubscribed = tc.over
		alg, err := coll.Select(&a, "")
		if err != nil || alg.Name != tc.want {
			t.Errorf("oversubscribed %v, %d elements: got %q (%v), want %q", tc.over, tc.count, alg.Name, err, tc.want)
		}
	}
}
