package coll_test

import (
	"testing"

	"github.com/meshmpi/meshmpi/coll"
	"github.com/meshmpi/meshmpi/op"
)

// What the sweeps of the algorithm families share (all-to-all:
// allgather_test.go, alltoall_test.go; reductions: allreduce_test.go,
// reducescatter_test.go, scan_test.go; rooted: rooted_test.go,
// barrier_test.go). The checks themselves are colltest's: Check (static
// verification, a run, the reference), CheckStatic (Hazards and Segments on
// every rank's plan) and CheckPersistent.

var (
	sweepSizes  = []int{1, 2, 3, 4, 5, 7, 8, 11, 16}
	sweepCounts = []int{0, 1, 3, 7, 8, 9, 31, 33, 257}
	sweepSeeds  = []int{1, 2}
)

// collAlg names an algorithm of a collective.
type collAlg struct {
	coll coll.Coll
	name string
}

// sweepOp is an op and an element type it is defined on.
type sweepOp struct {
	op  *op.Op
	typ op.Type
}

// algorithm returns the registered algorithm name of c, failing the test if
// coll.Algorithms does not list it.
func algorithm(t *testing.T, c coll.Coll, name string) coll.Algorithm {
	t.Helper()
	for _, alg := range coll.Algorithms(c) {
		if alg.Name == name {
			return alg
		}
	}
	t.Fatalf("%s algorithm %q is not registered", c, name)
	return coll.Algorithm{}
}
