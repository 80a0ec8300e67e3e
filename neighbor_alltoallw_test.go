package meshmpi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/meshmpi/meshmpi/op"
)

// NeighborAlltoallw with a packed receive side: every receive block is a
// vector of 2 int64s 2 apart, so the elements between stay untouched, as
// do the blocks of ProcNull neighbors; sends are contiguous blocks. All
// three forms on grids and graphs, against the naive reference.
func TestNeighborAlltoallw(t *testing.T) {
	i64 := DatatypeOf[int64]()
	vec, err := Vector(2, 1, 2, i64)
	if err != nil {
		t.Fatal(err)
	}
	if err := vec.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 3, 4} {
		for _, s := range specs(n) {
			t.Run(fmt.Sprintf("n=%d/%s", n, s.name), func(t *testing.T) {
				world(t, n, func(w *Comm) error {
					topo, err := s.make(w)
					if err != nil || topo == nil {
						return err
					}
					r := topo.Rank()
					in, out := len(s.src[r]), len(s.dst[r])
					var errs []error
					for _, f := range forms {
						for start := range 3 {
							seed := 10 + start
							send := make([]int64, 2*out)
							var sc, sd, rc, rd []int
							var st, rt []*Datatype
							for j := range out {
								send[2*j], send[2*j+1] = val(r, seed, j, 0), val(r, seed, j, 1)
								sc, sd, st = append(sc, 2), append(sd, 16*j), append(st, i64)
							}
							recv := make([]int64, 4*in)
							for e := range recv {
								recv[e] = -int64(e) - 1
							}
							want := slices.Clone(recv)
							for i, o := range s.origin[r] {
								rc, rd, rt = append(rc, 1), append(rd, 32*i), append(rt, vec)
								if o[0] >= 0 {
									want[4*i], want[4*i+2] = val(o[0], seed, o[1], 0), val(o[0], seed, o[1], 1)
								}
							}
							sb, rb := op.Bytes(send), op.Bytes(recv)
							var req *Request
							switch f.form {
							case blocking:
								err = NeighborAlltoallw(topo, sb, sc, sd, st, rb, rc, rd, rt)
							case nonblocking:
								req, err = IneighborAlltoallw(topo, sb, sc, sd, st, rb, rc, rd, rt)
							default:
								if req, err = NeighborAlltoallwInit(topo, sb, sc, sd, st, rb, rc, rd, rt); err == nil {
									err = req.Start()
								}
							}
							if err == nil && req != nil {
								_, err = req.Wait(context.Background())
							}
							if err == nil && req != nil && f.form == persistent {
								err = req.Free()
							}
							if err == nil && !slices.Equal(recv, want) {
								err = fmt.Errorf("receive buffer %v, want %v", recv, want)
							}
							if err != nil {
								errs = append(errs, fmt.Errorf("%s start %d rank %d: %w", f.name, start, r, err))
							}
						}
					}
					// misuse: too few types, a type that is not committed
					errs = append(errs, expectErr(NeighborAlltoallw(topo, nil, nil, nil, nil, nil, rc0(in), rc0(in), nil), ErrCount, "no types"))
					return errors.Join(append(errs, topo.Free())...)
				})
			})
		}
	}
	err = Run(2, func(w *Comm) error {
		return expectErr(NeighborAlltoallw(w, nil, nil, nil, nil, nil, nil, nil, nil), ErrTopology, "no topology")
	})
	if err != nil {
		t.Fatal(err)
	}
}

func rc0(n int) []int { return make([]int, n+1) }

// A persistent neighborhood collective allocates nothing per Start+Wait:
// NeighborAlltoall, NeighborAlltoallv, and NeighborAlltoallw with a packed
// side, on a 2×2 periodic grid (every neighbor repeated).
func TestPersistentNeighborZeroAlloc(t *testing.T) {
	for _, k := range []string{"alltoall", "alltoallv", "allgather", "alltoallw"} {
		world(t, 4, func(w *Comm) error {
			cart, err := w.CartCreate([]int{2, 2}, []bool{true, true}, false)
			if err != nil {
				return err
			}
			send, recv := make([]float64, 4*8), make([]float64, 4*8)
			counts, displs := []int{8, 8, 8, 8}, []int{0, 8, 16, 24}
			var r *Request
			switch k {
			case "alltoall":
				r, err = NeighborAlltoallInit(cart, send, recv)
			case "alltoallv":
				r, err = NeighborAlltoallvInit(cart, send, counts, displs, recv, counts, displs)
			case "allgather":
				r, err = NeighborAllgatherInit(cart, send[:8], recv)
			default:
				col, err := Vector(4, 1, 2, DatatypeOf[float64]()) // strided: packed
				if err == nil {
					err = col.Commit()
				}
				if err != nil {
					return err
				}
				types := []*Datatype{col, col, col, col}
				r, err = NeighborAlltoallwInit(cart, op.Bytes(send), []int{1, 1, 1, 1}, []int{0, 64, 128, 192}, types,
					op.Bytes(recv), []int{1, 1, 1, 1}, []int{0, 64, 128, 192}, types)
				if err != nil {
					return err
				}
			}
			if err != nil {
				return err
			}
			step, err := BarrierInit(cart)
			if err != nil {
				return err
			}
			return errors.Join(noAllocs(w, 500, "neighbor "+k, r, step), r.Free(), step.Free(), cart.Free())
		})
	}
}
