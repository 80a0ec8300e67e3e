//go:build !js && !wasip1

package meshmpi

import (
	"context"
	"testing"
	"time"

	"github.com/meshmpi/meshmpi/internal/leaktest"
	"github.com/meshmpi/meshmpi/signaling"
	"github.com/stretchr/testify/require"
)

// A rank that dies before the job forms fails every other rank's Join at
// once, and the Join of a rank that comes later (item 8 of issue 14: they
// waited for the whole join timeout, two minutes under Init). The test's
// context only guards against a hang: the failure must come from the
// server, not from it.
func TestMeshJoinFailsWhenRankDiesEarly(t *testing.T) {
	leaktest.Check(t)
	srv, err := signaling.ListenLocal(signaling.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	const n = 4
	toks, err := srv.SeatTokens("early", n, map[string]string{SettingNetwork: "loopback"}, time.Hour)
	require.NoError(t, err)
	spec := func(r int) JobSpec {
		return JobSpec{Signal: srv.URL(), Job: "early", Token: toks[r], Rank: AnyRank}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// rank 0: a process that joins and dies before the others are all in
	r0, err := signaling.Dial(ctx, srv.URL(), "early", toks[0], nil)
	require.NoError(t, err)
	errs := make(chan error, 2)
	for r := 1; r <= 2; r++ {
		go func() {
			s, err := Join(ctx, spec(r))
			if s != nil {
				s.Abort(nil)
			}
			errs <- err
		}()
	}
	for srv.Stats().Ranks < 3 { // ranks 1 and 2 wait in the job
		select {
		case err := <-errs:
			t.Fatalf("a Join returned before the departure: %v", err)
		case <-time.After(time.Millisecond):
		}
	}
	require.NoError(t, r0.Close())
	for range 2 {
		err := <-errs
		require.ErrorIs(t, err, ErrProcFailed)
		require.ErrorIs(t, err, signaling.ErrJobGone)
		require.NoError(t, ctx.Err(), "the hang guard ended the join")
	}
	// rank 3 comes after the departure
	_, err = Join(ctx, spec(3))
	require.ErrorIs(t, err, ErrProcFailed)
	require.ErrorIs(t, err, signaling.ErrJobGone)
	require.ErrorContains(t, err, "rank 0 left before the job formed")
}
