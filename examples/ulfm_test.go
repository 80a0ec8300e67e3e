//go:build !js && !wasip1

package examples_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/meshmpi/meshmpi"
)

// An operation posted while a revocation lands can miss it: Irecv (and
// Sendrecv, Recv …) check IsRevoked before they post, and Revoke cancels
// only what is posted when it arrives, so a receive posted in between is
// never cancelled and, with nobody sending, waits forever. Rank 1 posts
// receives from rank 0 (which never sends) while rank 0 revokes; every
// one of them must fail with ErrRevoked.
func TestRevokeRacesAPost(t *testing.T) {
	stuck := 0
	for run := range 300 {
		err := meshmpi.Run(2, func(world *meshmpi.Comm) error {
			c, err := world.Dup()
			if err != nil {
				return err
			}
			if world.Rank() == 0 {
				return c.Revoke()
			}
			var reqs []*meshmpi.Request
			for !c.IsRevoked() {
				r, err := meshmpi.Irecv(c, make([]int, 1), 0, 0)
				if err != nil {
					break // posted after the revocation: refused, as it should be
				}
				reqs = append(reqs, r)
			}
			for i, r := range reqs {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				_, err := r.Wait(ctx)
				cancel()
				if errors.Is(err, context.DeadlineExceeded) {
					stuck++
					_ = r.Cancel()
					_, _ = r.Wait(context.Background())
					return fmt.Errorf("run %d: receive %d of %d, posted as the revocation landed, was never cancelled", run, i+1, len(reqs))
				}
				if !errors.Is(err, meshmpi.ErrRevoked) {
					return fmt.Errorf("run %d: receive %d: %v", run, i+1, err)
				}
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
		if stuck > 0 {
			break
		}
	}
}

// A fault-tolerant program whose survivors made different numbers of
// collective calls on the world before they learned of a failure (rank 0
// tried a Barrier that the failure broke, ranks 1 and 2 called none)
// recovers on the shrunk world and ends; Finalize, a fault-tolerant
// barrier, must not fail it, whether the world was revoked or not.
func TestFinalizeAfterABrokenCollective(t *testing.T) {
	for _, revoke := range []bool{false, true} {
		t.Run(fmt.Sprintf("revoked=%v", revoke), func(t *testing.T) {
			err := meshmpi.Run(4, func(world *meshmpi.Comm) error {
				if world.Rank() == 3 {
					return errors.New("down")
				}
				if world.Rank() == 0 {
					if err := meshmpi.Barrier(world); !errors.Is(err, meshmpi.ErrProcFailed) {
						return fmt.Errorf("barrier with a failed member: %v", err)
					}
					if revoke {
						if err := world.Revoke(); err != nil {
							return err
						}
					}
				}
				small, err := world.Shrink()
				if err != nil {
					return err
				}
				if err := meshmpi.Barrier(small); err != nil {
					return err
				}
				return small.Free()
			}, meshmpi.KeepGoing(), meshmpi.WithTimeout(time.Minute))
			if err == nil || err.Error() != "rank 3: down" {
				t.Errorf("want only rank 3's error, got: %v", err)
			}
		})
	}
}

// A message that arrives on a revoked communicator (in flight when it
// was revoked) stays in its receiver's queue of unexpected messages;
// once the communicator is freed, a later one (here Shrink's) can get the
// same context id, and the stale message matches its receives. Rank 0
// sends on c while rank 1 revokes it; everyone frees c and shrinks the
// world; rank 0 never sends on the new communicator, so nothing may be
// there for rank 1 to probe.
func TestStaleMessageOnAReusedContext(t *testing.T) {
	for run := range 200 {
		err := meshmpi.Run(2, func(world *meshmpi.Comm) error {
			c, err := world.Dup()
			if err != nil {
				return err
			}
			if world.Rank() == 0 {
				for {
					if err := meshmpi.Send(c, []int{42}, 1, 5); err != nil {
						break // revoked
					}
				}
			} else if err := c.Revoke(); err != nil {
				return err
			}
			if err := meshmpi.Barrier(world); err != nil {
				return err
			}
			if err := c.Free(); err != nil {
				return err
			}
			d, err := world.Shrink()
			if err != nil {
				return err
			}
			defer d.Free()
			if world.Rank() == 1 {
				if _, found, err := d.Iprobe(0, 5); found || err != nil {
					return fmt.Errorf("run %d: a message on the new communicator, sent on a revoked and freed one (err %v)", run, err)
				}
			}
			return meshmpi.Barrier(d)
		}, meshmpi.WithTimeout(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
	}
}
