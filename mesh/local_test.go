//go:build !js && !wasip1

package mesh

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/peer"
	"github.com/meshmpi/meshmpi/signaling"
)

// overWebRTC is the settings of the tests of WebRTC links: their ranks
// share a process and a host, which would link them otherwise.
var overWebRTC = map[string]string{SettingLink: "webrtc"}

// joinKind joins rank r as kind with host (signaling's DialOptions.Host);
// a nil id joins without a certificate, which keeps the mesh out of the
// process's registry.
func joinKind(t *testing.T, ctx context.Context, srv *signaling.Local, job, token string, r, size int, kind signaling.ClientKind, host string, id *peer.Identity) *member {
	t.Helper()
	do := &signaling.DialOptions{Rank: &r, Kind: kind, Host: host}
	if id != nil {
		do.Fingerprint = id.Fingerprint()
	}
	c, err := signaling.Dial(ctx, srv.URL(), job, token, do)
	require.NoError(t, err)
	m := New(c, Net{Loopback: true, Identity: id})
	ep, err := peer.NewEndpoint(peer.Config{Rank: r, Size: size, Dialer: m})
	require.NoError(t, err)
	m.Start(ep)
	t.Cleanup(func() {
		ep.Close(nil)
		m.Close()
	})
	return &member{id: id, client: c, m: m, ep: ep}
}

// Each pair links the best way both ends support: memory between meshes
// of this process, a same-host link between processes of one host (here:
// meshes outside the registry), WebRTC for a browser, for hosts that
// differ, and for every pair when the job says link=webrtc. Both ends
// see the same kind, and a message crosses it both ways.
func TestLinkChoice(t *testing.T) {
	srv, err := signaling.ListenLocal(signaling.Config{})
	require.NoError(t, err)
	defer srv.Close()
	host := signaling.LocalHost()
	if host == "" || !hostLinks {
		host = "h1:test" // the choice is the mesh's; the link is peer's
	}
	wantHost := "shm"
	if !hostLinks {
		wantHost = "webrtc"
	}
	type end struct {
		kind signaling.ClientKind
		host string
		id   bool // with a certificate: in the registry
	}
	native := end{signaling.KindNative, host, true}
	for _, tc := range []struct {
		name     string
		settings map[string]string
		a, b     end
		want     string
	}{
		{"one process", nil, native, native, "memory"},
		{"one process, forced", overWebRTC, native, native, "webrtc"},
		{"one process, a WASI host and a rank", nil, native, end{signaling.KindWASI, host, true}, "memory"},
		{"one process, two WASI hosts", nil, end{signaling.KindWASI, host, true}, end{signaling.KindWASI, host, true}, "memory"},
		{"one host, a WASI host", nil, end{signaling.KindNative, host, false}, end{signaling.KindWASI, host, false}, wantHost},
		{"one host, two WASI hosts", nil, end{signaling.KindWASI, host, false}, end{signaling.KindWASI, host, false}, wantHost},
		{"one host", nil, end{signaling.KindNative, host, false}, end{signaling.KindNative, host, false}, wantHost},
		{"one host, forced", overWebRTC, end{signaling.KindNative, host, false}, end{signaling.KindNative, host, false}, "webrtc"},
		{"other hosts", nil, end{signaling.KindNative, "h1:a", false}, end{signaling.KindNative, "h1:b", false}, "webrtc"},
		{"no host", nil, end{signaling.KindNative, "-", false}, end{signaling.KindNative, "-", false}, "webrtc"},
		{"browser on the host", nil, end{signaling.KindNative, host, false}, end{signaling.KindBrowser, host, false}, "webrtc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // hang guard
			defer cancel()
			job := sanitize(t.Name())
			toks, err := srv.SeatTokens(job, 2, tc.settings, time.Hour)
			require.NoError(t, err)
			ends := []end{tc.a, tc.b}
			ms := make([]*member, 2)
			for r, e := range ends {
				var id *peer.Identity
				if e.id {
					id = newIdentity(t)
				}
				ms[r] = joinKind(t, ctx, srv, job, toks[r], r, 2, e.kind, e.host, id)
			}
			for _, m := range ms {
				require.NoError(t, m.m.WaitReady(ctx))
			}
			// the higher rank asks: the set-up's longer way
			sErr, rErr := exchange(ms[1], ms[0], 1, 0)
			require.NoError(t, sErr)
			require.NoError(t, rErr)
			sErr, rErr = exchange(ms[0], ms[1], 0, 1)
			require.NoError(t, sErr)
			require.NoError(t, rErr)
			for r, m := range ms {
				p, ok := m.ep.LinkPath(1 - r)
				require.True(t, ok)
				require.Equal(t, tc.want, p.Link, "rank %d", r)
			}
		})
	}
}

func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '_'
		}
	}
	return string(b)
}

// A rank of this process whose mesh is made after a peer of the same
// process started to link to it (its welcome came late) still gets a
// memory link: it reserved its certificate before joining (Reserve),
// and the peer waits for its mesh instead of linking otherwise.
func TestLinkChoiceMeshLate(t *testing.T) {
	srv, err := signaling.ListenLocal(signaling.Config{})
	require.NoError(t, err)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // hang guard
	defer cancel()
	host := signaling.LocalHost()
	if host == "" {
		host = "h1:test"
	}
	toks, err := srv.SeatTokens("late", 2, nil, time.Hour)
	require.NoError(t, err)
	// rank 1 reserves and joins, but makes its mesh only later
	id1 := newIdentity(t)
	release := Reserve(id1.Fingerprint())
	defer release()
	one := 1
	c1, err := signaling.Dial(ctx, srv.URL(), "late", toks[1], &signaling.DialOptions{Rank: &one, Kind: signaling.KindNative, Host: host, Fingerprint: id1.Fingerprint()})
	require.NoError(t, err)
	m0 := joinKind(t, ctx, srv, "late", toks[0], 0, 2, signaling.KindNative, host, newIdentity(t))
	require.NoError(t, m0.m.WaitReady(ctx))
	// rank 0 links first: its connect starts while rank 1 has no mesh
	s := m0.ep.GetOp()
	require.NoError(t, m0.ep.StartSend(s, peer.Standard, 1, 1, 7, []byte("sixteen bytes!!!")))
	require.Eventually(t, func() bool {
		m0.m.mu.Lock()
		defer m0.m.mu.Unlock()
		return m0.m.pairs[1] != nil
	}, 20*time.Second, time.Millisecond)
	m1 := New(c1, Net{Loopback: true, Identity: id1})
	ep1, err := peer.NewEndpoint(peer.Config{Rank: 1, Size: 2, Dialer: m1})
	require.NoError(t, err)
	m1.Start(ep1)
	t.Cleanup(func() {
		ep1.Close(nil)
		m1.Close()
	})
	r := ep1.GetOp()
	buf := make([]byte, 16)
	require.NoError(t, ep1.StartRecv(r, 0, 1, 7, buf))
	require.NoError(t, waitOp(s))
	require.NoError(t, waitOp(r))
	require.Equal(t, "sixteen bytes!!!", string(buf))
	for r, ep := range []*peer.Endpoint{m0.ep, ep1} {
		p, ok := ep.LinkPath(1 - r)
		require.True(t, ok)
		require.Equal(t, "memory", p.Link, "rank %d", r)
	}
}
