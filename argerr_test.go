package meshmpi

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// argFix holds what the argument-error cases call with: rank's world of 3
// ranks, a freed communicator, a Cartesian ring, an intercommunicator (1+2
// ranks), a freed and an uncommitted datatype, and a group.
type argFix struct {
	w, freed, cart, inter *Comm
	freedDt, rawDt        *Datatype
	g                     *Group
}

// argCase is one call with bad arguments, made by every rank alike, and
// the sentinel it must return. A partial case's bad argument matters on
// some ranks only (a root's receive buffer): the others may complete, or
// fail with ErrArg when they hear of the refusal; a Barrier follows it,
// in which they learn of it at the latest.
type argCase struct {
	name string
	want error
	call func(f *argFix) error
}

// partialCases are the partial argCases, by name (without the form).
var partialCases = map[string]bool{"inter scatterv negative": true, "gather short": true, "exscan short": true}

func partial(name string) bool {
	if i := strings.Index(name, " ("); i >= 0 {
		name = name[:i]
	}
	return partialCases[name]
}

// req turns a call returning a request into one returning its error.
func req(_ *Request, err error) error { return err }

// wait waits for a request that a call returned without an error.
func wait(r *Request, err error) error {
	if err != nil {
		return err
	}
	_, err = r.Wait(context.Background())
	return err
}

// start starts a persistent request that a call returned without an
// error, waits for it and frees it.
func start(r *Request, err error) error {
	if err != nil {
		return err
	}
	if err := r.Start(); err != nil {
		return errors.Join(err, r.Free())
	}
	_, err = r.Wait(context.Background())
	return errors.Join(err, r.Free())
}

func argCases() []argCase {
	const n = 3
	i64 := func(k int) []int64 { return make([]int64, k) }
	ones, seq := []int{1, 1, 1}, []int{0, 1, 2}
	neg := []int{1, -1, 1}
	short := []int{1, 1}
	ty3 := []*Datatype{Int64, Int64, Int64}
	cs := []argCase{
		// point-to-point
		{"send rank", ErrRank, func(f *argFix) error { return Send(f.w, i64(1), n, 0) }},
		{"send negative rank", ErrRank, func(f *argFix) error { return Send(f.w, i64(1), -7, 0) }},
		{"send tag", ErrTag, func(f *argFix) error { return Send(f.w, i64(1), 0, -5) }},
		{"ssend rank", ErrRank, func(f *argFix) error { return Ssend(f.w, i64(1), n, 0) }},
		{"isend rank", ErrRank, func(f *argFix) error { return req(Isend(f.w, i64(1), n, 0)) }},
		{"issend rank", ErrRank, func(f *argFix) error { return req(Issend(f.w, i64(1), n, 0)) }},
		{"send_init rank", ErrRank, func(f *argFix) error { return req(SendInit(f.w, i64(1), n, 0)) }},
		{"ssend_init rank", ErrRank, func(f *argFix) error { return req(SsendInit(f.w, i64(1), n, 0)) }},
		{"recv rank", ErrRank, func(f *argFix) error { _, err := Recv(f.w, i64(1), n, 0); return err }},
		{"irecv rank", ErrRank, func(f *argFix) error { return req(Irecv(f.w, i64(1), n, 0)) }},
		{"recv_init rank", ErrRank, func(f *argFix) error { return req(RecvInit(f.w, i64(1), n, 0)) }},
		{"recv tag", ErrTag, func(f *argFix) error { _, err := Recv(f.w, i64(1), 0, -5); return err }},
		{"send freed comm", ErrComm, func(f *argFix) error { return Send(f.freed, i64(1), 0, 0) }},
		{"send nil comm", ErrComm, func(f *argFix) error { return Send(nil, i64(1), 0, 0) }},
		{"recv freed comm", ErrComm, func(f *argFix) error { _, err := Recv(f.freed, i64(1), 0, 0); return err }},
		{"sendrecv overlap", ErrBuffer, func(f *argFix) error {
			b := i64(2)
			_, err := Sendrecv(f.w, b, 0, 0, b, 0, 0)
			return err
		}},
		{"sendrecv rank", ErrRank, func(f *argFix) error { _, err := Sendrecv(f.w, i64(1), n, 0, i64(1), 0, 0); return err }},
		{"sendrecv_replace rank", ErrRank, func(f *argFix) error { _, err := SendrecvReplace(f.w, i64(1), n, 0, 0, 0); return err }},
		{"recv_accumulate nil op", ErrOp, func(f *argFix) error { _, err := RecvAccumulate(f.w, i64(1), nil, 0, 0); return err }},
		{"irecv_accumulate rank", ErrRank, func(f *argFix) error { return req(IrecvAccumulate(f.w, i64(1), Sum, n, 0)) }},
		{"recv_accumulate_init nil op", ErrOp, func(f *argFix) error { return req(RecvAccumulateInit(f.w, i64(1), nil, 0, 0)) }},
		{"probe rank", ErrRank, func(f *argFix) error { _, err := f.w.Probe(n, 0); return err }},
		{"iprobe rank", ErrRank, func(f *argFix) error { _, _, err := f.w.Iprobe(n, 0); return err }},
		{"mprobe rank", ErrRank, func(f *argFix) error { _, _, err := f.w.Mprobe(n, 0); return err }},
		{"improbe freed", ErrComm, func(f *argFix) error { _, _, _, err := f.freed.Improbe(0, 0); return err }},
		{"mrecv nil message", ErrRequest, func(f *argFix) error { _, err := Mrecv(nil, i64(1)); return err }},
		{"imrecv nil message", ErrRequest, func(f *argFix) error { return req(Imrecv(nil, i64(1))) }},
		{"send_typed freed type", ErrType, func(f *argFix) error { return SendTyped(f.w, Bytes(i64(2)), 1, f.freedDt, 0, 0) }},
		{"send_typed uncommitted", ErrType, func(f *argFix) error { return SendTyped(f.w, Bytes(i64(2)), 1, f.rawDt, 0, 0) }},
		{"send_typed short buffer", ErrBuffer, func(f *argFix) error { return SendTyped(f.w, Bytes(i64(2)), 3, Int64, 0, 0) }},
		{"send_typed negative count", ErrCount, func(f *argFix) error { return SendTyped(f.w, Bytes(i64(2)), -1, Int64, 0, 0) }},
		{"recv_typed freed type", ErrType, func(f *argFix) error { _, err := RecvTyped(f.w, Bytes(i64(2)), 1, f.freedDt, 0, 0); return err }},
		{"isend_typed rank", ErrRank, func(f *argFix) error { return req(IsendTyped(f.w, Bytes(i64(2)), 1, Int64, n, 0)) }},
		{"irecv_typed negative count", ErrCount, func(f *argFix) error { return req(IrecvTyped(f.w, Bytes(i64(2)), -1, Int64, 0, 0)) }},
		{"ssend_typed rank", ErrRank, func(f *argFix) error { return SsendTyped(f.w, Bytes(i64(2)), 1, Int64, n, 0) }},
		{"send_typed_init uncommitted", ErrType, func(f *argFix) error { return req(SendTypedInit(f.w, Bytes(i64(2)), 1, f.rawDt, 0, 0)) }},
		{"recv_typed_init rank", ErrRank, func(f *argFix) error { return req(RecvTypedInit(f.w, Bytes(i64(2)), 1, Int64, n, 0)) }},
		// requests
		{"startall nil", ErrRequest, func(f *argFix) error { return Startall([]*Request{nil}) }},
		{"wait nil", ErrRequest, func(f *argFix) error { _, err := (*Request)(nil).Wait(context.Background()); return err }},
		{"start nil", ErrRequest, func(f *argFix) error { return (*Request)(nil).Start() }},
		{"free nil", ErrRequest, func(f *argFix) error { return (*Request)(nil).Free() }},
		{"cancel nil", ErrRequest, func(f *argFix) error { return (*Request)(nil).Cancel() }},
		{"test nil", ErrRequest, func(f *argFix) error { _, _, err := (*Request)(nil).Test(); return err }},
		// local reductions and ops
		{"reduce_local nil op", ErrOp, func(f *argFix) error { return ReduceLocal(i64(1), i64(1), nil) }},
		{"reduce_local lengths", ErrCount, func(f *argFix) error { return ReduceLocal(i64(1), i64(2), Sum) }},
		// datatype constructors
		{"contiguous negative", ErrCount, func(f *argFix) error { _, err := Contiguous(-1, Int64); return err }},
		{"contiguous nil", ErrType, func(f *argFix) error { _, err := Contiguous(1, nil); return err }},
		{"contiguous freed", ErrType, func(f *argFix) error { _, err := Contiguous(1, f.freedDt); return err }},
		{"vector negative", ErrCount, func(f *argFix) error { _, err := Vector(-1, 1, 1, Int64); return err }},
		{"hvector negative", ErrCount, func(f *argFix) error { _, err := Hvector(1, -1, 1, Int64); return err }},
		{"indexed lengths", ErrArg, func(f *argFix) error { _, err := Indexed([]int{1}, []int{0, 1}, Int64); return err }},
		{"indexed negative", ErrCount, func(f *argFix) error { _, err := Indexed([]int{-1}, []int{0}, Int64); return err }},
		{"hindexed nil type", ErrType, func(f *argFix) error { _, err := Hindexed([]int{1}, []int{0}, nil); return err }},
		{"indexed_block negative", ErrCount, func(f *argFix) error { _, err := IndexedBlock(-1, []int{0}, Int64); return err }},
		{"hindexed_block nil", ErrType, func(f *argFix) error { _, err := HindexedBlock(1, []int{0}, nil); return err }},
		{"struct lengths", ErrArg, func(f *argFix) error { _, err := Struct([]int{1}, []int{0, 8}, ty3); return err }},
		{"resized nil", ErrType, func(f *argFix) error { _, err := Resized(nil, 0, 8); return err }},
		{"commit freed", ErrType, func(f *argFix) error { return f.freedDt.Commit() }},
		// groups
		{"group incl", ErrRank, func(f *argFix) error { _, err := f.g.Incl([]int{n}); return err }},
		{"group excl", ErrRank, func(f *argFix) error { _, err := f.g.Excl([]int{-1}); return err }},
		{"group translate", ErrRank, func(f *argFix) error { _, err := f.g.TranslateRanks([]int{n}, f.g); return err }},
		{"group compare nil", ErrGroup, func(f *argFix) error { _, err := f.g.Compare(nil); return err }},
		{"group union nil", ErrGroup, func(f *argFix) error { _, err := f.g.Union(nil); return err }},
		{"create nil group", ErrGroup, func(f *argFix) error { _, err := f.w.Create(nil); return err }},
		{"group of freed", ErrComm, func(f *argFix) error { _, err := f.freed.Group(); return err }},
		// topology
		{"dims_create negative", ErrArg, func(f *argFix) error { _, err := DimsCreate(-1, []int{0}); return err }},
		{"cart_create too big", ErrArg, func(f *argFix) error { _, err := f.w.CartCreate([]int{n + 1}, []bool{false}, false); return err }},
		{"cart_create lengths", ErrArg, func(f *argFix) error { _, err := f.w.CartCreate([]int{n}, []bool{}, false); return err }},
		{"cart_coords plain", ErrTopology, func(f *argFix) error { _, err := f.w.CartCoords(0); return err }},
		{"cart_coords rank", ErrRank, func(f *argFix) error { _, err := f.cart.CartCoords(n); return err }},
		{"cart_rank coords", ErrArg, func(f *argFix) error { _, err := f.cart.CartRank([]int{0, 0}); return err }},
		{"cart_shift dim", ErrArg, func(f *argFix) error { _, _, err := f.cart.CartShift(5, 1); return err }},
		{"cart_sub lengths", ErrArg, func(f *argFix) error { _, err := f.cart.CartSub([]bool{true, false}); return err }},
		{"cart_get plain", ErrTopology, func(f *argFix) error { _, _, _, err := f.w.CartGet(); return err }},
		{"graph_create negative", ErrArg, func(f *argFix) error { _, err := f.w.GraphCreate([]int{-1}, nil, false); return err }},
		{"graph_neighbors plain", ErrTopology, func(f *argFix) error { _, err := f.w.GraphNeighbors(0); return err }},
		{"dist_graph_adjacent rank", ErrRank, func(f *argFix) error {
			_, err := f.w.DistGraphCreateAdjacent([]int{n}, nil, []int{0}, nil, false)
			return err
		}},
		{"dist_graph_neighbors plain", ErrTopology, func(f *argFix) error { _, _, _, _, err := f.w.DistGraphNeighbors(); return err }},
		{"split freed", ErrComm, func(f *argFix) error { _, err := f.freed.Split(0, 0); return err }},
		{"dup freed", ErrComm, func(f *argFix) error { _, err := f.freed.Dup(); return err }},
		{"intercomm_create leader", ErrRank, func(f *argFix) error { _, err := IntercommCreate(f.w, n, f.w, 0, 0); return err }},
		// neighborhood collectives
		{"neighbor_allgather plain", ErrTopology, func(f *argFix) error { return NeighborAllgather(f.w, i64(1), i64(2)) }},
		{"neighbor_allgather short", ErrCount, func(f *argFix) error { return NeighborAllgather(f.cart, i64(2), i64(1)) }},
		{"neighbor_allgatherv negative", ErrCount, func(f *argFix) error {
			return NeighborAllgatherv(f.cart, i64(1), i64(2), []int{1, -1}, []int{0, 1})
		}},
		{"ineighbor_alltoall plain", ErrTopology, func(f *argFix) error { return req(IneighborAlltoall(f.w, i64(2), i64(2))) }},
		{"neighbor_alltoallv lengths", ErrCount, func(f *argFix) error {
			return NeighborAlltoallv(f.cart, i64(2), []int{1}, []int{0}, i64(2), []int{1, 1}, []int{0, 1})
		}},
		{"neighbor_alltoallw freed type", ErrType, func(f *argFix) error {
			b := Bytes(i64(2))
			t2 := []*Datatype{f.freedDt, f.freedDt}
			return NeighborAlltoallw(f.cart, b, []int{1, 1}, []int{0, 8}, t2, Bytes(i64(2)), []int{1, 1}, []int{0, 8}, t2)
		}},
		{"neighbor_allgather_init freed", ErrComm, func(f *argFix) error { return req(NeighborAllgatherInit(f.freed, i64(1), i64(2))) }},
		// intercommunicator collectives
		{"inter bcast root", ErrRoot, func(f *argFix) error { return Bcast(f.inter, i64(1), 7) }},
		{"inter reduce nil op", ErrOp, func(f *argFix) error { return Reduce(f.inter, i64(1), i64(1), nil, ProcNull) }},
		{"inter gather root", ErrRoot, func(f *argFix) error { return Gather(f.inter, i64(1), i64(2), -9) }},
		{"inter scatterv negative", ErrCount, func(f *argFix) error {
			root := 0
			if f.inter.RemoteSize() == 2 { // the 1-rank group is the root's
				root = Root
			}
			return Scatterv(f.inter, i64(2), []int{1, -1}, []int{0, 1}, i64(1), root)
		}},
		{"inter allreduce in place", ErrArg, func(f *argFix) error { return Allreduce(f.inter, InPlace[int64](), i64(1), Sum) }},
		{"inter alltoallv lengths", ErrCount, func(f *argFix) error {
			return Alltoallv(f.inter, i64(2), []int{1}, []int{0}, i64(2), []int{1}, []int{0, 1})
		}},
	}
	// the intracommunicator collectives, in all three forms
	type coll3 struct {
		name string
		want error
		b    func(f *argFix) error
		i, p func(f *argFix) (*Request, error)
	}
	colls := []coll3{
		{"barrier freed", ErrComm, func(f *argFix) error { return Barrier(f.freed) },
			func(f *argFix) (*Request, error) { return Ibarrier(f.freed) }, func(f *argFix) (*Request, error) { return BarrierInit(f.freed) }},
		{"bcast root", ErrRoot, func(f *argFix) error { return Bcast(f.w, i64(1), n) },
			func(f *argFix) (*Request, error) { return Ibcast(f.w, i64(1), -1) }, func(f *argFix) (*Request, error) { return BcastInit(f.w, i64(1), n) }},
		{"bcast nil comm", ErrComm, func(f *argFix) error { return Bcast(nil, i64(1), 0) },
			func(f *argFix) (*Request, error) { return Ibcast(nil, i64(1), 0) }, func(f *argFix) (*Request, error) { return BcastInit(nil, i64(1), 0) }},
		{"reduce nil op", ErrOp, func(f *argFix) error { return Reduce(f.w, i64(1), i64(1), nil, 0) },
			func(f *argFix) (*Request, error) { return Ireduce(f.w, i64(1), i64(1), nil, 0) },
			func(f *argFix) (*Request, error) { return ReduceInit(f.w, i64(1), i64(1), nil, 0) }},
		{"reduce root", ErrRoot, func(f *argFix) error { return Reduce(f.w, i64(1), i64(1), Sum, n) },
			func(f *argFix) (*Request, error) { return Ireduce(f.w, i64(1), i64(1), Sum, n) },
			func(f *argFix) (*Request, error) { return ReduceInit(f.w, i64(1), i64(1), Sum, -2) }},
		{"allreduce short", ErrCount, func(f *argFix) error { return Allreduce(f.w, i64(2), i64(1), Sum) },
			func(f *argFix) (*Request, error) { return Iallreduce(f.w, i64(2), i64(1), Sum) },
			func(f *argFix) (*Request, error) { return AllreduceInit(f.w, i64(2), i64(1), Sum) }},
		{"allreduce nil op", ErrOp, func(f *argFix) error { return Allreduce(f.w, i64(1), i64(1), nil) },
			func(f *argFix) (*Request, error) { return Iallreduce(f.w, i64(1), i64(1), nil) },
			func(f *argFix) (*Request, error) { return AllreduceInit(f.w, i64(1), i64(1), nil) }},
		{"gather root", ErrRoot, func(f *argFix) error { return Gather(f.w, i64(1), i64(n), n) },
			func(f *argFix) (*Request, error) { return Igather(f.w, i64(1), i64(n), n) },
			func(f *argFix) (*Request, error) { return GatherInit(f.w, i64(1), i64(n), n) }},
		{"gather short", ErrCount, func(f *argFix) error { return Gather(f.w, i64(2), i64(n), 0) },
			func(f *argFix) (*Request, error) { return Igather(f.w, i64(2), i64(n), 0) },
			func(f *argFix) (*Request, error) { return GatherInit(f.w, i64(2), i64(n), 0) }},
		{"gatherv negative", ErrCount, func(f *argFix) error { return Gatherv(f.w, i64(1), i64(n), neg, seq, 0) },
			func(f *argFix) (*Request, error) { return Igatherv(f.w, i64(1), i64(n), neg, seq, 0) },
			func(f *argFix) (*Request, error) { return GathervInit(f.w, i64(1), i64(n), ones, neg, 0) }},
		{"gatherv lengths", ErrCount, func(f *argFix) error { return Gatherv(f.w, i64(1), i64(n), short, seq, 0) },
			func(f *argFix) (*Request, error) { return Igatherv(f.w, i64(1), i64(n), ones, short, 0) },
			func(f *argFix) (*Request, error) { return GathervInit(f.w, i64(1), i64(n), short, short, 0) }},
		{"scatter root", ErrRoot, func(f *argFix) error { return Scatter(f.w, i64(n), i64(1), n) },
			func(f *argFix) (*Request, error) { return Iscatter(f.w, i64(n), i64(1), -1) },
			func(f *argFix) (*Request, error) { return ScatterInit(f.w, i64(n), i64(1), n) }},
		{"scatterv negative", ErrCount, func(f *argFix) error { return Scatterv(f.w, i64(n), neg, seq, i64(1), 0) },
			func(f *argFix) (*Request, error) { return Iscatterv(f.w, i64(n), ones, neg, i64(1), 0) },
			func(f *argFix) (*Request, error) { return ScattervInit(f.w, i64(n), neg, seq, i64(1), 0) }},
		{"allgather short", ErrCount, func(f *argFix) error { return Allgather(f.w, i64(1), i64(1)) },
			func(f *argFix) (*Request, error) { return Iallgather(f.w, i64(1), i64(1)) },
			func(f *argFix) (*Request, error) { return AllgatherInit(f.w, i64(1), i64(1)) }},
		{"allgatherv negative", ErrCount, func(f *argFix) error { return Allgatherv(f.w, i64(1), i64(n), neg, seq) },
			func(f *argFix) (*Request, error) { return Iallgatherv(f.w, i64(1), i64(n), ones, neg) },
			func(f *argFix) (*Request, error) { return AllgathervInit(f.w, i64(1), i64(n), short, seq) }},
		{"alltoall uneven", ErrCount, func(f *argFix) error { return Alltoall(f.w, i64(n+1), i64(n+1)) },
			func(f *argFix) (*Request, error) { return Ialltoall(f.w, i64(n+1), i64(n+1)) },
			func(f *argFix) (*Request, error) { return AlltoallInit(f.w, i64(n+1), i64(n+1)) }},
		{"alltoallv negative", ErrCount, func(f *argFix) error { return Alltoallv(f.w, i64(n), neg, seq, i64(n), ones, seq) },
			func(f *argFix) (*Request, error) { return Ialltoallv(f.w, i64(n), ones, seq, i64(n), ones, neg) },
			func(f *argFix) (*Request, error) { return AlltoallvInit(f.w, i64(n), short, seq, i64(n), ones, seq) }},
		{"alltoallw freed type", ErrType, func(f *argFix) error {
			d := []*Datatype{f.freedDt, f.freedDt, f.freedDt}
			return Alltoallw(f.w, Bytes(i64(n)), ones, []int{0, 8, 16}, d, Bytes(i64(n)), ones, []int{0, 8, 16}, ty3)
		}, func(f *argFix) (*Request, error) {
			return Ialltoallw(f.w, Bytes(i64(n)), ones, []int{0, 8, 16}, ty3, Bytes(i64(n)), ones, []int{0, 8, 16}, []*Datatype{f.freedDt, f.freedDt, f.freedDt})
		}, func(f *argFix) (*Request, error) {
			return AlltoallwInit(f.w, Bytes(i64(n)), ones, []int{0, 8, 16}, ty3, Bytes(i64(n)), ones, []int{0, 8, 16}, []*Datatype{f.rawDt, f.rawDt, f.rawDt})
		}},
		{"reduce_scatter negative", ErrCount, func(f *argFix) error { return ReduceScatter(f.w, i64(n), i64(1), neg, Sum) },
			func(f *argFix) (*Request, error) { return IreduceScatter(f.w, i64(n), i64(1), neg, Sum) },
			func(f *argFix) (*Request, error) { return ReduceScatterInit(f.w, i64(n), i64(1), short, Sum) }},
		{"reduce_scatter nil op", ErrOp, func(f *argFix) error { return ReduceScatter(f.w, i64(n), i64(1), ones, nil) },
			func(f *argFix) (*Request, error) { return IreduceScatter(f.w, i64(n), i64(1), ones, nil) },
			func(f *argFix) (*Request, error) { return ReduceScatterInit(f.w, i64(n), i64(1), ones, nil) }},
		{"reduce_scatter_block short", ErrCount, func(f *argFix) error { return ReduceScatterBlock(f.w, i64(1), i64(1), Sum) },
			func(f *argFix) (*Request, error) { return IreduceScatterBlock(f.w, i64(1), i64(1), Sum) },
			func(f *argFix) (*Request, error) { return ReduceScatterBlockInit(f.w, i64(1), i64(1), Sum) }},
		{"scan nil op", ErrOp, func(f *argFix) error { return Scan(f.w, i64(1), i64(1), nil) },
			func(f *argFix) (*Request, error) { return Iscan(f.w, i64(1), i64(1), nil) },
			func(f *argFix) (*Request, error) { return ScanInit(f.w, i64(1), i64(1), nil) }},
		{"exscan short", ErrCount, func(f *argFix) error { return Exscan(f.w, i64(2), i64(1), Sum) },
			func(f *argFix) (*Request, error) { return Iexscan(f.w, i64(2), i64(1), Sum) },
			func(f *argFix) (*Request, error) { return ExscanInit(f.w, i64(2), i64(1), Sum) }},
		{"allreduce segment", ErrArg, func(f *argFix) error { return Allreduce(f.w, i64(1), i64(1), Sum, Segment(-1)) },
			func(f *argFix) (*Request, error) { return Iallreduce(f.w, i64(1), i64(1), Sum, Segment(-1)) },
			func(f *argFix) (*Request, error) { return AllreduceInit(f.w, i64(1), i64(1), Sum, Segment(-1)) }},
		{"allreduce algorithm", ErrAlgorithm, func(f *argFix) error { return Allreduce(f.w, i64(1), i64(1), Sum, Algorithm("nope")) },
			func(f *argFix) (*Request, error) { return Iallreduce(f.w, i64(1), i64(1), Sum, Algorithm("nope")) },
			func(f *argFix) (*Request, error) { return AllreduceInit(f.w, i64(1), i64(1), Sum, Algorithm("nope")) }},
	}
	for _, c := range colls {
		cs = append(cs, argCase{c.name, c.want, c.b},
			argCase{c.name + " (nonblocking)", c.want, func(f *argFix) error { return wait(c.i(f)) }},
			argCase{c.name + " (persistent)", c.want, func(f *argFix) error { return start(c.p(f)) }})
	}
	return cs
}

// Every public function given a bad argument returns an error wrapping the
// right sentinel, on every rank, without a panic and without a hang; the
// world still works afterwards.
func TestArgumentErrors(t *testing.T) {
	const n = 3
	cases := argCases()
	got := make([][]error, n)
	err := deadline(t, "argument errors", func() error {
		return Run(n, func(w *Comm) error {
			f := &argFix{w: w}
			var err error
			if f.freed, err = w.Dup(); err != nil {
				return err
			}
			if err := f.freed.Free(); err != nil {
				return err
			}
			if f.cart, err = w.CartCreate([]int{n}, []bool{true}, false); err != nil {
				return err
			}
			x, err := newInter(w, 1)
			if err != nil {
				return err
			}
			f.inter = x.c
			if f.rawDt, err = Vector(2, 1, 2, Int64); err != nil {
				return err
			}
			if f.freedDt, err = Vector(2, 1, 2, Int64); err != nil {
				return err
			}
			if err := f.freedDt.Commit(); err != nil {
				return err
			}
			if err := f.freedDt.Free(); err != nil {
				return err
			}
			if f.g, err = w.Group(); err != nil {
				return err
			}
			got[w.Rank()] = make([]error, len(cases))
			for i, c := range cases {
				got[w.Rank()][i] = func() (err error) {
					defer func() {
						if p := recover(); p != nil {
							err = fmt.Errorf("panic: %v", p)
						}
					}()
					return c.call(f)
				}()
				if partial(c.name) {
					_ = Barrier(w)
				}
			}
			sum := []int64{0}
			if err := Allreduce(w, []int64{1}, sum, Sum); err != nil || sum[0] != n {
				return fmt.Errorf("allreduce after the argument errors: %v %w", sum, err)
			}
			return errors.Join(f.cart.Free(), f.inter.Free())
		})
	})
	for i, c := range cases {
		hit := 0
		for r := range n {
			e := got[r][i]
			switch {
			case errors.Is(e, c.want):
				hit++
			case partial(c.name) && (e == nil || errors.Is(e, ErrArg)):
			default:
				t.Errorf("%s: rank %d: got %v, want %v", c.name, r, e, c.want)
			}
		}
		if hit == 0 {
			t.Errorf("%s: no rank returned %v", c.name, c.want)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}
