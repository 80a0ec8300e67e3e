package meshmpi

import (
	"errors"
	"testing"

	"github.com/meshmpi/meshmpi/peer"
)

// WithUnexpectedLimit reaches every rank's endpoint; without it a rank
// has the target's default; a limit that is not positive is ErrArg.
func TestWithUnexpectedLimit(t *testing.T) {
	for _, tc := range []struct {
		opts []Option
		want int64
	}{
		{nil, peer.DefaultUnexpectedLimit},
		{[]Option{WithUnexpectedLimit(3 << 20)}, 3 << 20},
	} {
		err := Run(2, func(w *Comm) error {
			if got := w.p.ep.Stats().UnexpectedLimit; got != tc.want {
				return errors.New("rank's unexpected-message limit is not the configured one")
			}
			return nil
		}, tc.opts...)
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, bad := range []int64{0, -1} {
		if err := Run(1, func(*Comm) error { return nil }, WithUnexpectedLimit(bad)); !errors.Is(err, ErrArg) {
			t.Fatalf("WithUnexpectedLimit(%d): %v, want ErrArg", bad, err)
		}
	}
}
