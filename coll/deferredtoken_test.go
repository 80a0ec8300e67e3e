package coll_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/coll"
	"github.com/meshmpi/meshmpi/coll/colltest"
	"github.com/meshmpi/meshmpi/op"
)

// The token receive that may outlive its call is the only receive of a
// rank that only sends, on an intracommunicator: the root of Bcast (in
// scatter-allgather too: it holds every block, so its ring only sends),
// Scatter and Scatterv, a leaf of Reduce and Gather; not a rank that
// receives data, nor intercommunicator plans.
func TestPlanDeferrable(t *testing.T) {
	cases := []struct {
		name       string
		c          coll.Coll
		alg        string
		rank, size int
		root       int
		remote     int
		want       bool
	}{
		{"bcast binomial root", coll.Bcast, "binomial", 2, 5, 2, 0, true},
		{"bcast binomial inner", coll.Bcast, "binomial", 3, 5, 2, 0, false},
		{"bcast scatter-allgather root", coll.Bcast, "scatter_allgather", 0, 4, 0, 0, true},
		{"bcast scatter-allgather leaf", coll.Bcast, "scatter_allgather", 3, 4, 0, 0, false},
		{"scatter root", coll.Scatter, "binomial", 1, 4, 1, 0, true},
		{"scatter leaf", coll.Scatter, "binomial", 0, 4, 1, 0, false},
		{"scatterv root", coll.Scatterv, "linear", 0, 3, 0, 0, true},
		{"reduce leaf", coll.Reduce, "binomial", 1, 2, 0, 0, true},
		{"reduce root", coll.Reduce, "binomial", 0, 2, 0, 0, false},
		{"gather leaf", coll.Gather, "binomial", 3, 4, 0, 0, true},
		{"gather root", coll.Gather, "binomial", 0, 4, 0, 0, false},
		{"allreduce", coll.Allreduce, "recursive_doubling", 0, 2, 0, 0, false},
		{"inter bcast root", coll.Bcast, "inter_remote_send_local_bcast", 0, 2, coll.InterRootSelf, 2, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := coll.Args{Coll: tc.c, Rank: tc.rank, Size: tc.size, Root: tc.root, Count: 64, ElemSize: 8, Type: op.Int64, Op: op.Sum, RemoteSize: tc.remote, RemoteCount: 8}
			if tc.c == coll.Scatterv {
				a.Counts, a.Displs = []int{8, 8, 8}, []int{0, 8, 16}
			}
			alg, err := coll.Select(&a, tc.alg)
			if err != nil && tc.remote > 0 {
				alg, err = coll.Select(&a, "")
			}
			require.NoError(t, err)
			p, err := coll.Build(alg, &a)
			require.NoError(t, err)
			require.Equal(t, tc.want, p.Deferrable >= 0, "%s: deferrable step %d", p.Name, p.Deferrable)
			if tc.want {
				require.Equal(t, coll.StepRecv, p.Steps[p.Deferrable].Kind)
				require.Less(t, int(p.Deferrable), p.Tokens)
			}
		})
	}
}

// abandons counts a transport's Abandon calls.
type abandons struct {
	coll.Transport
	n   int
	err error
}

func (a *abandons) Abandon(tag uint32, err error) {
	a.n++
	a.err = err
	a.Transport.Abandon(tag, err)
}

// rootRuns returns the runs of a 2-rank binomial Bcast of 8 bytes from
// rank 0 on f, rank 0's transport counting Abandons, rank 0's deferring
// its token.
func rootRuns(t *testing.T, f *colltest.Fabric) ([]*coll.Run, *abandons) {
	t.Helper()
	alg, err := coll.Select(&coll.Args{Coll: coll.Bcast, Size: 2, Count: 1, ElemSize: 8, Type: op.Int64}, "binomial")
	require.NoError(t, err)
	tr := &abandons{Transport: f.Transport(0)}
	runs := make([]*coll.Run, 2)
	for r := range 2 {
		a := coll.Args{Coll: coll.Bcast, Rank: r, Size: 2, Count: 1, ElemSize: 8, Type: op.Int64}
		p, err := coll.Build(alg, &a)
		require.NoError(t, err)
		var tp coll.Transport = f.Transport(r)
		if r == 0 {
			tp = tr
		}
		runs[r] = coll.NewRun(p, tp, 1<<coll.SigBits, nil)
		require.NoError(t, runs[r].Bind(make([]byte, 8), make([]byte, 8)))
	}
	runs[0].DeferToken()
	return runs, tr
}

// The root's run finishes before the other rank starts; its token stays
// outstanding (the run refuses to start again) until the other rank's
// token comes, which settles it with no error and leaves nothing behind.
func TestRunDeferredToken(t *testing.T) {
	f := colltest.NewFabric(2)
	runs, _ := rootRuns(t, f)
	require.NoError(t, runs[0].Start())
	require.True(t, runs[0].Finished(), "the root finished on its sends")
	require.NoError(t, runs[0].Err())
	require.False(t, runs[0].Settled())
	settled := runs[0].SettledDone()
	require.Error(t, runs[0].Start(), "a run whose token is outstanding does not start")
	require.NoError(t, runs[1].Start())
	require.True(t, runs[1].Finished())
	require.NoError(t, runs[1].Err())
	require.True(t, runs[0].Settled())
	select {
	case <-settled:
	default:
		t.Fatal("the token did not wake the parked waiter")
	}
	require.NoError(t, runs[0].TokenErr())
	require.NoError(t, f.Pending())
	// without DeferToken the same run waits for its token again
	require.NoError(t, runs[0].Start())
	require.False(t, runs[0].Finished())
	require.NoError(t, runs[1].Start())
	require.True(t, runs[0].Finished() && runs[0].Settled())
	require.NoError(t, f.Pending())
}

// A deferred token that fails after its run finished (an Abort: another
// rank reported the collective) is withdrawn through the transport and
// reported by TokenErr; the run's own error stays nil, as its call saw it.
func TestRunDeferredTokenAbort(t *testing.T) {
	f := colltest.NewFabric(2)
	runs, tr := rootRuns(t, f)
	require.NoError(t, runs[0].Start())
	require.True(t, runs[0].Finished() && !runs[0].Settled())
	reported := errors.New("reported by another rank")
	require.True(t, runs[0].Abort(reported), "too late for the call")
	require.True(t, runs[0].Settled())
	require.ErrorIs(t, runs[0].TokenErr(), reported)
	require.NoError(t, runs[0].Err())
	require.Equal(t, 1, tr.n, "abandoned once")
}

// A deferred token that arrives wrong (here: with a payload, where a
// token has none) fails after the call: the transport is told (Abandon,
// which tells the other ranks of a mismatch) and TokenErr reports it.
func TestRunDeferredTokenLateFailure(t *testing.T) {
	f := colltest.NewFabric(2)
	runs, tr := rootRuns(t, f)
	require.NoError(t, runs[0].Start())
	require.True(t, runs[0].Finished() && !runs[0].Settled())
	require.NoError(t, f.Transport(1).Send(0, 1<<coll.SigBits, []byte{1}, nopCompleter{}, 0))
	require.True(t, runs[0].Settled())
	require.Error(t, runs[0].TokenErr())
	require.NoError(t, runs[0].Err())
	require.Equal(t, 1, tr.n)
	require.Equal(t, tr.err, runs[0].TokenErr())
}

type nopCompleter struct{}

func (nopCompleter) Complete(int32, int, error) {}
