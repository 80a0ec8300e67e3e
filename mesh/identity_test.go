//go:build !js && !wasip1

package mesh

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/peer"
	"github.com/meshmpi/meshmpi/signaling"
)

// member is one rank of a test job: its signaling client, mesh and
// endpoint.
type member struct {
	id     *peer.Identity
	client *signaling.Client
	m      *Mesh
	ep     *peer.Endpoint
}

// joinAs joins rank r of job with a certificate announced (announce) and
// one used for the links (use): the same for an honest rank.
func joinAs(t *testing.T, ctx context.Context, srv *signaling.Local, job, token string, r, size int, announce, use *peer.Identity) *member {
	t.Helper()
	c, err := signaling.Dial(ctx, srv.URL(), job, token, &signaling.DialOptions{Rank: &r, Fingerprint: announce.Fingerprint()})
	require.NoError(t, err)
	m := New(c, Net{Loopback: true, Identity: use})
	ep, err := peer.NewEndpoint(peer.Config{Rank: r, Size: size, Dialer: m})
	require.NoError(t, err)
	m.Start(ep)
	t.Cleanup(func() {
		ep.Close(nil)
		m.Close()
	})
	return &member{id: use, client: c, m: m, ep: ep}
}

func newIdentity(t *testing.T) *peer.Identity {
	id, err := peer.NewIdentity()
	require.NoError(t, err)
	return id
}

// exchange sends one message from a to rank to and receives it at b,
// returning the send's and the receive's errors.
func exchange(a, b *member, from, to int) (sendErr, recvErr error) {
	s, r := a.ep.GetOp(), b.ep.GetOp()
	buf := make([]byte, 16)
	if err := b.ep.StartRecv(r, from, 1, 7, buf); err != nil {
		return nil, err
	}
	if err := a.ep.StartSend(s, peer.Standard, to, 1, 7, []byte("sixteen bytes!!!")); err != nil {
		return err, nil
	}
	return waitOp(s), waitOp(r)
}

func waitOp(op *peer.Op) error {
	for !op.Finished() {
		<-op.Done()
	}
	return op.Result().Err
}

// A member that joins with one certificate and connects with another
// cannot pass for its rank: the honest ranks refuse its links with
// ErrIdentity, and go on among themselves.
func TestImpersonationRefused(t *testing.T) {
	srv, err := signaling.ListenLocal(signaling.Config{})
	require.NoError(t, err)
	defer srv.Close()
	toks, err := srv.SeatTokens("ident", 3, overWebRTC, time.Hour)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // hang guard
	defer cancel()

	id0, id1 := newIdentity(t), newIdentity(t)
	vouched, actual := newIdentity(t), newIdentity(t)
	ms := []*member{
		joinAs(t, ctx, srv, "ident", toks[0], 0, 3, id0, id0),
		joinAs(t, ctx, srv, "ident", toks[1], 1, 3, id1, id1),
		joinAs(t, ctx, srv, "ident", toks[2], 2, 3, vouched, actual),
	}
	for _, m := range ms {
		require.NoError(t, m.m.WaitReady(ctx))
	}

	sErr, rErr := exchange(ms[0], ms[1], 0, 1)
	require.NoError(t, sErr)
	require.NoError(t, rErr)

	// rank 0 offers to rank 2 (the lower rank offers): rank 2's answer
	// names a certificate the server did not vouch for
	op := ms[0].ep.GetOp()
	require.NoError(t, ms[0].ep.StartSend(op, peer.Standard, 2, 1, 7, []byte("x")))
	sErr = waitOp(op)
	require.ErrorIs(t, sErr, peer.ErrIdentity)
	require.ErrorIs(t, sErr, peer.ErrProcFailed)
	require.ErrorContains(t, sErr, actual.Fingerprint())

	// rank 1's link to rank 2 is refused the same way
	op = ms[1].ep.GetOp()
	require.NoError(t, ms[1].ep.StartSend(op, peer.Standard, 2, 1, 7, []byte("x")))
	require.ErrorIs(t, waitOp(op), peer.ErrIdentity)

	// the honest pair is untouched
	sErr, rErr = exchange(ms[1], ms[0], 1, 0)
	require.NoError(t, sErr)
	require.NoError(t, rErr)
}

// A member cannot redirect another rank's link with ICE candidates or
// set-up messages of its own making: the server stamps every signal with
// its sender's rank, whatever it claims, and a rank applies a signal only
// to its link with that sender.
func TestCandidateInjectionConfined(t *testing.T) {
	srv, err := signaling.ListenLocal(signaling.Config{})
	require.NoError(t, err)
	defer srv.Close()
	toks, err := srv.SeatTokens("inject", 3, overWebRTC, time.Hour)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // hang guard
	defer cancel()
	ms := make([]*member, 3)
	for r := range ms {
		id := newIdentity(t)
		ms[r] = joinAs(t, ctx, srv, "inject", toks[r], r, 3, id, id)
	}
	for _, m := range ms {
		require.NoError(t, m.m.WaitReady(ctx))
	}
	sErr, rErr := exchange(ms[0], ms[1], 0, 1)
	require.NoError(t, sErr)
	require.NoError(t, rErr)
	before, ok := ms[0].ep.LinkPath(1)
	require.True(t, ok)

	// rank 2 aims candidates at an address of its choice (here rank 1's
	// own, and a port of its choosing) and claims to be rank 1; it also
	// sends an offer and an answer nobody asked for
	evil := func(port int) []byte {
		b, _ := json.Marshal(map[string]any{"candidate": "candidate:1 1 udp 2130706431 127.0.0.1 " + strconv.Itoa(port) + " typ host", "sdpMid": "0", "sdpMLineIndex": 0})
		return b
	}
	for _, port := range []int{9, 4242, 65000} {
		require.NoError(t, ms[2].client.Send(ctx, &signaling.Signal{To: 0, From: 1, Kind: signaling.SignalCandidate, Payload: evil(port)}))
	}
	sdp, _ := json.Marshal("v=0\r\na=fingerprint:" + ms[2].id.Fingerprint() + "\r\n")
	require.NoError(t, ms[2].client.Send(ctx, &signaling.Signal{To: 0, From: 1, Kind: signaling.SignalOffer, Payload: sdp}))
	require.NoError(t, ms[2].client.Send(ctx, &signaling.Signal{To: 0, From: 1, Kind: signaling.SignalAnswer, Payload: sdp}))

	// then the honest pair talks on, over the same path
	for range 20 {
		sErr, rErr = exchange(ms[1], ms[0], 1, 0)
		require.NoError(t, sErr)
		require.NoError(t, rErr)
	}
	after, ok := ms[0].ep.LinkPath(1)
	require.True(t, ok)
	require.Equal(t, before.RemoteAddr, after.RemoteAddr, "rank 0's link to rank 1 moved")

	// and rank 2 is still a rank like the others: its own link works
	sErr, rErr = exchange(ms[2], ms[0], 2, 0)
	require.NoError(t, sErr)
	require.NoError(t, rErr)
}
