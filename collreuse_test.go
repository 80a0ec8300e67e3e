package meshmpi

import (
	"fmt"
	"testing"
)

// Communicators of one shape share plans, and a plan's idle Runs move
// between them: blocking, nonblocking and persistent collectives on two
// duplicates of the world, interleaved, each get their own data, however
// the Runs (and the transfer operations they hold) are handed around.
func TestCollectiveRunsMoveBetweenCommunicators(t *testing.T) {
	world(t, 4, func(w *Comm) error {
		a, err := w.Dup()
		if err != nil {
			return err
		}
		defer a.Free()
		b, err := w.Dup()
		if err != nil {
			return err
		}
		defer b.Free()
		pa, pb := []int64{0}, []int64{0}
		inA, inB := []int64{0}, []int64{0}
		ra, err := AllreduceInit(a, inA, pa, Sum)
		if err != nil {
			return err
		}
		defer ra.Free()
		for i := range 200 {
			r := int64(w.Rank())
			for _, c := range []struct {
				comm *Comm
				mul  int64
			}{{a, 1}, {b, 100}, {w, 10_000}} {
				got := []int64{0}
				if err := Allreduce(c.comm, []int64{c.mul * (r + int64(i))}, got, Sum); err != nil {
					return err
				}
				if want := c.mul * (6 + 4*int64(i)); got[0] != want {
					return fmt.Errorf("round %d, blocking on %s: got %d, want %d", i, c.comm, got[0], want)
				}
			}
			inB[0] = r * int64(i)
			req, err := Iallreduce(b, inB, pb, Sum)
			if err != nil {
				return err
			}
			inA[0] = r + int64(i)
			if err := ra.Start(); err != nil {
				return err
			}
			if _, err := req.Wait(t.Context()); err != nil {
				return err
			}
			if _, err := ra.Wait(t.Context()); err != nil {
				return err
			}
			if want := 6 * int64(i); pb[0] != want {
				return fmt.Errorf("round %d, nonblocking: got %d, want %d", i, pb[0], want)
			}
			if want := 6 + 4*int64(i); pa[0] != want {
				return fmt.Errorf("round %d, persistent: got %d, want %d", i, pa[0], want)
			}
		}
		return nil
	})
}
