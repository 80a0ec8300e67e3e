package coll_test

import (
	"errors"
	"testing"

	"github.com/meshmpi/meshmpi/coll"
	"github.com/meshmpi/meshmpi/coll/colltest"
	"github.com/meshmpi/meshmpi/op"
	"github.com/stretchr/testify/require"
)

// Fence makes later steps without explicit dependencies wait for every step
// since the previous fence; explicit dependencies bypass it.
func TestBuilderFence(t *testing.T) {
	b := coll.NewBuilder(nil, op.Int64)
	s0 := b.Send(1, coll.Ref{Buf: coll.BufSend, Len: 8})
	s1 := b.Recv(1, coll.Ref{Buf: coll.BufRecv, Len: 8})
	b.Fence()
	s2 := b.Send(1, coll.Ref{Buf: coll.BufRecv, Len: 8})
	s3 := b.Copy(coll.Ref{Buf: coll.BufSend, Len: 8}, coll.Ref{Buf: coll.BufRecv, Off: 8, Len: 8}, s0)
	p, err := b.Plan("t")
	require.NoError(t, err)
	fence := 2
	require.Equal(t, coll.StepNop, p.Steps[fence].Kind)
	require.ElementsMatch(t, []int32{int32(fence)}, p.Successors(int(s0))[:1])
	require.Contains(t, p.Successors(int(s0)), int32(s3))
	require.Equal(t, []int32{int32(fence)}, p.Successors(int(s1)))
	require.Equal(t, []int32{int32(s2)}, p.Successors(fence))
	require.Equal(t, int32(1), p.Steps[s2].NDeps)
	require.Equal(t, [3]int{8, 16, 0}, [3]int{p.Need[coll.BufSend], p.Need[coll.BufRecv], p.Need[coll.BufScratch]})
}

func TestBuilderRejects(t *testing.T) {
	b := coll.NewBuilder(op.Sum, op.Int64)
	b.Reduce(coll.Ref{Len: 8}, coll.Ref{Len: 16})
	_, err := b.Plan("t")
	require.Error(t, err)
	b = coll.NewBuilder(nil, op.Int64)
	b.Send(0, coll.Ref{}, 5)
	_, err = b.Plan("t")
	require.Error(t, err, "a dependency on a step that does not exist")
	b = coll.NewBuilder(nil, op.Int64)
	b.Reduce(coll.Ref{Len: 8}, coll.Ref{Len: 8})
	_, err = b.Plan("t")
	require.Error(t, err, "a reduce without an op")
}

// pingPlan: rank 0 sends n bytes to rank 1 and gets m back.
func pingPlans(t *testing.T, n, m int) []*coll.Plan {
	t.Helper()
	b0 := coll.NewBuilder(nil, op.Uint8)
	b0.Send(1, coll.Ref{Buf: coll.BufSend, Len: n})
	b0.Fence()
	b0.Recv(1, coll.Ref{Buf: coll.BufRecv, Len: n})
	p0, err := b0.Plan("ping")
	require.NoError(t, err)
	b1 := coll.NewBuilder(nil, op.Uint8)
	r := b1.Recv(0, coll.Ref{Buf: coll.BufRecv, Len: n})
	b1.Send(0, coll.Ref{Buf: coll.BufRecv, Len: m}, r)
	p1, err := b1.Plan("ping")
	require.NoError(t, err)
	return []*coll.Plan{p0, p1}
}

// A receive that gets a message of the wrong size fails the run with
// ErrMismatch instead of corrupting data; the verifier sees it statically.
func TestRunSizeMismatch(t *testing.T) {
	plans := pingPlans(t, 8, 4)
	require.Error(t, colltest.Verify(plans))
	f := colltest.NewFabric(2)
	runs := []*coll.Run{coll.NewRun(plans[0], f.Transport(0), 1, nil), coll.NewRun(plans[1], f.Transport(1), 1, nil)}
	buf0, buf1 := make([]byte, 8), make([]byte, 8)
	require.NoError(t, runs[0].Bind(buf0, buf0))
	require.NoError(t, runs[1].Bind(nil, buf1))
	require.NoError(t, runs[0].Start())
	require.NoError(t, runs[1].Start())
	require.True(t, runs[0].Finished())
	require.ErrorIs(t, runs[0].Err(), coll.ErrMismatch)
	require.NoError(t, runs[1].Err())
}

// A Run is reset and restarted with no allocation (persistent collectives).
func TestRunRestartZeroAlloc(t *testing.T) {
	plans := pingPlans(t, 64, 64)
	require.NoError(t, colltest.Verify(plans))
	f := colltest.NewFabric(2)
	runs := []*coll.Run{coll.NewRun(plans[0], f.Transport(0), 1, nil), coll.NewRun(plans[1], f.Transport(1), 1, nil)}
	send, recv0, recv1 := make([]byte, 64), make([]byte, 64), make([]byte, 64)
	require.NoError(t, runs[0].Bind(send, recv0))
	require.NoError(t, runs[1].Bind(nil, recv1))
	for i := range 3 {
		send[0] = byte(i)
		require.NoError(t, runs[1].Start())
		require.NoError(t, runs[0].Start())
		require.True(t, runs[0].Finished() && runs[1].Finished())
		require.Equal(t, byte(i), recv0[0])
	}
	require.Error(t, runs[0].Bind(nil, nil), "buffers shorter than the plan needs")
	empty, err := coll.NewBuilder(nil, op.Int64).Plan("empty")
	require.NoError(t, err)
	er := coll.NewRun(empty, f.Transport(0), 2, nil)
	require.NoError(t, er.Start())
	require.True(t, er.Finished(), "an empty plan completes at once")
}

// A waiter that asked for Done before the run completed gets a token; one
// that asks after it completed gets a channel that is ready at once, so a
// check of Finished followed by a receive on Done never misses the end.
func TestRunDoneWakes(t *testing.T) {
	plans := pingPlans(t, 8, 8)
	f := colltest.NewFabric(2)
	runs := []*coll.Run{coll.NewRun(plans[0], f.Transport(0), 1, nil), coll.NewRun(plans[1], f.Transport(1), 1, nil)}
	send, recv0, recv1 := make([]byte, 8), make([]byte, 8), make([]byte, 8)
	require.NoError(t, runs[0].Bind(send, recv0))
	require.NoError(t, runs[1].Bind(nil, recv1))
	ready := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	for range 3 {
		require.NoError(t, runs[1].Start())
		require.False(t, runs[1].Finished())
		done := runs[1].Done() // parked before the run completes
		require.False(t, ready(done))
		require.NoError(t, runs[0].Start())
		require.True(t, runs[1].Finished())
		require.True(t, ready(done), "the completion woke the parked waiter")
		require.True(t, ready(runs[1].Done()), "Done after completion is ready at once")
		require.True(t, ready(runs[0].Done()), "Done after completion is ready at once")
	}
}

// The rules table is well formed: every line names a registered algorithm
// of its collective, and every collective ends with an unbounded line.
func TestRulesWellFormed(t *testing.T) {
	last := map[coll.Coll]coll.Rule{}
	for _, r := range coll.Rules {
		found := false
		for _, a := range coll.Algorithms(r.Coll) {
			found = found || a.Name == r.Alg
		}
		require.True(t, found, "rule %+v names an unregistered algorithm", r)
		last[r.Coll] = r
	}
	for k := coll.Barrier; k < coll.NumColls; k++ {
		r, ok := last[k]
		require.True(t, ok, "%s has no rule", k)
		require.Zero(t, r.MaxSize+r.MaxBytes+int(r.When), "%s's last rule must be unbounded", k)
	}
}

// Selection never fails for a valid call: some algorithm of every
// collective handles every size, non-commutative ops and in place.
func TestSelectAlwaysFinds(t *testing.T) {
	for k := coll.Barrier; k < coll.NumColls; k++ {
		for _, size := range []int{1, 2, 3, 7, 16} {
			for _, inPlace := range []bool{false, true} {
				a := coll.Args{Coll: k, Size: size, Count: 1, ElemSize: 8, Type: op.Uint64, InPlace: inPlace}
				if k.Reduces() {
					a.Op = colltest.Affine
				}
				_, err := coll.Select(&a, "")
				require.NoError(t, err, "%s size %d in place %v", k, size, inPlace)
			}
		}
	}
	_, err := coll.Select(&coll.Args{Coll: coll.Allreduce, Size: 2}, "no-such")
	require.True(t, errors.Is(err, coll.ErrAlgorithm))
}
