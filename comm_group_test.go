package meshmpi

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
)

// CreateGroup makes a working communicator among the group's members
// only, in the group's order; the others need not call it.
func TestCreateGroup(t *testing.T) {
	const n = 4
	tests := []struct {
		name    string
		members []int // world ranks, in the new communicator's order
		tag     int
	}{
		{"evens", []int{0, 2}, 0},
		{"reversed", []int{3, 2, 1, 0}, 7},
		{"one", []int{1}, TagUB},
		{"odds by a large tag", []int{3, 1}, 1 << 30},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Run(n, func(world *Comm) error {
				wg, err := world.Group()
				if err != nil {
					return err
				}
				g, err := wg.Incl(tt.members)
				if err != nil {
					return err
				}
				me := slices.Index(tt.members, world.Rank())
				if me < 0 {
					return nil // not a member: does not call
				}
				c, err := world.CreateGroup(g, tt.tag)
				if err != nil {
					return err
				}
				if c == nil || c.Size() != len(tt.members) || c.Rank() != me {
					return fmt.Errorf("rank %d: got %v, want rank %d of %d", world.Rank(), c, me, len(tt.members))
				}
				got := make([]int, len(tt.members))
				if err := Allgather(c, []int{world.Rank()}, got); err != nil {
					return err
				}
				if !slices.Equal(got, tt.members) {
					return fmt.Errorf("allgather on the new communicator: %v, want %v", got, tt.members)
				}
				return c.Free()
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Edge arguments: an empty group and a caller outside the group get nil,
// bad arguments their error classes, and two constructions over one group
// in flight at once are told apart by their tags.
func TestCreateGroupEdges(t *testing.T) {
	const n = 3
	err := Run(n, func(world *Comm) error {
		wg, err := world.Group()
		if err != nil {
			return err
		}
		empty, err := wg.Incl(nil)
		if err != nil {
			return err
		}
		if c, err := world.CreateGroup(empty, 0); c != nil || err != nil {
			return fmt.Errorf("empty group: %v, %v", c, err)
		}
		others, err := wg.Excl([]int{world.Rank()})
		if err != nil {
			return err
		}
		if c, err := world.CreateGroup(others, 0); c != nil || err != nil {
			return fmt.Errorf("caller outside the group: %v, %v", c, err)
		}
		for _, bad := range []struct {
			g    *Group
			tag  int
			want error
		}{{nil, 0, ErrGroup}, {wg, -1, ErrTag}, {wg, TagUB + 1, ErrTag}} {
			if _, err := world.CreateGroup(bad.g, bad.tag); !errors.Is(err, bad.want) {
				return fmt.Errorf("group %v tag %d: %v, want %v", bad.g, bad.tag, err, bad.want)
			}
		}
		// two at once over the whole group, started in opposite orders
		var wgo sync.WaitGroup
		comms, errs := make([]*Comm, 2), make([]error, 2)
		for i := range 2 {
			wgo.Add(1)
			go func() {
				defer wgo.Done()
				comms[i], errs[i] = world.CreateGroup(wg, 10+i)
			}()
		}
		wgo.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		for _, c := range comms {
			sum := make([]int, 1)
			if err := Allreduce(c, []int{1}, sum, Sum); err != nil {
				return err
			}
			if sum[0] != n {
				return fmt.Errorf("allreduce over %v: %d, want %d", c, sum[0], n)
			}
			if err := c.Free(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A member that failed makes the others' CreateGroup return an error
// instead of waiting for it, whether it is the group's first member or
// not.
func TestCreateGroupFailedMember(t *testing.T) {
	const n = 4
	for _, victim := range []int{0, 2} {
		t.Run(fmt.Sprintf("rank %d fails", victim), func(t *testing.T) {
			_ = Run(n, func(world *Comm) error {
				if world.Rank() == victim {
					kill(world)
					return errKilled
				}
				wg, err := world.Group()
				if err != nil {
					return err
				}
				c, err := world.CreateGroup(wg, 5)
				if err == nil {
					t.Errorf("rank %d: CreateGroup with failed rank %d gave %v, no error", world.Rank(), victim, c)
				}
				return nil
			}, KeepGoing())
		})
	}
}
