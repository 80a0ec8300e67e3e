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
