//go:build !js && !wasip1

package mesh

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/peer"
	"github.com/meshmpi/meshmpi/signaling"
)

// A higher rank that cannot dial the lower rank's same-host offer tells
// it so, and the pair links over WebRTC at once (well within hostSetup,
// which the hang guard is shorter than), whichever rank asks first and
// whether the dial finds no listener or a handshake that fails; both
// ends' LinkInfo says webrtc, and a message crosses both ways.
func TestHostDialFailsFallsBack(t *testing.T) {
	if !hostLinks {
		t.Skip("no same-host links in this build")
	}
	host := signaling.LocalHost()
	if host == "" {
		host = "h1:test"
	}
	srv, err := signaling.ListenLocal(signaling.Config{})
	require.NoError(t, err)
	defer srv.Close()
	var dials atomic.Int32
	defer func(d func(context.Context, peer.HostConfig, string) (peer.Link, error)) { dialHost = d }(dialHost)
	// what the higher rank dials instead of the offer (name secret)
	nowhere := func(o string) string { return "meshmpi-host1 meshmpi-nobody-listens " + o[len(o)-64:] }
	wrongSecret := func(o string) string { return o[:len(o)-64] + strings.Repeat("0", 64) }
	for _, tc := range []struct {
		name   string
		asker  int                 // the rank that sends first
		mangle func(string) string // nil: the offer as sent
		want   string
	}{
		{"unreachable, higher asks", 1, nowhere, "webrtc"},
		{"unreachable, lower asks", 0, nowhere, "webrtc"},
		{"handshake refused", 1, wrongSecret, "webrtc"},
		{"dial works", 1, nil, "shm"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dials.Store(0)
			dialHost = func(ctx context.Context, cfg peer.HostConfig, offer string) (peer.Link, error) {
				dials.Add(1)
				if tc.mangle != nil {
					offer = tc.mangle(offer)
				}
				return peer.DialHost(ctx, cfg, offer)
			}
			ctx, cancel := context.WithTimeout(context.Background(), hostSetup/2) // hang guard
			defer cancel()
			job := sanitize(t.Name())
			toks, err := srv.SeatTokens(job, 2, nil, time.Hour)
			require.NoError(t, err)
			ms := make([]*member, 2)
			for r := range ms {
				ms[r] = joinKind(t, ctx, srv, job, toks[r], r, 2, signaling.KindNative, host, nil)
			}
			for _, m := range ms {
				require.NoError(t, m.m.WaitReady(ctx))
			}
			from := tc.asker
			sErr, rErr := exchange(ms[from], ms[1-from], from, 1-from)
			require.NoError(t, sErr)
			require.NoError(t, rErr)
			sErr, rErr = exchange(ms[1-from], ms[from], 1-from, from)
			require.NoError(t, sErr)
			require.NoError(t, rErr)
			require.Equal(t, int32(1), dials.Load(), "the higher rank dials once")
			for r, m := range ms {
				p, ok := m.ep.LinkPath(1 - r)
				require.True(t, ok)
				require.Equal(t, tc.want, p.Link, "rank %d", r)
			}
		})
	}
}
