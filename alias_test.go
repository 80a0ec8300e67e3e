package meshmpi

import (
	"errors"
	"fmt"
	"testing"
)

// A collective whose send and receive buffers share memory, and that is
// not called InPlace, fails with ErrBuffer on every rank (MPI-4.1 §2.3)
// instead of reducing or forwarding data it has already overwritten; the
// next collective works. Buffers that MPI ignores (a non-root's receive
// buffer of Reduce and Gather, a non-root's send buffer of Scatter) may
// alias.
func TestCollectiveAliasedBuffers(t *testing.T) {
	const n = 3
	calls := map[string]func(w *Comm, b []int64) error{
		"allreduce":             func(w *Comm, b []int64) error { return Allreduce(w, b[:2], b[:2], Sum) },
		"allreduce overlapping": func(w *Comm, b []int64) error { return Allreduce(w, b[:2], b[1:3], Sum) },
		"reduce":                func(w *Comm, b []int64) error { return Reduce(w, b[:2], b[:2], Sum, 0) },
		"scan":                  func(w *Comm, b []int64) error { return Scan(w, b[:2], b[:2], Sum) },
		"exscan":                func(w *Comm, b []int64) error { return Exscan(w, b[:2], b[:2], Sum) },
		"reduce_scatter_block":  func(w *Comm, b []int64) error { return ReduceScatterBlock(w, b[:n], b[:1], Sum) },
		"reduce_scatter":        func(w *Comm, b []int64) error { return ReduceScatter(w, b[:n], b[:1], []int{1, 1, 1}, Sum) },
		"allgather":             func(w *Comm, b []int64) error { return Allgather(w, b[:1], b[:n]) },
		"allgatherv": func(w *Comm, b []int64) error {
			return Allgatherv(w, b[:1], b[:n], []int{1, 1, 1}, []int{0, 1, 2})
		},
		"alltoall": func(w *Comm, b []int64) error { return Alltoall(w, b[:n], b[:n]) },
		"alltoallv": func(w *Comm, b []int64) error {
			c, d := []int{1, 1, 1}, []int{0, 1, 2}
			return Alltoallv(w, b[:n], c, d, b[:n], c, d)
		},
		"alltoallw": func(w *Comm, b []int64) error {
			c, d, ty := []int{1, 1, 1}, []int{0, 8, 16}, []*Datatype{Int64, Int64, Int64}
			buf := Bytes(b[:n])
			return Alltoallw(w, buf, c, d, ty, buf, c, d, ty)
		},
		"alltoallw packed": func(w *Comm, b []int64) error {
			v, err := Vector(2, 1, 2, Int64) // a non-contiguous side is packed
			if err == nil {
				err = v.Commit()
			}
			if err != nil {
				return err
			}
			sd, rd := []int{0, 8, 16}, []int{0, 16, 32}
			buf := Bytes(b[:2*n])
			return Alltoallw(w, buf, []int{1, 1, 1}, sd, []*Datatype{v, v, v}, buf, []int{4, 4, 4}, rd, []*Datatype{Int32, Int32, Int32})
		},
		"neighbor_alltoall": func(w *Comm, b []int64) error {
			cart, err := w.CartCreate([]int{n}, []bool{true}, false)
			if err != nil {
				return err
			}
			defer cart.Free()
			return NeighborAlltoall(cart, b[:2], b[1:3])
		},
		"neighbor_alltoallw": func(w *Comm, b []int64) error {
			cart, err := w.CartCreate([]int{n}, []bool{true}, false)
			if err != nil {
				return err
			}
			defer cart.Free()
			buf := Bytes(b[:2])
			c, d, ty := []int{1, 1}, []int{0, 8}, []*Datatype{Int64, Int64}
			return NeighborAlltoallw(cart, buf, c, d, ty, buf, c, d, ty)
		},
		"gather":  func(w *Comm, b []int64) error { return Gather(w, b[:1], b[:n], 0) },
		"scatter": func(w *Comm, b []int64) error { return Scatter(w, b[:n], b[:1], 0) },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			first, next := make([]error, n), make([]error, n)
			world(t, n, func(w *Comm) error {
				b := make([]int64, 2*n)
				first[w.Rank()] = call(w, b)
				// a rank whose own buffers MPI ignores (a non-root, rank
				// 0 of Exscan) learns of the others' refusal in this call
				// or its next one; the one after works
				next[w.Rank()] = Barrier(w)
				got := []int64{0}
				if err := Allreduce(w, []int64{int64(w.Rank())}, got, Sum); err != nil || got[0] != 3 {
					return fmt.Errorf("allreduce after aliased %s: %v %v", name, got, err)
				}
				return nil
			})
			refused := 0
			for r := range n {
				switch {
				case errors.Is(first[r], ErrBuffer):
					refused++
				case errors.Is(first[r], ErrArg) || errors.Is(next[r], ErrArg):
				default:
					t.Errorf("rank %d: aliased %s: %v, then %v; want ErrBuffer or ErrArg", r, name, first[r], next[r])
				}
			}
			if refused == 0 {
				t.Errorf("aliased %s: no rank returned ErrBuffer", name)
			}
		})
	}
}
