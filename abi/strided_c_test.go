//go:build cgo

package abi_test

import (
	"fmt"
	"testing"
)

// TestStridedC runs testdata/strided.c alone and as jobs: types past the
// flattening limit through the real crossing, rank to rank.
func TestStridedC(t *testing.T) {
	ts := setup(t)
	bin := compile(t, ts, "strided", "testdata/strided.c", "")
	for _, n := range []int{0, 2, 3} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			expectOK(t, runJob(t, ts, n, bin), "strided ok")
		})
	}
}
