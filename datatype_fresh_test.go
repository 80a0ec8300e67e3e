//go:build !js && !wasip1

package meshmpi

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"slices"
	"testing"
)

// freshEnv makes the test binary run one freshPrograms entry instead of
// its tests: state a package builds lazily (a predefined datatype's
// layout, plans) starts cold there, as in a user's program, not warmed by
// the tests that ran before.
const freshEnv = "MESHMPI_TEST_FRESH"

// freshPrograms are whole programs, each the first communication of its
// process. Each returns an error if the data did not arrive intact.
var freshPrograms = map[string]func() error{
	"send-recv-typed": func() error {
		return Run(2, func(w *Comm) error {
			if w.Rank() == 0 {
				return SendTyped(w, Bytes([]int64{10, 20}), 2, Int64, 1, 5)
			}
			got := make([]int64, 2)
			st, err := RecvTyped(w, Bytes(got), 2, Int64, 0, 5)
			if err != nil {
				return err
			}
			return expect(st.Count == 2 && slices.Equal(got, []int64{10, 20}), "received %v, count %d; want [10 20], count 2", got, st.Count)
		})
	},
	"isend-irecv-typed": func() error {
		return Run(2, func(w *Comm) error {
			var (
				req *Request
				err error
			)
			got := make([]float64, 3)
			if w.Rank() == 0 {
				req, err = IsendTyped(w, Bytes([]float64{1.5, 2.5, 3.5}), 3, Float64, 1, 0)
			} else {
				req, err = IrecvTyped(w, Bytes(got), 3, Float64, 0, 0)
			}
			if err != nil {
				return err
			}
			if _, err := req.Wait(context.Background()); err != nil {
				return err
			}
			return expect(w.Rank() == 0 || slices.Equal(got, []float64{1.5, 2.5, 3.5}), "received %v", got)
		})
	},
	"persistent-typed": func() error {
		return Run(2, func(w *Comm) error {
			buf := make([]int32, 2)
			var (
				req *Request
				err error
			)
			if w.Rank() == 0 {
				req, err = SendTypedInit(w, Bytes(buf), 2, Int32, 1, 0)
			} else {
				req, err = RecvTypedInit(w, Bytes(buf), 2, Int32, 0, 0)
			}
			if err != nil {
				return err
			}
			defer req.Free()
			for i := range int32(3) {
				if w.Rank() == 0 {
					buf[0], buf[1] = i, -i
				}
				if err := req.Start(); err != nil {
					return err
				}
				if _, err := req.Wait(context.Background()); err != nil {
					return err
				}
				if w.Rank() == 1 && (buf[0] != i || buf[1] != -i) {
					return fmt.Errorf("start %d: received %v", i, buf)
				}
			}
			return nil
		})
	},
	"alltoallw": func() error {
		return Run(3, func(w *Comm) error { return freshAlltoallw(w, false) })
	},
	"alltoallw-inter": func() error {
		return Run(4, func(w *Comm) error {
			half, err := w.Split(w.Rank()%2, w.Rank())
			if err != nil {
				return err
			}
			inter, err := IntercommCreate(half, 0, w, 1-w.Rank()%2, 9)
			if err != nil {
				return err
			}
			return freshAlltoallw(inter, true)
		})
	},
	"neighbor-alltoallw": func() error {
		return Run(3, func(w *Comm) error {
			ring, err := w.CartCreate([]int{3}, []bool{true}, false)
			if err != nil {
				return err
			}
			n := 2 // left and right neighbors
			send := make([]int16, n)
			for i := range send {
				send[i] = int16(10*w.Rank() + i)
			}
			recv := make([]int16, n)
			counts, displs, types := make([]int, n), make([]int, n), make([]*Datatype, n)
			for i := range n {
				counts[i], displs[i], types[i] = 1, 2*i, Int16
			}
			if err := NeighborAlltoallw(ring, Bytes(send), counts, displs, types, Bytes(recv), counts, displs, types); err != nil {
				return err
			}
			left, right := (w.Rank()+2)%3, (w.Rank()+1)%3
			// the left neighbor's block 1 (sent right) and the right's block 0
			want := []int16{int16(10*left + 1), int16(10 * right)}
			return expect(slices.Equal(recv, want), "rank %d received %v, want %v", w.Rank(), recv, want)
		})
	},
	"maxloc-typed": func() error {
		// a pair type's datatype is built on first use (DatatypeOf)
		return Run(3, func(w *Comm) error {
			pair := []Loc[float64]{{Value: float64(w.Rank() % 2), Index: int32(w.Rank())}}
			if w.Rank() == 0 {
				if err := SendTyped(w, Bytes(pair), 1, DatatypeOf[Loc[float64]](), 1, 0); err != nil {
					return err
				}
			}
			if w.Rank() == 1 {
				got := make([]Loc[float64], 1)
				if _, err := RecvTyped(w, Bytes(got), 1, DatatypeOf[Loc[float64]](), 0, 0); err != nil {
					return err
				}
				if got[0] != (Loc[float64]{Value: 0, Index: 0}) {
					return fmt.Errorf("received %+v", got[0])
				}
			}
			out := make([]Loc[float64], 1)
			if err := Allreduce(w, pair, out, MaxLoc); err != nil {
				return err
			}
			return expect(out[0] == Loc[float64]{Value: 1, Index: 1}, "maxloc %+v, want {1 1}", out[0])
		})
	},
	"persistent-allreduce-user-op": func() error {
		// a plan and a user op's kernel, both built on first use
		max := NewOp("max", true, func(in, inout []int32) {
			for i := range in {
				inout[i] = int32(math.Max(float64(in[i]), float64(inout[i])))
			}
		})
		return Run(4, func(w *Comm) error {
			in, out := []int32{0, 0}, []int32{0, 0}
			r, err := AllreduceInit(w, in, out, max)
			if err != nil {
				return err
			}
			defer r.Free()
			for round := range int32(3) {
				in[0], in[1] = int32(w.Rank())*round, -int32(w.Rank())
				if err := r.Start(); err != nil {
					return err
				}
				if _, err := r.Wait(context.Background()); err != nil {
					return err
				}
				if out[0] != 3*round || out[1] != 0 {
					return fmt.Errorf("round %d: %v", round, out)
				}
			}
			return nil
		})
	},
}

// freshAlltoallw exchanges one int64 with every (remote) rank through
// Alltoallw on predefined types and checks what arrived.
func freshAlltoallw(c *Comm, inter bool) error {
	n := c.Size()
	if inter {
		n = c.RemoteSize()
	}
	send, recv := make([]int64, n), make([]int64, n)
	counts, displs, types := make([]int, n), make([]int, n), make([]*Datatype, n)
	for r := range n {
		send[r] = int64(100*c.Rank() + r)
		counts[r], displs[r], types[r] = 1, 8*r, Int64
	}
	if err := Alltoallw(c, Bytes(send), counts, displs, types, Bytes(recv), counts, displs, types); err != nil {
		return err
	}
	for r := range n {
		if want := int64(100*r + c.Rank()); recv[r] != want {
			return fmt.Errorf("rank %d: from %d got %d, want %d", c.Rank(), r, recv[r], want)
		}
	}
	return nil
}

// runFresh runs the fresh program named by the environment, if any, and
// exits; TestMain calls it first.
func runFresh() {
	name := os.Getenv(freshEnv)
	if name == "" {
		return
	}
	prog, ok := freshPrograms[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "no fresh program %q\n", name)
		os.Exit(2)
	}
	if err := prog(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Predefined datatypes carry their data when they are the first typed
// communication of a process: each program runs in a child of the test
// binary, where no earlier test committed a derived type over them.
func TestPredefinedTypesFreshProcess(t *testing.T) {
	for name := range freshPrograms {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), freshEnv+"="+name)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("fresh process: %v\n%s", err, out)
			}
		})
	}
}
