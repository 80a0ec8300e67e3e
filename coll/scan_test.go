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
