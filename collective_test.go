package meshmpi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/meshmpi/meshmpi/coll"
	"github.com/meshmpi/meshmpi/coll/colltest"
	"github.com/meshmpi/meshmpi/op"
	"github.com/stretchr/testify/require"
)

// invoke calls collective a.Coll through the typed API in the given form,
// with buffers laid out by the engine's conventions (colltest.Buffers).
func invoke[T Numeric](form collForm, c *Comm, a coll.Args, send, recv []T, hs ...Hint) (*Request, error) {
	if a.InPlace {
		if a.Coll == coll.Scatter || a.Coll == coll.Scatterv {
			recv = InPlace[T]()
		} else {
			send = InPlace[T]()
		}
	}
	pick := func(b func() error, i, p func() (*Request, error)) (*Request, error) {
		return formCall(form, b, i, p)
	}
	o := a.Op
	switch a.Coll {
	case coll.Barrier:
		return pick(func() error { return Barrier(c, hs...) }, func() (*Request, error) { return Ibarrier(c, hs...) }, func() (*Request, error) { return BarrierInit(c, hs...) })
	case coll.Bcast:
		return pick(func() error { return Bcast(c, recv, a.Root, hs...) }, func() (*Request, error) { return Ibcast(c, recv, a.Root, hs...) }, func() (*Request, error) { return BcastInit(c, recv, a.Root, hs...) })
	case coll.Gather:
		return pick(func() error { return Gather(c, send, recv, a.Root, hs...) }, func() (*Request, error) { return Igather(c, send, recv, a.Root, hs...) }, func() (*Request, error) { return GatherInit(c, send, recv, a.Root, hs...) })
	case coll.Gatherv:
		return pick(func() error { return Gatherv(c, send, recv, a.Counts, a.Displs, a.Root, hs...) }, func() (*Request, error) { return Igatherv(c, send, recv, a.Counts, a.Displs, a.Root, hs...) }, func() (*Request, error) { return GathervInit(c, send, recv, a.Counts, a.Displs, a.Root, hs...) })
	case coll.Scatter:
		return pick(func() error { return Scatter(c, send, recv, a.Root, hs...) }, func() (*Request, error) { return Iscatter(c, send, recv, a.Root, hs...) }, func() (*Request, error) { return ScatterInit(c, send, recv, a.Root, hs...) })
	case coll.Scatterv:
		return pick(func() error { return Scatterv(c, send, a.Counts, a.Displs, recv, a.Root, hs...) }, func() (*Request, error) { return Iscatterv(c, send, a.Counts, a.Displs, recv, a.Root, hs...) }, func() (*Request, error) { return ScattervInit(c, send, a.Counts, a.Displs, recv, a.Root, hs...) })
	case coll.Allgather:
		return pick(func() error { return Allgather(c, send, recv, hs...) }, func() (*Request, error) { return Iallgather(c, send, recv, hs...) }, func() (*Request, error) { return AllgatherInit(c, send, recv, hs...) })
	case coll.Allgatherv:
		return pick(func() error { return Allgatherv(c, send, recv, a.Counts, a.Displs, hs...) }, func() (*Request, error) { return Iallgatherv(c, send, recv, a.Counts, a.Displs, hs...) }, func() (*Request, error) { return AllgathervInit(c, send, recv, a.Counts, a.Displs, hs...) })
	case coll.Alltoall:
		return pick(func() error { return Alltoall(c, send, recv, hs...) }, func() (*Request, error) { return Ialltoall(c, send, recv, hs...) }, func() (*Request, error) { return AlltoallInit(c, send, recv, hs...) })
	case coll.Alltoallv:
		sc, sd, rc, rd := a.SendCounts, a.SendDispls, a.Counts, a.Displs
		return pick(func() error { return Alltoallv(c, send, sc, sd, recv, rc, rd, hs...) }, func() (*Request, error) { return Ialltoallv(c, send, sc, sd, recv, rc, rd, hs...) }, func() (*Request, error) { return AlltoallvInit(c, send, sc, sd, recv, rc, rd, hs...) })
	case coll.Reduce:
		return pick(func() error { return Reduce(c, send, recv, o, a.Root, hs...) }, func() (*Request, error) { return Ireduce(c, send, recv, o, a.Root, hs...) }, func() (*Request, error) { return ReduceInit(c, send, recv, o, a.Root, hs...) })
	case coll.Allreduce:
		return pick(func() error { return Allreduce(c, send, recv, o, hs...) }, func() (*Request, error) { return Iallreduce(c, send, recv, o, hs...) }, func() (*Request, error) { return AllreduceInit(c, send, recv, o, hs...) })
	case coll.ReduceScatterBlock:
		return pick(func() error { return ReduceScatterBlock(c, send, recv, o, hs...) }, func() (*Request, error) { return IreduceScatterBlock(c, send, recv, o, hs...) }, func() (*Request, error) { return ReduceScatterBlockInit(c, send, recv, o, hs...) })
	case coll.ReduceScatter:
		return pick(func() error { return ReduceScatter(c, send, recv, a.Counts, o, hs...) }, func() (*Request, error) { return IreduceScatter(c, send, recv, a.Counts, o, hs...) }, func() (*Request, error) { return ReduceScatterInit(c, send, recv, a.Counts, o, hs...) })
	case coll.Scan:
		return pick(func() error { return Scan(c, send, recv, o, hs...) }, func() (*Request, error) { return Iscan(c, send, recv, o, hs...) }, func() (*Request, error) { return ScanInit(c, send, recv, o, hs...) })
	case coll.Exscan:
		return pick(func() error { return Exscan(c, send, recv, o, hs...) }, func() (*Request, error) { return Iexscan(c, send, recv, o, hs...) }, func() (*Request, error) { return ExscanInit(c, send, recv, o, hs...) })
	}
	return nil, fmt.Errorf("no collective %s", a.Coll)
}

// collCase runs one case in one form on an in-process world and compares
// every rank's receive buffer with the sequential reference. Persistent
// requests are started starts times with fresh inputs before each start.
func collCase(t *testing.T, form collForm, cs colltest.Case, starts int, hs ...Hint) {
	t.Helper()
	args := cs.Args()
	world(t, cs.Size, func(w *Comm) error {
		r := w.Rank()
		var req *Request
		for s := range starts {
			send, recv := colltest.Buffers(args, r, s)
			if args[r].Type == op.Uint64 {
				return runCollOnce[uint64](form, w, args, r, s, send, recv, &req, hs)
			}
			if err := runCollOnce[int64](form, w, args, r, s, send, recv, &req, hs); err != nil {
				return err
			}
			if form != persistent {
				break
			}
		}
		if req != nil {
			return req.Free()
		}
		return nil
	})
}

func runCollOnce[T Numeric](form collForm, w *Comm, args []coll.Args, r, seed int, send, recv []byte, req **Request, hs []Hint) error {
	// every rank's inputs, to compute the reference locally
	sends, recvs := make([][]byte, len(args)), make([][]byte, len(args))
	for k := range args {
		sends[k], recvs[k] = colltest.Buffers(args, k, seed)
	}
	want, err := colltest.Reference(args, sends, recvs)
	if err != nil {
		return err
	}
	sendT, recvT := op.View[T](send), op.View[T](recv)
	if *req == nil || form != persistent {
		*req, err = invoke(form, w, args[r], sendT, recvT, hs...)
		if err != nil {
			return err
		}
	} else {
		// a persistent request keeps its buffers: refill them in place
		copy((*req).coll.send, send)
		copy((*req).coll.recv, recv)
		recv = (*req).coll.recv
	}
	if form == persistent {
		if err := (*req).Start(); err != nil {
			return err
		}
		recv = (*req).coll.recv
	}
	if *req != nil {
		if _, err := (*req).Wait(context.Background()); err != nil {
			return err
		}
	}
	if !bytes.Equal(recv, want[r]) {
		return fmt.Errorf("seed %d: receive buffer differs from the reference", seed)
	}
	if form == nonblocking {
		*req = nil
	}
	return nil
}

var forms = []struct {
	name string
	form collForm
}{{"blocking", blocking}, {"nonblocking", nonblocking}, {"persistent", persistent}}

// Every collective, in all three forms, on in-process worlds, against the
// sequential reference. The engine's own sweep (coll/) covers algorithms,
// ops and sizes in breadth; this one covers the API: argument translation,
// in place, counts and displacements, persistent restarts with new inputs.
func TestCollectivesAllForms(t *testing.T) {
	for k := coll.Barrier; k < coll.NumColls; k++ {
		if k.Neighborhood() {
			continue // they need a process topology: neighbor_test.go
		}
		for _, size := range []int{1, 2, 3, 5, 8} {
			for _, count := range []int{0, 1, 7, 300} {
				for _, inPlace := range []bool{false, true} {
					if inPlace && (k == coll.Barrier || k == coll.Bcast) {
						continue
					}
					cs := colltest.Case{Coll: k, Size: size, Count: count, Root: size / 2, InPlace: inPlace}
					if k.Reduces() {
						cs.Op = colltest.Affine
					}
					for _, f := range forms {
						t.Run(fmt.Sprintf("%s/%s", cs, f.name), func(t *testing.T) {
							collCase(t, f.form, cs, 5)
						})
					}
				}
			}
		}
	}
}

// Many nonblocking collectives outstanding on one communicator at once
// (MPI-4.1 §6.12), completed in a different order on each rank.
func TestManyOutstandingCollectives(t *testing.T) {
	const n = 1000
	world(t, 4, func(w *Comm) error {
		reqs := make([]*Request, n)
		recvs := make([][]int64, n)
		for i := range n {
			recvs[i] = make([]int64, 2)
			var err error
			if i%2 == 0 {
				reqs[i], err = Iallreduce(w, []int64{int64(i), int64(w.Rank())}, recvs[i], Sum)
			} else {
				recvs[i] = make([]int64, 4)
				reqs[i], err = Iallgather(w, []int64{int64(i*10 + w.Rank())}, recvs[i])
			}
			if err != nil {
				return err
			}
		}
		order := rand.New(rand.NewPCG(uint64(w.Rank()), 9)).Perm(n)
		for _, i := range order {
			if _, err := reqs[i].Wait(context.Background()); err != nil {
				return err
			}
			if i%2 == 0 && (recvs[i][0] != int64(4*i) || recvs[i][1] != 6) {
				return fmt.Errorf("allreduce %d: %v", i, recvs[i])
			}
			if i%2 == 1 && recvs[i][3] != int64(i*10+3) {
				return fmt.Errorf("allgather %d: %v", i, recvs[i])
			}
		}
		return nil
	})
}

// Persistent collectives may be started in any order once initialized
// (MPI-4.1 §6.13): each rank starts them in a different order with Startall.
func TestPersistentStartOrder(t *testing.T) {
	const n = 6
	world(t, 5, func(w *Comm) error {
		reqs := make([]*Request, n)
		sends, recvs := make([][]int64, n), make([][]int64, n)
		for i := range n {
			sends[i], recvs[i] = []int64{0}, []int64{0}
			var err error
			reqs[i], err = AllreduceInit(w, sends[i], recvs[i], Sum)
			if err != nil {
				return err
			}
		}
		rng := rand.New(rand.NewPCG(uint64(w.Rank()), 3))
		for round := range 5 {
			order := rng.Perm(n)
			shuffled := make([]*Request, n)
			for j, i := range order {
				shuffled[j] = reqs[i]
				sends[i][0] = int64(100*i + round + w.Rank())
			}
			if err := Startall(shuffled); err != nil {
				return err
			}
			if err := Waitall(context.Background(), shuffled, nil); err != nil {
				return err
			}
			for i := range n {
				if want := int64(5*(100*i+round) + 10); recvs[i][0] != want {
					return fmt.Errorf("round %d, collective %d: %d, want %d", round, i, recvs[i][0], want)
				}
			}
		}
		for _, r := range reqs {
			if err := r.Free(); err != nil {
				return err
			}
		}
		return nil
	})
}

func TestCollectiveRequestMisuse(t *testing.T) {
	world(t, 2, func(w *Comm) error {
		buf := []int64{1}
		r, err := AllreduceInit(w, buf, make([]int64, 1), Sum)
		if err != nil {
			return err
		}
		if err := r.Start(); err != nil {
			return err
		}
		errs := []error{
			expectErr(r.Free(), ErrRequest, "free an active persistent collective"),
			expectErr(r.Cancel(), ErrRequest, "cancel a persistent collective"),
			expectErr(r.Start(), ErrRequest, "start an active collective"),
		}
		if _, err := r.Wait(context.Background()); err != nil {
			return err
		}
		nb, err := Ibarrier(w)
		if err != nil {
			return err
		}
		errs = append(errs,
			expectErr(nb.Cancel(), ErrRequest, "cancel a nonblocking collective"),
			expectErr(nb.Free(), ErrRequest, "free an active nonblocking collective"))
		_, err = nb.Wait(context.Background())
		return errors.Join(append(errs, err, r.Free())...)
	})
}

func TestCollectiveArgumentErrors(t *testing.T) {
	world(t, 3, func(w *Comm) error {
		b := make([]int64, 6)
		var errs []error
		for _, tc := range []struct {
			name string
			err  error
			want error
		}{
			{"bcast root 3", Bcast(w, b, 3), ErrRoot},
			{"reduce root -1", Reduce(w, b, b, Sum, -1), ErrRoot},
			{"bitwise and on floats", Allreduce(w, []float64{1}, []float64{0}, Band), ErrOp},
			{"nil op", Allreduce(w, b, b, nil), ErrOp},
			{"alltoall of 5 into 3 blocks", Alltoall(w, b[:5], b[:5]), ErrCount},
			{"allreduce into a short buffer", Allreduce(w, b, b[:2], Sum), ErrCount},
			{"gatherv with 2 counts", Allgatherv(w, b[:1], b, []int{1, 1}, []int{0, 1}), ErrCount},
			{"in place at a non-root", Reduce(w, InPlace[int64](), b, Sum, (w.Rank()+1)%3), ErrBuffer},
			{"unknown algorithm", Allreduce(w, b, make([]int64, 6), Sum, Algorithm("nope")), ErrAlgorithm},
			{"ring needs a commutative op", Allreduce(w, []uint64{1}, []uint64{0}, colltest.Affine, Algorithm("ring")), ErrAlgorithm},
			{"freed comm", func() error {
				d, _ := w.Dup()
				_ = d.Free()
				return Barrier(d)
			}(), ErrComm},
		} {
			errs = append(errs, expectErr(tc.err, tc.want, tc.name))
		}
		// the failed calls took their sequence numbers on every rank alike:
		// the next collective still matches up
		got := make([]int64, 1)
		if err := Allreduce(w, []int64{1}, got, Sum); err != nil || got[0] != 3 {
			errs = append(errs, fmt.Errorf("allreduce after errors: %v %v", got, err))
		}
		return errors.Join(errs...)
	})
}

// A persistent collective's Start+Wait allocates nothing, on either rank.
// A rooted collective lets the root run ahead, and the messages it sends
// early queue up (and allocate) at the receivers, as MPI's eager protocol
// allows; a persistent barrier in each cycle keeps the ranks in step so
// what is measured is the steady state.
func TestPersistentCollectiveZeroAlloc(t *testing.T) {
	for _, k := range []string{"allreduce", "bcast", "barrier", "allgather", "alltoall", "reduce"} {
		world(t, 3, func(w *Comm) error {
			send, recv := []float64{1, 2}, make([]float64, 6)
			var r *Request
			var err error
			switch k {
			case "allreduce":
				r, err = AllreduceInit(w, send, recv[:2], Sum)
			case "bcast":
				r, err = BcastInit(w, recv, 0)
			case "allgather":
				r, err = AllgatherInit(w, send, recv)
			case "alltoall":
				r, err = AlltoallInit(w, recv[:3], recv[3:])
			case "reduce":
				r, err = ReduceInit(w, send, recv[:2], Sum, 1)
			default:
				r, err = BarrierInit(w)
			}
			if err != nil {
				return err
			}
			step, err := BarrierInit(w)
			if err != nil {
				return err
			}
			return errors.Join(noAllocs(w, 1000, k, r, step), r.Free(), step.Free())
		})
	}
}

// A job-wide algorithm setting reaches every rank's calls; a per-call hint
// overrides it; an unknown name is refused when the world is configured.
func TestJobWideAlgorithm(t *testing.T) {
	world(t, 3, func(w *Comm) error {
		// ring needs a commutative op: the setting is visibly in force
		err := Allreduce(w, []uint64{1}, []uint64{0}, colltest.Affine)
		if err := expectErr(err, ErrAlgorithm, "job-wide ring with a non-commutative op"); err != nil {
			return err
		}
		got := []uint64{0}
		if err := Allreduce(w, []uint64{1}, got, colltest.Affine, Algorithm("recursive_doubling")); err != nil {
			return err
		}
		sum := []int64{0}
		return errors.Join(Allreduce(w, []int64{2}, sum, Sum), expect(sum[0] == 6, "ring allreduce gave %d", sum[0]))
	}, WithCollAlgorithm("allreduce", "ring"))
	require.ErrorIs(t, Run(2, func(*Comm) error { return nil }, WithCollAlgorithm("allreduce", "nope")), ErrAlgorithm)
	require.ErrorIs(t, Run(2, func(*Comm) error { return nil }, WithCollAlgorithm("allreduse", "ring")), ErrArg)
}

func TestReduceLocal(t *testing.T) {
	in, inout := []int32{1, 5, -3}, []int32{4, 2, -7}
	require.NoError(t, ReduceLocal(in, inout, Max))
	require.Equal(t, []int32{4, 5, -3}, inout)
	sub := NewOp("sub", false, func(in, inout []int64) {
		for i := range inout {
			inout[i] = in[i] - inout[i]
		}
	})
	x := []int64{10}
	require.NoError(t, ReduceLocal([]int64{3}, x, sub))
	require.Equal(t, int64(-7), x[0], "in is the left operand")
	require.ErrorIs(t, ReduceLocal([]float64{1}, []float64{2}, Bxor), ErrOp)
	require.ErrorIs(t, ReduceLocal([]int64{1, 2}, []int64{2}, Sum), ErrCount)
	require.ErrorIs(t, ReduceLocal([]int32{1}, []int32{2}, sub), ErrOp, "a user op on another type")
}

// MaxLoc and MinLoc over Loc pairs: the extreme value and the lowest rank
// holding it, through the typed API (MPI_DOUBLE_INT, MPI_2INT).
func TestLocReductions(t *testing.T) {
	world(t, 5, func(w *Comm) error {
		r := w.Rank()
		// values 3,1,3,0,1 per rank for element 0; rank-dependent for element 1
		vals := []float64{3, 1, 3, 0, 1}
		in := []Loc[float64]{{Value: vals[r], Index: int32(r)}, {Value: float64(-r), Index: int32(r)}}
		out := make([]Loc[float64], 2)
		if err := Allreduce(w, in, out, MaxLoc); err != nil {
			return err
		}
		want := []Loc[float64]{{Value: 3, Index: 0}, {Value: 0, Index: 0}}
		if out[0] != want[0] || out[1] != want[1] {
			return fmt.Errorf("maxloc: %v, want %v", out, want)
		}
		mins := make([]Loc[int32], 1)
		if err := Reduce(w, []Loc[int32]{{Value: int32(vals[r]), Index: int32(r)}}, mins, MinLoc, 4); err != nil {
			return err
		}
		if r == 4 && mins[0] != (Loc[int32]{Value: 0, Index: 3}) {
			return fmt.Errorf("minloc at the root: %v", mins[0])
		}
		// pairs travel point-to-point too
		if r < 2 {
			buf := []Loc[int64]{{Value: int64(r), Index: 7}}
			if _, err := Sendrecv(w, buf, 1-r, 0, buf, 1-r, 0); !errors.Is(err, ErrBuffer) {
				return fmt.Errorf("sendrecv with one buffer for both: %v", err)
			}
			st, err := SendrecvReplace(w, buf, 1-r, 0, 1-r, 0)
			if err != nil || buf[0].Value != int64(1-r) || st.Count != 1 {
				return fmt.Errorf("sendrecv of pairs: %v %+v %v", buf, st, err)
			}
		}
		return expectErr(Allreduce(w, in, out, Sum), ErrOp, "sum over pairs")
	})
}

// A blocking collective with nothing to move on a rank (a zero count)
// completes there without a run, takes its sequence number as any other
// (the next collective still lines up), and fails on a revoked
// communicator.
func TestEmptyCollective(t *testing.T) {
	world(t, 3, func(w *Comm) error {
		none := []float64{}
		for range 3 {
			if err := ReduceScatterBlock(w, none, none, Sum); err != nil {
				return err
			}
			if err := Bcast(w, none, 1); err != nil {
				return err
			}
		}
		got := []int64{0}
		if err := Allreduce(w, []int64{int64(w.Rank())}, got, Sum); err != nil {
			return err
		}
		if err := expect(got[0] == 3, "allreduce after empty collectives: %d, want 3", got[0]); err != nil {
			return err
		}
		c, err := w.Dup()
		if err != nil {
			return err
		}
		if err := c.Revoke(); err != nil {
			return err
		}
		return expectErr(Bcast(c, none, 0), ErrRevoked, "empty bcast on a revoked communicator")
	})
}
