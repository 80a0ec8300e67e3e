//go:build !js && !wasip1

package peer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meshmpi/meshmpi/internal/leaktest"
	"github.com/stretchr/testify/require"
)

var nativeConfig = WebRTCConfig{Loopback: true, NativeRemote: true}

// bothPaths are the link's two paths on loopback, for tests that run
// over each.
var bothPaths = []struct {
	name string
	cfg  WebRTCConfig
}{{"pion", loopbackConfig}, {"native", nativeConfig}}

// The dialer's NativeRemote picks the path; the acceptor follows the
// offer. On the native path both sides send large SCTP packets, and
// messages of every size arrive intact, both ways at once.
func TestNativeLinkPath(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cfg    WebRTCConfig
		native bool
	}{
		{"native", nativeConfig, true},
		{"pion", loopbackConfig, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leaktest.Check(t)
			hangGuard(t, 30*time.Second)
			a, b, la, lb := webrtcEndpoints(t, tc.cfg)
			for _, l := range []*webrtcLink{la, lb} {
				require.Equal(t, tc.native, l.nat != nil)
				require.Equal(t, tc.native, l.pc == nil)
				require.Equal(t, pathFrame(tc.cfg), l.MaxFrame())
				if tc.native {
					require.Equal(t, nativeMTU, l.nat.mtu)
					require.Equal(t, "host", l.Path().Local)
				}
			}
			f := pathFrame(tc.cfg)
			for i, n := range []int{0, 1, 8, 8 << 10, 64 << 10, 64<<10 + 1, f - HeaderLen, f - HeaderLen + 1, 256 << 10, 1 << 20, 3<<20 + 7} {
				src := [2][]byte{pattern(n, i), pattern(n, i+100)}
				dst := [2][]byte{make([]byte, n), make([]byte, n)}
				sa, sb, ra, rb := a.GetOp(), b.GetOp(), a.GetOp(), b.GetOp()
				require.NoError(t, a.StartSend(sa, Standard, 1, 0, int32(i), src[0]))
				require.NoError(t, b.StartSend(sb, Standard, 0, 0, int32(i), src[1]))
				require.NoError(t, b.StartRecv(rb, 0, 0, int32(i), dst[0]))
				require.NoError(t, a.StartRecv(ra, 1, 0, int32(i), dst[1]))
				for _, op := range []*Op{sa, sb, ra, rb} {
					require.NoError(t, waitTimeout(t, op, 20*time.Second).Err, "%d bytes", n)
				}
				require.True(t, bytes.Equal(src[0], dst[0]), "%d bytes", n)
				require.True(t, bytes.Equal(src[1], dst[1]), "%d bytes", n)
			}
		})
	}
}

// The native offer carries the capability; pion's offers, and so a
// browser's, do not.
func TestNativeOffer(t *testing.T) {
	for _, tc := range []struct {
		sdp  string
		want bool
	}{
		{"v=0\r\na=x-meshmpi-sctp-mtu:8150\r\n", true},
		{"v=0\r\na=sctp-port:5000\r\na=max-message-size:262144\r\n", false},
		{"", false},
	} {
		require.Equal(t, tc.want, nativeOffer([]byte(tc.sdp)), tc.sdp)
	}
}

// The DTLS certificate must be the one the description named.
func TestNativeVerifyFingerprint(t *testing.T) {
	cert := []byte("certificate")
	sum := sha256.Sum256(cert)
	var parts []string
	for _, c := range sum {
		parts = append(parts, fmt.Sprintf("%02X", c))
	}
	good := "sha-256 " + strings.Join(parts, ":")
	require.NoError(t, verifyFingerprint([][]byte{cert}, good))
	require.ErrorIs(t, verifyFingerprint([][]byte{[]byte("other")}, good), ErrIdentity)
	require.ErrorIs(t, verifyFingerprint(nil, good), ErrIdentity)
}

// BenchmarkWebRTCPaths compares pion's path and the native one through two
// endpoints on loopback, in one process: the 8 B round trip, and 64 KiB
// and 1 MiB messages one after another; then the data channel alone (no
// endpoint): the 8 B echo and a stream of 64 KiB writes. With -count, the paths
// alternate, so both see the same machine load.
func BenchmarkWebRTCPaths(b *testing.B) {
	for _, p := range []struct {
		name string
		cfg  WebRTCConfig
	}{{"pion", loopbackConfig}, {"native", nativeConfig}} {
		b.Run(p.name+"/pingpong-8B", func(b *testing.B) { benchPingPong(b, p.cfg) })
		for _, n := range []int{64 << 10, 1 << 20} {
			b.Run(fmt.Sprintf("%s/bandwidth-%dKiB", p.name, n>>10), func(b *testing.B) { benchBandwidth(b, p.cfg, n) })
		}
		b.Run(p.name+"/raw-pingpong-8B", func(b *testing.B) { benchRawPingPong(b, p.cfg) })
		b.Run(p.name+"/raw-stream", func(b *testing.B) { benchRawBandwidth(b, p.cfg) })
	}
}

// A standard WebRTC answerer (pion's peer connection here, a browser
// alike) reads the native offer as an ordinary one and answers without
// the capability: the link still connects, its dialer sending standard
// 1,191-byte packets, so a wrong NativeRemote costs speed, not the link.
func TestNativeOfferStandardAnswer(t *testing.T) {
	leaktest.Check(t)
	hangGuard(t, 30*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sa, sb := newChanSignalers()
	accepted := make(chan Link, 1)
	go func() {
		l, err := connectPion(ctx, loopbackConfig.withDefaults(), sb, false, newRTCSetup())
		if err != nil {
			t.Errorf("standard answerer: %v", err)
		}
		accepted <- l
	}()
	la, err := DialWebRTC(ctx, nativeConfig, sa)
	lb := <-accepted
	require.NoError(t, err)
	require.NotNil(t, lb)
	dialer, answerer := la.(*webrtcLink), lb.(*webrtcLink)
	require.NotNil(t, dialer.nat)
	require.Equal(t, standardMTU, dialer.nat.mtu)
	require.NotNil(t, answerer.pc)

	a, b := attachedPair(t, la, lb, 0)
	msg, got := pattern(300_000, 7), make([]byte, 300_000)
	s, r := a.GetOp(), b.GetOp()
	require.NoError(t, b.StartRecv(r, 0, 0, 1, got))
	require.NoError(t, a.StartSend(s, Standard, 1, 0, 1, msg))
	require.NoError(t, waitTimeout(t, r, 20*time.Second).Err)
	require.NoError(t, waitTimeout(t, s, 20*time.Second).Err)
	require.Equal(t, msg, got)
}
