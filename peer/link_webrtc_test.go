//go:build !js && !wasip1

package peer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/meshmpi/meshmpi/internal/leaktest"
	"github.com/pion/webrtc/v4"
	"github.com/stretchr/testify/require"
)

var _ Link = (*webrtcLink)(nil)

var loopbackConfig = WebRTCConfig{Loopback: true}

// connectWebRTCPair connects two links over real pion on loopback.
func connectWebRTCPair(tb testing.TB, cfg WebRTCConfig) (*webrtcLink, *webrtcLink) {
	tb.Helper()
	la, lb := connectLinks(tb, cfg)
	return la.(*webrtcLink), lb.(*webrtcLink)
}

// webrtcEndpoints returns ranks 0 and 1 joined by a WebRTC link; the
// cleanup closes both.
func webrtcEndpoints(tb testing.TB, cfg WebRTCConfig) (*Endpoint, *Endpoint, *webrtcLink, *webrtcLink) {
	tb.Helper()
	la, lb := connectWebRTCPair(tb, cfg)
	a, b := attachedPair(tb, la, lb, 0)
	return a, b, la, lb
}

// hangGuard dumps the goroutines and fails if the test runs past d.
func hangGuard(tb testing.TB, d time.Duration) {
	t := time.AfterFunc(d, func() {
		_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
		panic("test hung: " + tb.Name())
	})
	tb.Cleanup(func() { t.Stop() })
}

func TestWebRTCConfigValidate(t *testing.T) {
	require.NoError(t, WebRTCConfig{}.Validate())
	require.NoError(t, WebRTCConfig{ICEServers: []ICEServer{{URLs: []string{"stun:stun.example.org:3478"}}}}.Validate())
	for _, bad := range []WebRTCConfig{
		{HighWater: 1000, LowWater: 1000},
		{HighWater: -1},
		{LowWater: -5},
		{ICEServers: []ICEServer{{}}},
		{ICEServers: []ICEServer{{URLs: []string{"http://x"}}}},
		{ICEServers: []ICEServer{{URLs: []string{"turn:x:3478"}}}},
		{MaxFrame: HeaderLen},
		{MaxFrame: -1},
	} {
		require.Error(t, bad.Validate(), "%+v", bad)
		_, err := DialWebRTC(context.Background(), bad, nil)
		require.Error(t, err)
	}
}

// A peer that never answers: Dial gives up at the context's deadline and
// leaves nothing running.
func TestWebRTCDialTimeout(t *testing.T) {
	leaktest.Check(t)
	sa, _ := newChanSignalers()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := DialWebRTC(ctx, loopbackConfig, sa)
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

// Small eager messages arrive in order and intact; a 1 MiB message crosses
// by rendezvous in many frames no larger than the data channel allows.
func TestWebRTCEndpoints(t *testing.T) {
	leaktest.Check(t)
	hangGuard(t, 30*time.Second)
	a, b, la, lb := webrtcEndpoints(t, loopbackConfig)
	for _, l := range []*webrtcLink{la, lb} {
		require.Equal(t, pionFrame, l.MaxFrame())
	}

	const n = 200
	sends := make([]*Op, n)
	for i := range n {
		sends[i] = a.GetOp()
		require.NoError(t, a.StartSend(sends[i], Standard, 1, 0, 5, pattern(1+i%64, i)))
	}
	got := make([]byte, 64)
	for i := range n {
		r := b.GetOp()
		require.NoError(t, b.StartRecv(r, 0, 0, 5, got))
		res := waitTimeout(t, r, 10*time.Second)
		require.NoError(t, res.Err)
		require.Equal(t, pattern(1+i%64, i), got[:res.N], "message %d", i)
		b.PutOp(r)
	}
	for _, s := range sends {
		require.NoError(t, waitTimeout(t, s, 10*time.Second).Err)
	}

	// 1 MiB each way at once
	big := [2][]byte{pattern(1<<20, 1), pattern(1<<20, 2)}
	dst := [2][]byte{make([]byte, 1<<20), make([]byte, 1<<20)}
	sa, sb, ra, rb := a.GetOp(), b.GetOp(), a.GetOp(), b.GetOp()
	require.NoError(t, a.StartSend(sa, Standard, 1, 0, 9, big[0]))
	require.NoError(t, b.StartSend(sb, Standard, 0, 0, 9, big[1]))
	require.NoError(t, b.StartRecv(rb, 0, 0, 9, dst[0]))
	require.NoError(t, a.StartRecv(ra, 1, 0, 9, dst[1]))
	for _, op := range []*Op{sa, sb, ra, rb} {
		require.NoError(t, waitTimeout(t, op, 20*time.Second).Err)
	}
	require.True(t, bytes.Equal(big[0], dst[0]))
	require.True(t, bytes.Equal(big[1], dst[1]))
}

// Many large messages outstanding at once: the link runs above its
// high-water mark, the endpoint waits for HandleWritable, and everything
// arrives intact and in order.
func TestWebRTCBackpressure(t *testing.T) {
	leaktest.Check(t)
	hangGuard(t, 30*time.Second)
	a, b, la, _ := webrtcEndpoints(t, WebRTCConfig{Loopback: true, HighWater: 256 << 10, LowWater: 64 << 10})

	const eager, rdv = 64, 6 // 60 KB eager messages sent before any receive, then 512 KiB ones
	var sends []*Op
	var msgs [][]byte
	for i := range eager + rdv {
		n := 60_000
		if i >= eager {
			n = 512 << 10
		}
		m := pattern(n, i)
		msgs = append(msgs, m)
		op := a.GetOp()
		require.NoError(t, a.StartSend(op, Standard, 1, 0, 3, m))
		sends = append(sends, op)
	}
	for i, m := range msgs {
		dst := make([]byte, len(m))
		r := b.GetOp()
		require.NoError(t, b.StartRecv(r, 0, 0, 3, dst))
		res := waitTimeout(t, r, 20*time.Second)
		require.NoError(t, res.Err)
		require.Equal(t, len(m), res.N)
		require.True(t, bytes.Equal(m, dst), "message %d", i)
	}
	for _, s := range sends {
		require.NoError(t, waitTimeout(t, s, 20*time.Second).Err)
	}
	require.Positive(t, la.stalls.Load(), "the link never reached its high-water mark")
}

// Closing one side completes the other side's pending receives from it
// with ErrProcFailed and tells the failure hooks (a wildcard receive
// stays posted: the layer above decides), and later sends to it fail too.
func TestWebRTCPeerClosed(t *testing.T) {
	for _, cfg := range bothPaths {
		t.Run(cfg.name, func(t *testing.T) { testPeerClosed(t, cfg.cfg) })
	}
}

func testPeerClosed(t *testing.T, cfg WebRTCConfig) {
	leaktest.Check(t)
	hangGuard(t, 30*time.Second)
	a, b, _, _ := webrtcEndpoints(t, cfg)
	told := make(chan error, 2)
	b.OnPeerFailed(func(_ int, err error) { told <- err })
	specific := b.GetOp()
	require.NoError(t, b.StartRecv(specific, 0, 0, 1, make([]byte, 8)))

	a.Close(nil)

	for _, err := range []error{waitTimeout(t, specific, 15*time.Second).Err, <-told} {
		require.ErrorIs(t, err, ErrProcFailed)
		// in the user's terms, not SCTP's, and "process failed" once
		require.NotRegexp(t, `(?i)abort chunk|user initiated abort|sctp|0x`, err.Error())
		require.Equal(t, 1, strings.Count(err.Error(), ErrProcFailed.Error()), err.Error())
	}
	s := b.GetOp()
	require.NoError(t, b.StartSend(s, Standard, 0, 0, 1, []byte{1}))
	require.ErrorIs(t, waitTimeout(t, s, 5*time.Second).Err, ErrProcFailed)
}

// A peer connection torn down under the link (no data-channel close from
// the remote endpoint first) is reported the same way on both sides.
func TestWebRTCPeerConnectionClosed(t *testing.T) {
	for _, cfg := range bothPaths {
		t.Run(cfg.name, func(t *testing.T) {
			leaktest.Check(t)
			hangGuard(t, 30*time.Second)
			a, b, la, _ := webrtcEndpoints(t, cfg.cfg)
			ra, rb := a.GetOp(), b.GetOp()
			require.NoError(t, a.StartRecv(ra, 1, 0, 1, nil))
			require.NoError(t, b.StartRecv(rb, 0, 0, 1, nil))

			if la.pc != nil {
				require.NoError(t, la.pc.Close())
			} else {
				la.nat.close()
			}

			require.ErrorIs(t, waitTimeout(t, ra, 15*time.Second).Err, ErrProcFailed)
			require.ErrorIs(t, waitTimeout(t, rb, 15*time.Second).Err, ErrProcFailed)
		})
	}
}

// Close with no handler bound and Close called twice are fine.
func TestWebRTCCloseUnbound(t *testing.T) {
	for _, cfg := range bothPaths {
		t.Run(cfg.name, func(t *testing.T) {
			leaktest.Check(t)
			la, lb := connectWebRTCPair(t, cfg.cfg)
			require.NoError(t, la.Close())
			require.NoError(t, la.Close())
			require.NoError(t, lb.Close())
			ok, err := la.WriteFrame(make([]byte, HeaderLen), nil)
			require.False(t, ok)
			require.True(t, errors.Is(err, ErrClosed))
		})
	}
}

// BenchmarkWebRTCPingPong is the 8 B round trip through two endpoints.
func BenchmarkWebRTCPingPong(b *testing.B) { benchPingPong(b, loopbackConfig) }

// benchPingPong is the 8 B round trip through two endpoints over cfg's
// link.
func benchPingPong(b *testing.B, cfg WebRTCConfig) {
	a, z, _, _ := webrtcEndpoints(b, cfg)
	msg, echo := make([]byte, 8), make([]byte, 8)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // rank 1 echoes
		defer close(done)
		r, s := z.GetOp(), z.GetOp()
		for {
			if z.StartRecv(r, 0, 0, 1, echo) != nil {
				return
			}
			if wait(r).Err != nil {
				return
			}
			_ = z.StartSend(s, Standard, 0, 0, 2, echo)
			if wait(s).Err != nil {
				return
			}
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	s, r := a.GetOp(), a.GetOp()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		_ = a.StartRecv(r, 1, 0, 2, msg)
		_ = a.StartSend(s, Standard, 1, 0, 1, msg)
		if err := wait(s).Err; err != nil {
			b.Fatal(err)
		}
		if err := wait(r).Err; err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	close(stop)
	z.Close(nil)
	<-done
}

// BenchmarkWebRTCBandwidth sends 1 MiB messages one after another.
func BenchmarkWebRTCBandwidth(b *testing.B) { benchBandwidth(b, loopbackConfig, 1<<20) }

// benchBandwidth sends n-byte messages one after another over cfg's link.
func benchBandwidth(b *testing.B, cfg WebRTCConfig, n int) {
	a, z, _, _ := webrtcEndpoints(b, cfg)
	msg, dst := pattern(n, 0), make([]byte, n)
	b.SetBytes(int64(n))
	b.ReportAllocs()
	s, r := a.GetOp(), z.GetOp()
	b.ResetTimer()
	for range b.N {
		_ = z.StartRecv(r, 0, 0, 1, dst)
		_ = a.StartSend(s, Standard, 1, 0, 1, msg)
		if err := wait(s).Err; err != nil {
			b.Fatal(err)
		}
		if err := wait(r).Err; err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWebRTCRawPingPong is the baseline: 8 B echoed over the same
// detached pion data channels, no endpoint.
func BenchmarkWebRTCRawPingPong(b *testing.B) { benchRawPingPong(b, loopbackConfig) }

// benchRawPingPong echoes 8 B over cfg's data channel, no endpoint.
func benchRawPingPong(b *testing.B, cfg WebRTCConfig) {
	la, lb := connectWebRTCPair(b, cfg)
	defer la.Close()
	defer lb.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 64)
		for {
			n, err := lb.dc.Read(buf)
			if err != nil {
				return
			}
			if _, err := lb.dc.Write(buf[:n]); err != nil {
				return
			}
		}
	}()
	msg, buf := make([]byte, 8), make([]byte, 64)
	b.ResetTimer()
	for range b.N {
		if _, err := la.dc.Write(msg); err != nil {
			b.Fatal(err)
		}
		if _, err := la.dc.Read(buf); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	la.Close()
	<-done
}

// BenchmarkWebRTCRawBandwidth is the baseline: 1 MiB per iteration in
// 65535-byte messages over the same detached channels, with the same
// buffered-amount flow control, the receiver counting bytes.
func BenchmarkWebRTCRawBandwidth(b *testing.B) { benchRawBandwidth(b, loopbackConfig) }

// benchRawBandwidth streams 1 MiB per iteration over cfg's data channel,
// no endpoint.
func benchRawBandwidth(b *testing.B, cfg WebRTCConfig) {
	la, lb := connectWebRTCPair(b, cfg)
	defer la.Close()
	defer lb.Close()
	const total = 1 << 20
	got := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 65535)
		n := 0
		for {
			k, err := lb.dc.Read(buf)
			if err != nil {
				return
			}
			if n += k; n >= total {
				n -= total
				got <- struct{}{}
			}
		}
	}()
	low := make(chan struct{}, 1)
	la.dc.SetBufferedAmountLowThreshold(la.low)
	la.dc.OnBufferedAmountLow(func() {
		select {
		case low <- struct{}{}:
		default:
		}
	})
	msg := pattern(total, 0)
	b.SetBytes(total)
	b.ResetTimer()
	for range b.N {
		for off := 0; off < total; off += la.maxFrame {
			if _, err := la.dc.Write(msg[off:min(off+la.maxFrame, total)]); err != nil {
				b.Fatal(err)
			}
			if la.dc.BufferedAmount() >= la.high {
				<-low
			}
		}
		<-got
	}
	b.StopTimer()
	la.Close()
	<-done
}

// The unexpected-message flood over a real WebRTC link on loopback: 32 MiB
// against a 4 MiB limit here; MESHMPI_FLOOD_GIB (e.g. 1) runs it at that
// size against the default limit.
func TestWebRTCUnexpectedFlood(t *testing.T) {
	hangGuard(t, 5*time.Minute)
	total, limit := int64(32<<20), int64(4<<20)
	if gib, _ := strconv.Atoi(os.Getenv("MESHMPI_FLOOD_GIB")); gib > 0 {
		total, limit = int64(gib)<<30, DefaultUnexpectedLimit
	}
	la, lb := connectWebRTCPair(t, loopbackConfig)
	a, b := attachedPair(t, la, lb, limit)
	flood(t, a, b, total, LazyFrame-HeaderLen)
}

// A link whose path breaks restarts ICE and carries on: whichever side
// notices first (the offerer restarts at once; the answerer asks it to),
// a transfer under way when the path goes completes intact over the new
// candidate pair, and the link works afterwards. The break is reported
// to the link as its ICE agent would report it; the network-namespace
// tests (internal/netlab) break real paths.
func TestWebRTCICERestart(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cfg      WebRTCConfig
		offerer  bool // the side that notices the break
		restarts int  // restarts each side counts
	}{
		{"offerer notices", loopbackConfig, true, 1},
		{"answerer notices", loopbackConfig, false, 1},
		{"native/offerer notices", nativeConfig, true, 1},
		{"native/answerer notices", nativeConfig, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leaktest.Check(t)
			hangGuard(t, 60*time.Second)
			a, b, la, lb := webrtcEndpoints(t, tc.cfg)
			ufrags := [2]string{iceUfrag(t, la), iceUfrag(t, lb)}
			big := pattern(16<<20, 3)
			dst := make([]byte, len(big))
			s, r := a.GetOp(), b.GetOp()
			require.NoError(t, b.StartRecv(r, 0, 0, 4, dst))
			require.NoError(t, a.StartSend(s, Standard, 1, 0, 4, big))
			notice := lb
			if tc.offerer {
				notice = la
			}
			notice.setup.iceState("disconnected")
			for _, op := range []*Op{s, r} {
				require.NoError(t, waitTimeout(t, op, 30*time.Second).Err)
			}
			require.True(t, bytes.Equal(big, dst))
			// the restart's offer may land after the transfer: wait for it
			for la.setup.restartCount() < tc.restarts || lb.setup.restartCount() < tc.restarts {
				time.Sleep(5 * time.Millisecond)
			}
			require.Equal(t, tc.restarts, la.setup.restartCount())
			require.Equal(t, tc.restarts, lb.setup.restartCount())
			// fresh ICE credentials on both sides: a restart, not a resume
			for la.pc != nil && la.pc.SignalingState() != webrtc.SignalingStateStable {
				time.Sleep(5 * time.Millisecond)
			}
			require.NotEqual(t, ufrags[0], iceUfrag(t, la))
			require.NotEqual(t, ufrags[1], iceUfrag(t, lb))

			// and the restarted link carries the next messages both ways
			for i, ends := range [][2]*Endpoint{{a, b}, {b, a}} {
				from, to := ends[0], ends[1]
				msg, got := pattern(100_000, i), make([]byte, 100_000)
				s, r := from.GetOp(), to.GetOp()
				require.NoError(t, to.StartRecv(r, AnySource, 0, 5, got))
				require.NoError(t, from.StartSend(s, Standard, 1-i, 0, 5, msg))
				require.NoError(t, waitTimeout(t, r, 30*time.Second).Err)
				require.NoError(t, waitTimeout(t, s, 30*time.Second).Err)
				require.Equal(t, msg, got)
			}
			p := la.Path()
			require.Equal(t, "host", p.Local, "%+v", p)
		})
	}
}

// iceUfrag is the ICE username fragment of l's current local description.
func iceUfrag(t *testing.T, l *webrtcLink) string {
	if l.nat != nil {
		ufrag, _, err := l.nat.agent.GetLocalUserCredentials()
		require.NoError(t, err)
		return ufrag
	}
	d := l.pc.CurrentLocalDescription()
	require.NotNil(t, d)
	for _, line := range strings.Split(d.SDP, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "a=ice-ufrag:"); ok {
			return v
		}
	}
	t.Fatalf("no ice-ufrag in %q", d.SDP)
	return ""
}

// frameRec records the frames a link delivers, copied.
type frameRec struct {
	frames chan []byte
	closed chan error
}

func newFrameRec() *frameRec {
	return &frameRec{frames: make(chan []byte, 16), closed: make(chan error, 1)}
}

func (r *frameRec) HandleFrame(hdr, payload []byte) {
	r.frames <- append(append([]byte(nil), hdr...), payload...)
}
func (r *frameRec) HandleWritable()       {}
func (r *frameRec) HandleClose(err error) { r.closed <- err }

// next is the next frame delivered, within d.
func (r *frameRec) next(tb testing.TB, d time.Duration) []byte {
	tb.Helper()
	select {
	case f := <-r.frames:
		return f
	case err := <-r.closed:
		tb.Fatalf("link closed: %v", err)
	case <-time.After(d):
		tb.Fatalf("no frame in %v", d)
	}
	return nil
}

// pathFrame is the frame limit between two of our links over cfg's path.
func pathFrame(cfg WebRTCConfig) int {
	if cfg.NativeRemote {
		return MaxWebRTCFrame
	}
	return pionFrame
}

// Between two of our links each end advertises its path's limit
// (MaxWebRTCFrame on the native path, pionFrame on pion's), so a frame of
// exactly that size crosses in one message; one byte more is refused
// with an error before anything is sent, and the link carries on.
func TestWebRTCFrameLimit(t *testing.T) {
	for _, p := range bothPaths {
		t.Run(p.name, func(t *testing.T) {
			leaktest.Check(t)
			hangGuard(t, 30*time.Second)
			la, lb := connectWebRTCPair(t, p.cfg)
			defer la.Close()
			defer lb.Close()
			limit := pathFrame(p.cfg)
			require.Equal(t, limit, la.MaxFrame())
			require.Equal(t, limit, lb.MaxFrame())
			ra, rb := newFrameRec(), newFrameRec()
			la.Bind(ra)
			lb.Bind(rb)
			for i, n := range []int{HeaderLen + 1, limit - 1, limit} {
				f := pattern(n, i)
				_, err := la.WriteFrame(f[:HeaderLen], f[HeaderLen:])
				require.NoError(t, err, "%d-byte frame", n)
				require.Equal(t, f, rb.next(t, 10*time.Second), "%d-byte frame", n)
				_, err = lb.WriteFrame(f[:HeaderLen], f[HeaderLen:])
				require.NoError(t, err, "%d-byte frame back", n)
				require.Equal(t, f, ra.next(t, 10*time.Second), "%d-byte frame back", n)
			}
			over := pattern(limit+1, 9)
			ok, err := la.WriteFrame(over[:HeaderLen], over[HeaderLen:])
			require.False(t, ok)
			require.ErrorContains(t, err, "exceeds")
			f := pattern(100, 3)
			_, err = la.WriteFrame(f[:HeaderLen], f[HeaderLen:])
			require.NoError(t, err, "after the refused frame")
			require.Equal(t, f, rb.next(t, 10*time.Second))
		})
	}
}

// rewriteSignaler passes messages through, rewriting the descriptions
// this side sends with edit: a remote that advertises another
// max-message-size than ours.
type rewriteSignaler struct {
	Signaler
	edit func(sdp string) string
}

func (s rewriteSignaler) Send(ctx context.Context, kind string, payload []byte) error {
	if kind == SignalOffer || kind == SignalAnswer {
		payload = []byte(s.edit(string(payload)))
	}
	return s.Signaler.Send(ctx, kind, payload)
}

// setMaxMessage replaces the description's max-message-size line with
// line ("" drops it).
func setMaxMessage(line string) func(string) string {
	return func(sdp string) string {
		var b strings.Builder
		for l := range strings.SplitSeq(sdp, "\r\n") {
			if l == "" {
				continue
			}
			if strings.HasPrefix(l, "a=max-message-size:") {
				if line == "" {
					continue
				}
				l = line
			}
			b.WriteString(l + "\r\n")
		}
		return b.String()
	}
}

// A remote that advertises a smaller max-message-size than ours (a
// standard peer: pion's unset value, RFC 8841's 64K, or none at all) gets
// frames of its size, and one that advertises more (Firefox, pion's
// default) gets the path's limit; the other direction keeps ours.
// Messages around the frame sizes cross intact both ways on every link,
// over both paths.
func TestWebRTCRemoteFrameSize(t *testing.T) {
	for _, p := range bothPaths {
		for _, tc := range []struct {
			name string
			line string // the answerer's max-message-size line; "" none
			want int    // the dialer's MaxFrame
		}{
			{"65536", "a=max-message-size:65536", 65536},
			{"none", "", StandardWebRTCFrame},
			{"1GiB", "a=max-message-size:1073741823", MaxWebRTCFrame},
			{"100000", "a=max-message-size:100000", 100000},
		} {
			t.Run(p.name+"/"+tc.name, func(t *testing.T) {
				leaktest.Check(t)
				hangGuard(t, 60*time.Second)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				sa, sb := newChanSignalers()
				accepted := make(chan Link, 1)
				go func() {
					l, err := AcceptWebRTC(ctx, p.cfg, rewriteSignaler{sb, setMaxMessage(tc.line)})
					if err != nil {
						t.Errorf("accept: %v", err)
					}
					accepted <- l
				}()
				la, err := DialWebRTC(ctx, p.cfg, sa)
				lb := <-accepted
				require.NoError(t, err)
				require.NotNil(t, lb)
				want := min(tc.want, pathFrame(p.cfg))
				require.Equal(t, want, la.MaxFrame(), "dialer")
				require.Equal(t, pathFrame(p.cfg), lb.MaxFrame(), "acceptor")

				a, b := attachedPair(t, la, lb, 0)
				for i, n := range []int{64 << 10, 64<<10 + 1, want - HeaderLen, want - HeaderLen + 1, 256 << 10, 1 << 20} {
					exchange(t, a, b, int32(i), n)
				}
			})
		}
	}
}

// A remote whose max-message-size leaves no room for a frame's payload
// fails the link with an error, on either path.
func TestWebRTCRemoteFrameTooSmall(t *testing.T) {
	for _, p := range bothPaths {
		t.Run(p.name, func(t *testing.T) {
			leaktest.Check(t)
			hangGuard(t, 30*time.Second)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			sa, sb := newChanSignalers()
			accepted := make(chan Link, 1)
			go func() {
				l, _ := AcceptWebRTC(ctx, p.cfg, rewriteSignaler{sb, setMaxMessage("a=max-message-size:40")})
				accepted <- l
			}()
			la, err := DialWebRTC(ctx, p.cfg, sa)
			require.ErrorContains(t, err, "max-message-size is 40")
			require.Nil(t, la)
			if lb := <-accepted; lb != nil {
				lb.Close()
			}
		})
	}
}

// A 64 KiB message (DefaultEagerLimit) fits one frame of our links, so
// it goes eagerly: its send completes before any receive is posted (a
// rendezvous would wait for the receive's clear-to-send).
func TestWebRTCEager64KiB(t *testing.T) {
	leaktest.Check(t)
	hangGuard(t, 30*time.Second)
	a, b, _, _ := webrtcEndpoints(t, nativeConfig)
	msg := pattern(DefaultEagerLimit, 5)
	s := a.GetOp()
	require.NoError(t, a.StartSend(s, Standard, 1, 0, 4, msg))
	require.NoError(t, waitTimeout(t, s, 10*time.Second).Err)
	got := make([]byte, len(msg))
	r := b.GetOp()
	require.NoError(t, b.StartRecv(r, 0, 0, 4, got))
	require.NoError(t, waitTimeout(t, r, 10*time.Second).Err)
	require.Equal(t, msg, got)
}

// A side with a smaller MaxFrame (a WASI host: its guest's limit)
// advertises it, and its remote sends frames of that size; it still
// sends its path's largest itself. On both paths, either side.
func TestWebRTCConfigMaxFrame(t *testing.T) {
	for _, p := range bothPaths {
		for _, dialerSmall := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/dialer-small=%v", p.name, dialerSmall), func(t *testing.T) {
				leaktest.Check(t)
				hangGuard(t, 60*time.Second)
				small := p.cfg
				small.MaxFrame = 50_000
				cfgA, cfgB := p.cfg, small
				if dialerSmall {
					cfgA, cfgB = small, p.cfg
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				sa, sb := newChanSignalers()
				accepted := make(chan Link, 1)
				go func() {
					l, err := AcceptWebRTC(ctx, cfgB, sb)
					if err != nil {
						t.Errorf("accept: %v", err)
					}
					accepted <- l
				}()
				la, err := DialWebRTC(ctx, cfgA, sa)
				lb := <-accepted
				require.NoError(t, err)
				require.NotNil(t, lb)
				wantA, wantB := 50_000, pathFrame(p.cfg)
				if dialerSmall {
					wantA, wantB = wantB, wantA
				}
				require.Equal(t, wantA, la.MaxFrame(), "dialer")
				require.Equal(t, wantB, lb.MaxFrame(), "acceptor")
				a, b := attachedPair(t, la, lb, 0)
				for i, n := range []int{64 << 10, 64<<10 + 1, 256 << 10, 1 << 20} {
					exchange(t, a, b, int32(i), n)
				}
			})
		}
	}
}
