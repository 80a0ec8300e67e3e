package coll_test

import (
	"testing"

	"github.com/meshmpi/meshmpi/coll"
	"github.com/meshmpi/meshmpi/coll/colltest"
)

// The helpers (a2aSweep, a2aPersistent, a2aSelect) are in allgather_test.go.

func TestAlltoallPairwise(t *testing.T) {
	t.Parallel()
	a2aSweep(t, coll.Alltoall, "pairwise")
}

func TestAlltoallBruck(t *testing.T) {
	t.Parallel()
	a2aSweep(t, coll.Alltoall, "bruck")
}

func TestAlltoallvPairwise(t *testing.T) {
	t.Parallel()
	a2aSweep(t, coll.Alltoallv, "pairwise")
}

// TestAlltoallPersistent restarts each algorithm's runs with new inputs.
func TestAlltoallPersistent(t *testing.T) {
	t.Parallel()
	for _, x := range []struct {
		c    coll.Coll
		name string
	}{{coll.Alltoall, "pairwise"}, {coll.Alltoall, "bruck"}, {coll.Alltoallv, "pairwise"}} {
		alg := a2aAlg(t, x.c, x.name)
		for _, n := range []int{1, 5, 6, 8} {
			for _, inPlace := range []bool{false, true} {
				a2aPersistent(t, alg, colltest.Case{Coll: x.c, Size: n, Count: 9, InPlace: inPlace})
				a2aPersistent(t, alg, colltest.Case{Coll: x.c, Size: n, Count: 33, InPlace: inPlace, Segment: 16})
			}
		}
	}
}

// TestAlltoallSelect checks the registrations and the default rules (see
// a2aSelect).
func TestAlltoallSelect(t *testing.T) {
	t.Parallel()
	a2aSelect(t, coll.Alltoall, []string{"bruck", "pairwise"})
	a2aSelect(t, coll.Alltoallv, []string{"pairwise"})
}
