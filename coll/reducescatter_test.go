package coll_test

import (
	"testing"

	"github.com/meshmpi/meshmpi/coll"
	"github.com/meshmpi/meshmpi/coll/colltest"
	"github.com/meshmpi/meshmpi/op"
)

func TestReduceScatterBlockRecursiveHalving(t *testing.T) {
	familySweep(t, coll.ReduceScatterBlock, "recursive_halving")
}
func TestReduceScatterBlockPairwise(t *testing.T) {
	familySweep(t, coll.ReduceScatterBlock, "pairwise")
}
func TestReduceScatterPairwise(t *testing.T) { familySweep(t, coll.ReduceScatter, "pairwise") }

func TestReduceScatterRegistered(t *testing.T) {
	algorithm(t, coll.ReduceScatterBlock, "recursive_halving")
	algorithm(t, coll.ReduceScatterBlock, "pairwise")
	algorithm(t, coll.ReduceScatter, "pairwise")
	familyRestricted(t, colltest.Case{Coll: coll.ReduceScatterBlock, Size: 5, Count: 2, Op: colltest.Affine}, "recursive_halving")
	familyRestricted(t, colltest.Case{Coll: coll.ReduceScatterBlock, Size: 5, Count: 2, Op: op.NoOp}, "recursive_halving")
	// pairwise takes any op
	for _, c := range []coll.Coll{coll.ReduceScatterBlock, coll.ReduceScatter} {
		args := colltest.Case{Coll: c, Size: 5, Count: 2, Op: colltest.Affine}.Args()
		if _, err := coll.Select(&args[0], "pairwise"); err != nil {
			t.Fatal(err)
		}
	}
}

// A participant's last fold in recursive_halving lands in its receive
// buffer: the received part is reduced in as it arrives (fused), and the
// block is not reduced in scratch and copied out after. At 2 ranks
// nothing goes through scratch at all.
func TestReduceScatterBlockHalvingFinalFold(t *testing.T) {
	alg := algorithm(t, coll.ReduceScatterBlock, "recursive_halving")
	for _, size := range []int{2, 4, 5} {
		args := colltest.Case{Coll: coll.ReduceScatterBlock, Size: size, Count: 8}.Args()
		p, err := coll.Build(alg, &args[size-1]) // neither a host nor an extra
		if err != nil {
			t.Fatal(err)
		}
		final := 0
		for _, s := range p.Steps {
			if s.Kind == coll.StepRecvReduce && s.B.Buf == coll.BufRecv {
				final++
			}
			if size == 2 && s.Kind == coll.StepCopy && s.B.Buf == coll.BufRecv && s.A.Buf == coll.BufScratch {
				t.Errorf("%d ranks: the result is copied out of scratch", size)
			}
		}
		if final != 1 {
			t.Errorf("%d ranks: %d fused receives into the result, want 1", size, final)
		}
	}
}
