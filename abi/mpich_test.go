//go:build cgo

package abi_test

import (
	"fmt"
	"testing"
)

// TestMPICHCases runs testdata/mpich.c: the cases where MPICH's own test
// programs (test/mpi) found the binding wrong or missing a call, on 1 to
// 4 ranks.
func TestMPICHCases(t *testing.T) {
	ts := setup(t)
	bin := compile(t, ts, "mpich", "testdata/mpich.c", "")
	for _, n := range []int{0, 2, 3, 4} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			expectOK(t, runJob(t, ts, n, bin), "mpich ok")
		})
	}
}

// TestMPICHCases2 runs testdata/mpich2.c, the cases of issue 19's second
// round (communicator creation by group, Comm_idup, intercommunicator
// collectives, Isendrecv, send cancel), on 1 to 4 ranks.
func TestMPICHCases2(t *testing.T) {
	ts := setup(t)
	bin := compile(t, ts, "mpich2", "testdata/mpich2.c", "")
	for _, n := range []int{0, 2, 3, 4} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			expectOK(t, runJob(t, ts, n, bin), "mpich2 ok")
		})
	}
}
