package meshmpi_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/meshmpi/meshmpi"
)

// The rank that failed first is named first in Run's error, whatever its
// number: the others fail after it, because of it (issue 18).
func TestRunNamesFirstFailureFirst(t *testing.T) {
	boom := errors.New("boom")
	for _, first := range []int{0, 2, 3} {
		err := meshmpi.Run(4, func(w *meshmpi.Comm) error {
			if w.Rank() == first {
				return boom
			}
			// the others block until the abort fails them: they fail
			// after the first rank did, in time
			return meshmpi.Barrier(w)
		})
		if !errors.Is(err, boom) {
			t.Fatalf("rank %d returned boom; Run: %v", first, err)
		}
		msg := err.Error()
		want := "rank " + strconv.Itoa(first) + ": boom"
		if !strings.HasPrefix(msg, want) {
			t.Errorf("rank %d failed first; Run's error starts %q, want it to start with %q:\n%s", first, firstLine(msg), want, msg)
		}
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
