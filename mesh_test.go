//go:build !js && !wasip1

package meshmpi

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meshmpi/meshmpi/coll"
	"github.com/meshmpi/meshmpi/coll/colltest"
	"github.com/meshmpi/meshmpi/internal/leaktest"
	"github.com/meshmpi/meshmpi/signaling"
	"github.com/stretchr/testify/require"
)

// localJobs starts a signaling server on loopback for the test and returns
// a maker of fresh jobs on it (loopback ICE mode, plus settings).
func localJobs(t *testing.T, settings map[string]string) func(t *testing.T, n int) JobSpec {
	t.Helper()
	// These jobs test MPI semantics, not liveness: a rank the loaded
	// machine starves (a -race run beside other packages' tests) must not
	// be declared failed by the server's 3 s default ping timeout.
	srv, err := signaling.ListenLocal(signaling.Config{PingTimeout: time.Minute})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	// in-process ranks would link in memory: these tests are of WebRTC
	s := map[string]string{SettingNetwork: "loopback", SettingLink: "webrtc"}
	for k, v := range settings {
		s[k] = v
	}
	var seq atomic.Int64
	return func(t *testing.T, n int) JobSpec {
		job := fmt.Sprintf("%s-%d", t.Name(), seq.Add(1))
		job = sanitizeJob(job)
		tok, err := srv.Token(job, n, s, time.Hour)
		require.NoError(t, err)
		return JobSpec{Signal: srv.URL(), Job: job, Token: tok, Rank: AnyRank}
	}
}

func sanitizeJob(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '_'
		}
	}
	return string(b)
}

// overMesh makes world run every world of the test as a job over the real
// mesh, and checks that nothing outlives the test.
func overMesh(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("WebRTC jobs in -short mode")
	}
	leaktest.Check(t)
	worldJob = localJobs(t, nil)
	t.Cleanup(func() { worldJob = nil })
}

// The point-to-point semantics tests, run again with every world a job
// whose ranks talk over real pion data channels on loopback, set up through
// a real signaling server.
func TestMeshPointToPoint(t *testing.T) {
	overMesh(t)
	for _, tc := range []struct {
		name string
		fn   func(*testing.T)
	}{
		{"SendRecvSizes", TestSendRecvSizes},
		{"Ordering", TestOrdering},
		{"Wildcards", TestWildcards},
		{"Truncation", TestTruncation},
		{"ZeroLength", TestZeroLength},
		{"SelfSend", TestSelfSend},
		{"SsendWaitsForMatch", TestSsendWaitsForMatch},
		{"Probe", TestProbe},
		{"CancelPostedReceive", TestCancelPostedReceive},
		{"PersistentPair", TestPersistentPair},
		{"SendrecvReplace", TestSendrecvReplace},
		{"RecvAccumulate", TestRecvAccumulate},
	} {
		t.Run(tc.name, tc.fn)
	}
}

// The rest of the MPI surface runs unchanged over the real mesh: derived
// datatypes in point-to-point and Alltoallw, intercommunicators and their
// collectives, and neighborhood collectives on process topologies.
func TestMeshDatatypesTopologiesIntercomms(t *testing.T) {
	overMesh(t)
	for _, tc := range []struct {
		name string
		fn   func(*testing.T)
	}{
		{"TypedMatrixColumns", TestTypedMatrixColumns},
		{"TypedStructRecords", TestTypedStructRecords},
		{"Alltoallw", TestAlltoallw},
		{"IntercommCollectives", TestIntercommCollectives},
		{"IntercommAlltoallw", TestIntercommAlltoallw},
		{"NeighborCollectives", TestNeighborCollectives},
		{"NeighborAlltoallw", TestNeighborAlltoallw},
	} {
		t.Run(tc.name, tc.fn)
	}
}

// A collective subset in all three forms on 2-, 4- and 8-rank jobs over
// the real mesh, against the sequential reference: counts that travel
// eagerly and by rendezvous.
func TestMeshCollectives(t *testing.T) {
	overMesh(t)
	for _, k := range []coll.Coll{coll.Barrier, coll.Bcast, coll.Reduce, coll.Allreduce, coll.Allgather, coll.Alltoall, coll.ReduceScatterBlock, coll.Scan} {
		for _, size := range []int{2, 4, 8} {
			for _, count := range []int{1, 5000} {
				cs := colltest.Case{Coll: k, Size: size, Count: count, Root: size - 1}
				if k.Reduces() {
					cs.Op = colltest.Affine
				}
				for _, f := range forms {
					t.Run(fmt.Sprintf("%s/%s", cs, f.name), func(t *testing.T) {
						collCase(t, f.form, cs, 3)
					})
				}
			}
		}
	}
}

// A 16-rank job on one machine forms, a ring exchange over lazy links opens
// at most two connections per rank, and an Allreduce and a Barrier
// complete.
func TestMeshSixteenRanks(t *testing.T) {
	if testing.Short() {
		t.Skip("WebRTC jobs in -short mode")
	}
	leaktest.Check(t)
	const n = 16
	jobs := localJobs(t, nil)
	require.NoError(t, Run(n, func(w *Comm) error {
		r := w.Rank()
		got := []int64{-1}
		if _, err := Sendrecv(w, []int64{int64(r)}, (r+1)%n, 0, got, (r+n-1)%n, 0); err != nil {
			return err
		}
		if err := expect(got[0] == int64((r+n-1)%n), "ring: got %d", got[0]); err != nil {
			return err
		}
		// exactly the two neighbours' links: no more, and real ones.
		// Counted in turn round the ring (a token), and nobody goes on
		// to the Allreduce, whose partners would open other links,
		// before everyone counted (a second round)
		count := func() error {
			if links := w.p.ep.Links(); links != 2 {
				return fmt.Errorf("ring opened %d connections at rank %d, want 2", links, r)
			}
			return nil
		}
		tok := []int64{0}
		for round := range 2 {
			if r != 0 {
				if _, err := Recv(w, tok, r-1, 1+round); err != nil {
					return err
				}
			}
			if round == 0 {
				if err := count(); err != nil {
					return err
				}
			}
			if err := Send(w, tok, (r+1)%n, 1+round); err != nil {
				return err
			}
			if r == 0 {
				if _, err := Recv(w, tok, n-1, 1+round); err != nil {
					return err
				}
			}
		}
		sum := []int64{0}
		if err := Allreduce(w, []int64{int64(r + 1)}, sum, Sum); err != nil {
			return err
		}
		if err := expect(sum[0] == n*(n+1)/2, "allreduce: got %d", sum[0]); err != nil {
			return err
		}
		return Barrier(w)
	}, WithJob(jobs(t, n))))
}

// Join fails cleanly, leaving nothing running: a wrong token, an expired
// one, a setting this build does not know, and a job that never fills.
func TestMeshJoinRejected(t *testing.T) {
	leaktest.Check(t)
	// These jobs test MPI semantics, not liveness: a rank the loaded
	// machine starves (a -race run beside other packages' tests) must not
	// be declared failed by the server's 3 s default ping timeout.
	srv, err := signaling.ListenLocal(signaling.Config{PingTimeout: time.Minute})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	token := func(job string, n int, settings map[string]string, ttl time.Duration) string {
		tok, err := srv.Token(job, n, settings, ttl)
		require.NoError(t, err)
		return tok
	}
	other, err := signaling.ListenLocal(signaling.Config{})
	require.NoError(t, err)
	foreign, err := other.Token("j", 1, nil, time.Hour)
	require.NoError(t, err)
	require.NoError(t, other.Close())

	for _, tc := range []struct {
		name  string
		spec  JobSpec
		short bool // a bounded wait for a job that never forms
		want  error
	}{
		{"foreign token", JobSpec{Job: "j", Token: foreign}, false, signaling.ErrBadToken},
		{"token of another job", JobSpec{Job: "j", Token: token("k", 1, nil, time.Hour)}, false, signaling.ErrBadToken},
		{"expired token", JobSpec{Job: "j", Token: token("j", 1, nil, -time.Minute)}, false, signaling.ErrExpired},
		// Each joinable job has an id of its own: the server may still hold
		// the previous case's job, of another size or settings, for a moment.
		{"unknown setting", JobSpec{Job: "s", Token: token("s", 1, map[string]string{"frobnicate": "yes"}, time.Hour)}, false, ErrNotSupported},
		{"bad algorithm", JobSpec{Job: "a", Token: token("a", 1, map[string]string{"coll.allreduce": "magic"}, time.Hour)}, false, ErrAlgorithm},
		{"job never fills", JobSpec{Job: "n", Token: token("n", 2, nil, time.Hour)}, true, context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.spec.Signal, tc.spec.Rank = srv.URL(), AnyRank
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // hang guard
			if tc.short {
				ctx, cancel = context.WithTimeout(context.Background(), 300*time.Millisecond)
			}
			defer cancel()
			s, err := Join(ctx, tc.spec)
			require.ErrorIs(t, err, tc.want)
			require.Nil(t, s)
		})
	}
}

// A member of the job that is not a meshmpi rank sends rank 0 garbage in
// place of an offer: rank 0's messages to it fail with ErrProcFailed, and
// the rest of the job is unharmed.
func TestMeshBadPeerSignals(t *testing.T) {
	leaktest.Check(t)
	spec := localJobs(t, nil)(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // hang guard
	defer cancel()
	two := 2
	rogue, err := signaling.Dial(ctx, spec.Signal, spec.Job, spec.Token, &signaling.DialOptions{Rank: &two})
	require.NoError(t, err)
	defer rogue.Close()
	go func() {
		for m := range rogue.Messages() {
			if s, ok := m.(*signaling.Signal); ok && s.Kind == signaling.SignalOffer {
				_ = rogue.Signal(ctx, s.From, signaling.SignalAnswer, json.RawMessage(`{"not":"sdp"}`))
			}
		}
	}()
	err = Run(2, func(w *Comm) error {
		if w.Rank() == 0 {
			// the world is 3 ranks; rank 2 is the rogue
			err := Send(w, []byte("hi"), 2, 0)
			if err := expectErr(err, ErrProcFailed, "send to the rogue"); err != nil {
				return err
			}
		}
		got := []byte{0}
		_, err := Sendrecv(w, []byte{byte(w.Rank())}, 1-w.Rank(), 1, got, 1-w.Rank(), 1)
		if err != nil {
			return err
		}
		return expect(got[0] == byte(1-w.Rank()), "got %d", got[0])
	}, WithJob(spec))
	// Run's final barrier spans the world of 3, which the rogue never joins
	require.ErrorIs(t, err, ErrProcFailed)
}

// Point-to-point among every pair of an 8-rank job at once: each rank
// sends every other an eager and a rendezvous message and receives with
// AnySource, so every pair connects while traffic flows in both
// directions (both ranks of a pair dial at once: one connection each).
func TestMeshAllPairs(t *testing.T) {
	if testing.Short() {
		t.Skip("WebRTC jobs in -short mode")
	}
	leaktest.Check(t)
	const n = 8
	sizes := []int{3, 40_000} // int64s: eager, and rendezvous across several frames
	world := localJobs(t, nil)
	require.NoError(t, Run(n, func(w *Comm) error {
		r := w.Rank()
		var reqs []*Request
		for d := range n {
			if d == r {
				continue
			}
			for i, sz := range sizes {
				q, err := Isend(w, fill(r, d*10+i, sz), d, i)
				if err != nil {
					return err
				}
				reqs = append(reqs, q)
			}
		}
		for i, sz := range sizes {
			for range n - 1 {
				got := make([]int64, sz)
				st, err := Recv(w, got, AnySource, i)
				if err != nil {
					return err
				}
				if !slices.Equal(got, fill(st.Source, r*10+i, sz)) {
					return fmt.Errorf("message %d from rank %d differs", i, st.Source)
				}
			}
		}
		if err := Waitall(context.Background(), reqs, nil); err != nil {
			return err
		}
		return expect(w.p.ep.Links() == n-1, "rank %d has %d links, want %d", r, w.p.ep.Links(), n-1)
	}, WithJob(world(t, n))))
}

// LinkInfo over the real mesh: WebRTC host-to-host pairs on loopback.
func TestMeshLinkInfo(t *testing.T) {
	overMesh(t)
	TestLinkInfo(t)
}
