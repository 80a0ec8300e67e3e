//go:build cgo

package abi_test

import "testing"

// TestBsendCancel runs testdata/bsendcancel.c on two ranks: MPI_Cancel of
// an MPI_Ibsend and of a started MPI_Bsend_init withdraws the buffered
// send while the receiver has not matched it, and gives its space back;
// a matched one completes uncancelled; a freed pending Ibsend is
// delivered.
func TestBsendCancel(t *testing.T) {
	ts := setup(t)
	bin := compile(t, ts, "bsendcancel", "testdata/bsendcancel.c", "")
	expectOK(t, runJob(t, ts, 2, bin), "bsendcancel ok")
}
