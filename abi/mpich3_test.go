//go:build cgo

package abi_test

import (
	"fmt"
	"testing"
)

// TestMPICHCases3 runs testdata/mpich3.c, the cases of issue 19's third
// round (generalized requests, MPI_Bsend_init, MPI_Buffer_iflush,
// MPI_Intercomm_create_from_groups, MPI_Dims_create), on 1 to 4 ranks.
func TestMPICHCases3(t *testing.T) {
	ts := setup(t)
	bin := compile(t, ts, "mpich3", "testdata/mpich3.c", "")
	for _, n := range []int{0, 2, 3, 4} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			expectOK(t, runJob(t, ts, n, bin), "mpich3 ok")
		})
	}
}
