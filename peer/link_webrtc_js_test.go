//go:build js && wasm

package peer

import (
	"bytes"
	"strconv"
	"strings"
	"sync"
	"syscall/js"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Two of the page's RTCPeerConnections linked to each other: the browser
// link's ICE restart (createOffer with iceRestart, the state events that
// start it) heals a link the way the native one does.
func TestJSLinkICERestart(t *testing.T) {
	for _, offererNotices := range []bool{true, false} {
		la, lb := connectLinks(t, WebRTCConfig{})
		a, b := la.(*jsLink), lb.(*jsLink)
		before := [2]string{jsUfrag(t, a), jsUfrag(t, b)}

		ea, err := NewEndpoint(Config{Rank: 0, Size: 2})
		require.NoError(t, err)
		eb, err := NewEndpoint(Config{Rank: 1, Size: 2})
		require.NoError(t, err)
		require.NoError(t, ea.Attach(1, a))
		require.NoError(t, eb.Attach(0, b))

		big := pattern(4<<20, 5)
		dst := make([]byte, len(big))
		s, r := ea.GetOp(), eb.GetOp()
		require.NoError(t, eb.StartRecv(r, 0, 0, 4, dst))
		require.NoError(t, ea.StartSend(s, Standard, 1, 0, 4, big))
		if offererNotices {
			a.setup.iceState("disconnected")
		} else {
			b.setup.iceState("disconnected")
		}
		for _, op := range []*Op{s, r} {
			<-op.Done()
			require.NoError(t, op.Result().Err)
		}
		require.True(t, bytes.Equal(big, dst))
		for a.setup.restartCount() < 1 || b.setup.restartCount() < 1 || a.pc.Get("signalingState").String() != "stable" {
			time.Sleep(10 * time.Millisecond)
		}
		require.NotEqual(t, before[0], jsUfrag(t, a))
		require.NotEqual(t, before[1], jsUfrag(t, b))

		// the link carries the next message over the new pair
		msg, got := pattern(70_000, 9), make([]byte, 70_000)
		s, r = eb.GetOp(), ea.GetOp()
		require.NoError(t, ea.StartRecv(r, 1, 0, 6, got))
		require.NoError(t, eb.StartSend(s, Standard, 0, 0, 6, msg))
		<-r.Done()
		require.NoError(t, r.Result().Err)
		require.Equal(t, msg, got)
		ea.Close(nil)
		eb.Close(nil)
	}
}

// jsUfrag is the ICE username fragment of l's current local description.
func jsUfrag(t *testing.T, l *jsLink) string {
	d := l.pc.Get("localDescription")
	require.True(t, d.Truthy())
	for _, line := range strings.Split(d.Get("sdp").String(), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "a=ice-ufrag:"); ok {
			return v
		}
	}
	t.Fatalf("no ice-ufrag in the local description")
	return ""
}

// frameLog is a LinkHandler that records the frames it is handed.
type frameLog struct {
	mu       sync.Mutex
	frames   [][]byte
	closed   error
	arrived  chan struct{} // cap 1: a frame or the close arrived
	writable chan struct{} // cap 1
}

func newFrameLog() *frameLog {
	return &frameLog{arrived: make(chan struct{}, 1), writable: make(chan struct{}, 1)}
}

func (f *frameLog) HandleFrame(hdr, payload []byte) {
	f.mu.Lock()
	f.frames = append(f.frames, append(append([]byte(nil), hdr...), payload...))
	f.mu.Unlock()
	poke(f.arrived)
}

func (f *frameLog) HandleWritable() { poke(f.writable) }

func (f *frameLog) HandleClose(err error) {
	f.mu.Lock()
	f.closed = err
	f.mu.Unlock()
	poke(f.arrived)
}

// wait waits until the log holds n frames or the link closed.
func (f *frameLog) wait(t *testing.T, n int) ([][]byte, error) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		f.mu.Lock()
		got, err := len(f.frames), f.closed
		f.mu.Unlock()
		if got >= n || err != nil {
			f.mu.Lock()
			defer f.mu.Unlock()
			return f.frames, f.closed
		}
		select {
		case <-f.arrived:
		case <-timeout:
			t.Fatalf("%d of %d frames after 30 s", got, n)
		}
	}
}

// Frames of every length class arrive whole and in order, the sender
// stopping at the high-water mark and going on when the link says it is
// writable again.
func TestJSLinkFrames(t *testing.T) {
	la, lb := connectLinks(t, WebRTCConfig{})
	a, b := la.(*jsLink), lb.(*jsLink)
	defer a.Close()
	defer b.Close()
	fa, fb := newFrameLog(), newFrameLog()
	a.Bind(fa)
	b.Bind(fb)

	var want [][]byte
	sizes := []int{1, HeaderLen, HeaderLen + 1, HeaderLen + directPayload - 1, HeaderLen + directPayload, a.MaxFrame()}
	for i := range 200 { // 200 frames, 100 of them full: past the high-water mark
		n := sizes[i%len(sizes)]
		if i%2 == 0 {
			n = a.MaxFrame()
		}
		f := pattern(n, i)
		want = append(want, f)
		var hdr, payload []byte = f, nil
		if n > HeaderLen {
			hdr, payload = f[:HeaderLen], f[HeaderLen:]
		}
		ready, err := a.WriteFrame(hdr, payload)
		require.NoError(t, err)
		if !ready {
			select {
			case <-fa.writable:
			case <-time.After(30 * time.Second):
				t.Fatal("not writable again after 30 s")
			}
		}
	}
	got, err := fb.wait(t, len(want))
	require.NoError(t, err)
	require.Equal(t, len(want), len(got))
	for i := range want {
		require.True(t, bytes.Equal(want[i], got[i]), "frame %d (%d bytes, got %d)", i, len(want[i]), len(got[i]))
	}
	sent, _, _ := a.Counts()
	_, received, _ := b.Counts()
	require.Equal(t, sent, received)
}

// A text message is no frame: the link that receives it is lost with
// ErrFrame.
func TestJSLinkTextMessage(t *testing.T) {
	la, lb := connectLinks(t, WebRTCConfig{})
	a, b := la.(*jsLink), lb.(*jsLink)
	defer a.Close()
	defer b.Close()
	fb := newFrameLog()
	b.Bind(fb)
	a.dc.Call("send", "hello")
	_, err := fb.wait(t, 1<<30)
	require.ErrorIs(t, err, ErrFrame)
	require.ErrorIs(t, err, ErrProcFailed)
}

// The link's own part of a frame's way allocates nothing: WriteFrame,
// and deliver taking a queued frame to the handler.
func TestJSLinkAllocs(t *testing.T) {
	la, lb := connectLinks(t, WebRTCConfig{})
	a, b := la.(*jsLink), lb.(*jsLink)
	defer a.Close()
	defer b.Close()
	const runs = 50
	for _, n := range []int{8, directPayload + 100, a.MaxFrame() - HeaderLen} {
		hdr, payload := make([]byte, HeaderLen), make([]byte, n)
		allocs := testing.AllocsPerRun(runs, func() {
			if _, err := a.WriteFrame(hdr, payload); err != nil {
				t.Fatal(err)
			}
		})
		require.Zero(t, allocs, "WriteFrame of a %d-byte payload", n)
	}
	// b is not bound: its pump does not run, the frames wait in the queue
	total := 3 * (runs + 1)
	for b.next.Type() == js.TypeFunction && b.shim.Call("pending").Int() < total {
		time.Sleep(time.Millisecond)
	}
	var h nopHandler
	b.h = h
	allocs := testing.AllocsPerRun(total-1, func() { b.deliver() })
	require.Zero(t, allocs, "deliver")
	require.Zero(t, b.shim.Call("pending").Int())
}

type nopHandler struct{}

func (nopHandler) HandleFrame(hdr, payload []byte) {}
func (nopHandler) HandleWritable()                 {}
func (nopHandler) HandleClose(error)               {}

// linkShimSource spells the shim constants out.
func TestJSLinkShimConstants(t *testing.T) {
	for _, c := range []int{shimEmpty, shimText, shimFailed, shimMore} {
		require.Contains(t, linkShimSource, strconv.Itoa(c))
	}
}

// echoHandler writes every frame it is handed back on its link.
type echoHandler struct{ l *jsLink }

func (e echoHandler) HandleFrame(hdr, payload []byte) { e.l.WriteFrame(hdr, payload) }
func (echoHandler) HandleWritable()                   {}
func (echoHandler) HandleClose(error)                 {}

// pingHandler signals each frame that comes back.
type pingHandler struct{ back chan struct{} }

func (p pingHandler) HandleFrame(hdr, payload []byte) { p.back <- struct{}{} }
func (pingHandler) HandleWritable()                   {}
func (pingHandler) HandleClose(error)                 {}

// BenchmarkJSLinkPingPong: a frame of a header and 8 bytes to the other
// link of the page and back, the link's own cost with the browser's
// data channel's (both ends in one page).
func BenchmarkJSLinkPingPong(b *testing.B) {
	la, lb := connectLinks(b, WebRTCConfig{})
	x, y := la.(*jsLink), lb.(*jsLink)
	defer x.Close()
	defer y.Close()
	back := make(chan struct{}, 1)
	x.Bind(pingHandler{back})
	y.Bind(echoHandler{y})
	hdr, payload := make([]byte, HeaderLen), make([]byte, 8)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := x.WriteFrame(hdr, payload); err != nil {
			b.Fatal(err)
		}
		<-back
	}
}

// Chromium advertises a max-message-size of 262,144 and reports the
// remote's as RTCSctpTransport.maxMessageSize, so two of its links take
// MaxWebRTCFrame: a frame of exactly that size crosses whole, one byte
// more is refused with an error and the link carries on.
func TestJSLinkFrameLimit(t *testing.T) {
	la, lb := connectLinks(t, WebRTCConfig{})
	a, b := la.(*jsLink), lb.(*jsLink)
	defer a.Close()
	defer b.Close()
	require.Equal(t, MaxWebRTCFrame, a.MaxFrame())
	require.Equal(t, MaxWebRTCFrame, b.MaxFrame())
	fb := newFrameLog()
	a.Bind(newFrameLog())
	b.Bind(fb)
	full := pattern(MaxWebRTCFrame, 1)
	_, err := a.WriteFrame(full[:HeaderLen], full[HeaderLen:])
	require.NoError(t, err)
	over := pattern(MaxWebRTCFrame+1, 2)
	ok, err := a.WriteFrame(over[:HeaderLen], over[HeaderLen:])
	require.False(t, ok)
	require.ErrorContains(t, err, "exceeds")
	small := pattern(HeaderLen+8, 3)
	_, err = a.WriteFrame(small[:HeaderLen], small[HeaderLen:])
	require.NoError(t, err)
	got, err := fb.wait(t, 2)
	require.NoError(t, err)
	require.True(t, bytes.Equal(full, got[0]), "full frame: %d bytes", len(got[0]))
	require.True(t, bytes.Equal(small, got[1]), "frame after the refused one")
}

// Messages around the frame sizes (the eager limit, one frame, several)
// cross intact both ways at once between two endpoints over Chromium's
// data channel.
func TestJSLinkMessages(t *testing.T) {
	la, lb := connectLinks(t, WebRTCConfig{})
	a, b := attachedPair(t, la, lb, 0)
	for i, n := range []int{64 << 10, 64<<10 + 1, MaxWebRTCFrame - HeaderLen, MaxWebRTCFrame - HeaderLen + 1, 256 << 10, 1 << 20} {
		exchange(t, a, b, int32(i), n)
	}
}
