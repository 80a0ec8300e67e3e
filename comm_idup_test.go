package meshmpi

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// checkDup checks that d is a working duplicate of c: congruent, and an
// allreduce over it sums every rank.
func checkDup(c, d *Comm) error {
	if d == nil {
		return errors.New("no communicator")
	}
	if cmp, err := Compare(c, d); err != nil || cmp != Congruent {
		return fmt.Errorf("compare: %v, %v; want congruent", cmp, err)
	}
	sum := make([]int, 1)
	if err := Allreduce(d, []int{d.Rank() + 1}, sum, Sum); err != nil {
		return err
	}
	if n := d.Size(); sum[0] != n*(n+1)/2 {
		return fmt.Errorf("allreduce over the duplicate: %d, want %d", sum[0], n*(n+1)/2)
	}
	return nil
}

// Idup makes working duplicates however it overlaps with other
// collectives on the parent and with other Idups of it.
func TestIdup(t *testing.T) {
	tests := []struct {
		name string
		n    int
		fn   func(world *Comm) error
	}{
		{"wait", 3, func(world *Comm) error {
			var d *Comm
			r, err := world.Idup(&d)
			if err != nil {
				return err
			}
			if _, err := r.Wait(context.Background()); err != nil {
				return err
			}
			if err := checkDup(world, d); err != nil {
				return err
			}
			return d.Free()
		}},
		{"collectives on the parent meanwhile", 4, func(world *Comm) error {
			var d *Comm
			r, err := world.Idup(&d)
			if err != nil {
				return err
			}
			sum := make([]int, 1)
			ar, err := Iallreduce(world, []int{1}, sum, Sum)
			if err != nil {
				return err
			}
			if err := Barrier(world); err != nil {
				return err
			}
			if err := Waitall(context.Background(), []*Request{ar, r}, nil); err != nil {
				return err
			}
			if sum[0] != world.Size() {
				return fmt.Errorf("iallreduce on the parent: %d", sum[0])
			}
			if err := checkDup(world, d); err != nil {
				return err
			}
			return d.Free()
		}},
		{"several in flight, waited in reverse", 3, func(world *Comm) error {
			ds := make([]*Comm, 4)
			rs := make([]*Request, len(ds))
			for i := range ds {
				var err error
				if rs[i], err = world.Idup(&ds[i]); err != nil {
					return err
				}
			}
			for i := len(rs) - 1; i >= 0; i-- {
				if _, err := rs[i].Wait(context.Background()); err != nil {
					return err
				}
			}
			for _, d := range ds {
				if err := checkDup(world, d); err != nil {
					return err
				}
			}
			for _, d := range ds {
				if err := d.Free(); err != nil {
					return err
				}
			}
			return nil
		}},
		{"of a split, tested to completion", 4, func(world *Comm) error {
			half, err := world.Split(world.Rank()%2, 0)
			if err != nil {
				return err
			}
			var d *Comm
			r, err := half.Idup(&d)
			if err != nil {
				return err
			}
			for {
				_, ok, err := r.Test()
				if err != nil {
					return err
				}
				if ok {
					break
				}
				<-r.impl.done()
			}
			return checkDup(half, d)
		}},
		{"of an intercommunicator", 4, func(world *Comm) error {
			half, err := world.Split(world.Rank()%2, 0)
			if err != nil {
				return err
			}
			inter, err := IntercommCreate(half, 0, world, 1-world.Rank()%2, 3)
			if err != nil {
				return err
			}
			var d *Comm
			r, err := inter.Idup(&d)
			if err != nil {
				return err
			}
			if _, err := r.Wait(context.Background()); err != nil {
				return err
			}
			if !d.TestInter() || d.RemoteSize() != inter.RemoteSize() {
				return fmt.Errorf("duplicate of an intercommunicator: %v", d)
			}
			got := make([]int, 1)
			if err := Allreduce(d, []int{world.Rank()}, got, Sum); err != nil {
				return err
			}
			if want := 2 + 2*(1-world.Rank()%2); got[0] != want { // the sum of the other group's world ranks
				return fmt.Errorf("allreduce over the duplicate: %d, want %d", got[0], want)
			}
			return d.Free()
		}},
		{"staggered: rank 0 starts last", 4, func(world *Comm) error {
			// MPICH's comm/comm_idup: Idup must not block its caller
			half, err := world.Split(world.Rank()%2, 0)
			if err != nil {
				return err
			}
			inter, err := IntercommCreate(half, 0, world, 1-world.Rank()%2, 5)
			if err != nil {
				return err
			}
			for _, c := range []*Comm{world, inter} {
				var d *Comm
				var r *Request
				var err error
				if c.Rank() == 0 {
					for i := 1; i < c.Size(); i++ {
						if _, err := Recv(c, make([]int, 1), i, 0); err != nil {
							return err
						}
					}
					if r, err = c.Idup(&d); err != nil {
						return err
					}
				} else {
					if r, err = c.Idup(&d); err != nil {
						return err
					}
					if err := Ssend(c, []int{1}, 0, 0); err != nil {
						return err
					}
				}
				if _, err := r.Wait(context.Background()); err != nil {
					return err
				}
				if err := Barrier(d); err != nil {
					return err
				}
				if err := d.Free(); err != nil {
					return err
				}
			}
			return nil
		}},
		{"blocking constructions meanwhile", 4, func(world *Comm) error {
			// MPICH's comm/comm_idup_comm: the caller makes communicators
			// of the parent while its Idups are in flight
			ds := make([]*Comm, 3)
			rs := make([]*Request, len(ds))
			for i := range ds {
				var err error
				if rs[i], err = world.Idup(&ds[i]); err != nil {
					return err
				}
			}
			dup, err := world.Dup()
			if err != nil {
				return err
			}
			split, err := world.Split(world.Rank()%2, 0)
			if err != nil {
				return err
			}
			wg, err := world.Group()
			if err != nil {
				return err
			}
			evens, err := wg.Incl([]int{0, 2})
			if err != nil {
				return err
			}
			var byGroup *Comm
			if world.Rank()%2 == 0 {
				if byGroup, err = world.CreateGroup(evens, 0); err != nil {
					return err
				}
			}
			if err := Waitall(context.Background(), rs, nil); err != nil {
				return err
			}
			for _, c := range append(ds, dup, split, byGroup) {
				if c == nil {
					continue
				}
				if err := Barrier(c); err != nil {
					return err
				}
				if err := c.Free(); err != nil {
					return err
				}
			}
			return nil
		}},
		{"bad arguments", 2, func(world *Comm) error {
			if _, err := world.Idup(nil); !errors.Is(err, ErrArg) {
				return fmt.Errorf("nil newcomm: %v", err)
			}
			var d *Comm
			r, err := world.Idup(&d)
			if err != nil {
				return err
			}
			if err := r.Cancel(); !errors.Is(err, ErrRequest) && err != nil {
				return fmt.Errorf("cancel: %v", err)
			}
			if _, err := r.Wait(context.Background()); err != nil {
				return err
			}
			return d.Free()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := Run(tt.n, tt.fn); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A member that failed makes the others' Idup complete with an error
// instead of never.
func TestIdupFailedMember(t *testing.T) {
	const n = 3
	for _, victim := range []int{0, 1} {
		t.Run(fmt.Sprintf("rank %d fails", victim), func(t *testing.T) { idupFailed(t, n, victim) })
	}
}

func idupFailed(t *testing.T, n, victim int) {
	_ = Run(n, func(world *Comm) error {
		if world.Rank() == victim {
			kill(world)
			return errKilled
		}
		var d *Comm
		r, err := world.Idup(&d)
		if err != nil {
			return nil // failing at once is fine too
		}
		if _, err := r.Wait(context.Background()); err == nil {
			t.Errorf("rank %d: Idup with failed rank %d gave %v, no error", world.Rank(), victim, d)
		}
		return nil
	}, KeepGoing())
}
