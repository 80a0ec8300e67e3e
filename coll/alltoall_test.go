package coll_test

import (
	"testing"

	"github.com/meshmpi/meshmpi/coll"
)

// The helpers (a2aSweep, a2aPersistent, a2aSelect) are in allgather_test.go.

func TestAlltoallPairwise(t *testing.T)    { a2aSweep(t, coll.Alltoall, "pairwise") }
func TestAlltoallBruck(t *testing.T)       { a2aSweep(t, coll.Alltoall, "bruck") }
func TestAlltoallLinear(t *testing.T)      { a2aSweep(t, coll.Alltoall, "linear") }
func TestAlltoallGatherBcast(t *testing.T) { a2aSweep(t, coll.Alltoall, "gather_bcast") }
func TestAlltoallvPairwise(t *testing.T)   { a2aSweep(t, coll.Alltoallv, "pairwise") }

// TestAlltoallPersistent restarts each algorithm's runs with new inputs.
func TestAlltoallPersistent(t *testing.T) {
	a2aPersistent(t, collAlg{coll.Alltoall, "pairwise"}, collAlg{coll.Alltoall, "bruck"}, collAlg{coll.Alltoall, "linear"}, collAlg{coll.Alltoall, "gather_bcast"}, collAlg{coll.Alltoallv, "pairwise"})
}

// TestAlltoallSelect checks the registrations and the default rules (see
// a2aSelect).
func TestAlltoallSelect(t *testing.T) {
	t.Parallel()
	a2aSelect(t, coll.Alltoall, []string{"bruck", "gather_bcast", "linear", "pairwise"})
	a2aSelect(t, coll.Alltoallv, []string{"pairwise"})
}
