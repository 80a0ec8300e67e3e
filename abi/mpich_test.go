//go:build cgo

package abi_test

import (
	"fmt"
	"testing"
)

// TestMPICHCases runs the cases where MPICH's own test programs
// (test/mpi) found the binding wrong or missing a call, on 1 to 4 ranks:
// testdata/mpich.c, then each later round's file — mpich2.c (communicator
// creation by group, Comm_idup, intercommunicator collectives,
// Isendrecv, send cancel) and mpich3.c (generalized requests,
// MPI_Bsend_init, MPI_Buffer_iflush, MPI_Intercomm_create_from_groups,
// MPI_Dims_create) and mpich4.c (datatypes: the removed MPI-1 calls,
// negative extents, the pair types' typemaps, long double's alignment).
func TestMPICHCases(t *testing.T) {
	ts := setup(t)
	for _, name := range []string{"mpich", "mpich2", "mpich3", "mpich4"} {
		t.Run(name, func(t *testing.T) {
			bin := compile(t, ts, name, "testdata/"+name+".c", "")
			for _, n := range []int{0, 2, 3, 4} {
				t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
					expectOK(t, runJob(t, ts, n, bin), name+" ok")
				})
			}
		})
	}
}
