package meshmpi

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// Abort in a Run world: the calling rank's goroutine ends (its deferred
// calls run), the ranks blocked in a receive or a collective fail with
// ErrProcFailed, and Run returns the *AbortError naming the rank, the code
// and the call's place. Two ranks aborting at once give one abort.
func TestAbortRun(t *testing.T) {
	for _, tc := range []struct {
		name     string
		aborters []int
	}{
		{"one rank", []int{2}},
		{"two ranks at once", []int{1, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var deferred, failed atomic.Int32
			err := Run(4, func(w *Comm) error {
				for _, a := range tc.aborters {
					if w.Rank() == a {
						defer deferred.Add(1)
						w.Abort(3)
						t.Error("Abort returned")
					}
				}
				var err error
				if w.Rank()%2 == 0 {
					_, err = Recv(w, make([]byte, 4), AnySource, 0)
				} else {
					err = Barrier(w)
				}
				if errors.Is(err, ErrProcFailed) {
					failed.Add(1)
				}
				return err
			})
			var ae *AbortError
			require.ErrorAs(t, err, &ae)
			require.Contains(t, tc.aborters, ae.Rank)
			require.Equal(t, 3, ae.Code)
			require.Regexp(t, `^abort_test\.go:\d+$`, ae.Where)
			require.ErrorIs(t, err, ErrAborted)
			require.Regexp(t, `^rank [13] called Abort\(3\) at abort_test\.go:\d+$|^rank 2 called Abort\(3\) at abort_test\.go:\d+$`, err.Error())
			require.EqualValues(t, len(tc.aborters), deferred.Load(), "the aborting ranks' deferred calls ran")
			require.EqualValues(t, 4-len(tc.aborters), failed.Load(), "every other rank failed with ErrProcFailed")
		})
	}
}

func TestAbortExitStatus(t *testing.T) {
	for code, want := range map[int]int{0: 0, 3: 3, 255: 255, 256: 255, -1: 255} {
		require.Equal(t, want, exitStatus(code), "code %d", code)
	}
}
