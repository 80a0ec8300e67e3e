//go:build linux

package peer

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var (
	_ Link         = (*shmLink)(nil)
	_ PathReporter = (*shmLink)(nil)
	_ Counter      = (*shmLink)(nil)
	_ Link         = (*unixLink)(nil)
	_ Counter      = (*unixLink)(nil)
)

// linkRec records what a link hands its handler.
type linkRec struct {
	mu       sync.Mutex
	frames   [][]byte
	arrived  chan struct{} // cap 1: a frame came
	writable chan struct{} // cap 1
	closed   chan error    // cap 1
	hold     chan struct{} // if set, HandleFrame waits on it (a slow reader)
}

func newRec() *linkRec {
	return &linkRec{arrived: make(chan struct{}, 1), writable: make(chan struct{}, 1), closed: make(chan error, 1)}
}

func (r *linkRec) HandleFrame(hdr, payload []byte) {
	if r.hold != nil {
		<-r.hold
	}
	f := append(append([]byte{}, hdr...), payload...)
	r.mu.Lock()
	r.frames = append(r.frames, f)
	r.mu.Unlock()
	select {
	case r.arrived <- struct{}{}:
	default:
	}
}

func (r *linkRec) HandleWritable() {
	select {
	case r.writable <- struct{}{}:
	default:
	}
}

func (r *linkRec) HandleClose(err error) { r.closed <- err }

// waitFrames waits for n frames and returns them.
func (r *linkRec) waitFrames(t *testing.T, n int) [][]byte {
	t.Helper()
	guard := time.After(20 * time.Second)
	for {
		r.mu.Lock()
		k := len(r.frames)
		fs := r.frames
		r.mu.Unlock()
		if k >= n {
			return fs
		}
		select {
		case <-r.arrived:
		case err := <-r.closed:
			t.Fatalf("link closed after %d of %d frames: %v", k, n, err)
		case <-guard:
			t.Fatalf("%d of %d frames after 20s", k, n)
		}
	}
}

// hostPair makes the two ends of a same-host link in this process.
func hostPair(t testing.TB, cfg HostConfig) (listener, dialer Link) {
	t.Helper()
	ln, err := ListenHost(cfg)
	require.NoError(t, err)
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	type res struct {
		l   Link
		err error
	}
	ch := make(chan res, 1)
	go func() {
		l, err := DialHost(ctx, cfg, ln.Offer())
		ch <- res{l, err}
	}()
	a, err := ln.Accept(ctx)
	require.NoError(t, err)
	r := <-ch
	require.NoError(t, r.err)
	t.Cleanup(func() { a.Close(); r.l.Close() })
	return a, r.l
}

// testFrame makes a frame of n bytes whose header carries i and whose
// payload is a pattern of i.
func testFrame(i, n int) []byte {
	f := make([]byte, n)
	binary.LittleEndian.PutUint32(f, uint32(i))
	for k := HeaderLen; k < n; k++ {
		f[k] = byte(i + k)
	}
	return f
}

// Frames arrive whole and in order both ways, small and as large as the
// link allows, across the ring's end many times over (a 64 KiB ring), on
// the shared-memory link and the unix-socket fallback.
func TestHostLinkOrderAndWrap(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  HostConfig
		kind string
	}{
		{"shm", HostConfig{Name: "shm link test", Ring: 64 << 10}, "shm"},
		{"shm-default", HostConfig{Name: "shm link test"}, "shm"},
		{"unix", HostConfig{Name: "shm link test", Unix: true}, "unix"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := hostPair(t, tc.cfg)
			require.Equal(t, tc.kind, a.(PathReporter).Path().Link)
			require.Equal(t, tc.kind, b.(PathReporter).Path().Link)
			ra, rb := newRec(), newRec()
			a.Bind(ra)
			b.Bind(rb)
			max := a.MaxFrame()
			sizes := []int{HeaderLen, HeaderLen + 1, HeaderLen + 7, 100, 4096, max - 1, max}
			var want [][]byte
			for i := range 400 {
				f := testFrame(i, sizes[i%len(sizes)])
				want = append(want, f)
				for {
					ready, err := a.WriteFrame(f[:HeaderLen], f[HeaderLen:])
					require.NoError(t, err)
					if ready {
						break
					}
					<-ra.writable // the slow reader made room
					break
				}
			}
			got := rb.waitFrames(t, len(want))
			require.Len(t, got, len(want))
			for i := range want {
				require.True(t, bytes.Equal(want[i], got[i]), "frame %d", i)
			}
			// and back
			f := testFrame(7, 64)
			_, err := b.WriteFrame(f[:HeaderLen], f[HeaderLen:])
			require.NoError(t, err)
			require.Equal(t, f, ra.waitFrames(t, 1)[0])
			_, err = a.WriteFrame(make([]byte, HeaderLen), make([]byte, max))
			require.Error(t, err, "a frame larger than MaxFrame")
		})
	}
}

// A reader that does not keep up fills the ring: WriteFrame still takes
// every frame, reports not ready, and HandleWritable follows once the
// reader made room; nothing is lost or reordered.
func TestHostLinkBackpressure(t *testing.T) {
	for _, unix := range []bool{false, true} {
		t.Run(fmt.Sprint("unix=", unix), func(t *testing.T) {
			a, b := hostPair(t, HostConfig{Name: "shm link test", Ring: 64 << 10, Unix: unix})
			ra, rb := newRec(), newRec()
			rb.hold = make(chan struct{})
			a.Bind(ra)
			b.Bind(rb)
			f := testFrame(1, a.MaxFrame())
			n := 0
			for {
				ready, err := a.WriteFrame(f[:HeaderLen], f[HeaderLen:])
				require.NoError(t, err)
				n++
				if !ready {
					break
				}
				require.Less(t, n, 1000, "never reported not ready")
			}
			close(rb.hold)
			select {
			case <-ra.writable:
			case <-time.After(20 * time.Second):
				t.Fatal("no HandleWritable after the reader caught up")
			}
			require.Len(t, rb.waitFrames(t, n), n)
		})
	}
}

// Close: the remote hands over the frames written before it, then sees
// the close; writes after it fail; a second Close does nothing.
func TestHostLinkClose(t *testing.T) {
	for _, unix := range []bool{false, true} {
		t.Run(fmt.Sprint("unix=", unix), func(t *testing.T) {
			a, b := hostPair(t, HostConfig{Name: "shm link test", Unix: unix})
			ra, rb := newRec(), newRec()
			a.Bind(ra)
			b.Bind(rb)
			for i := range 10 {
				f := testFrame(i, 1000)
				_, err := a.WriteFrame(f[:HeaderLen], f[HeaderLen:])
				require.NoError(t, err)
			}
			require.NoError(t, a.Close())
			require.NoError(t, a.Close())
			_, err := a.WriteFrame(make([]byte, HeaderLen), nil)
			require.ErrorIs(t, err, ErrClosed)
			select {
			case err := <-rb.closed:
				require.ErrorContains(t, err, "closed by its remote end")
			case <-time.After(20 * time.Second):
				t.Fatal("the remote did not see the close")
			}
			require.Len(t, rb.frames, 10)
			select {
			case err := <-ra.closed:
				t.Fatalf("the closing end was told of its own close: %v", err)
			default:
			}
		})
	}
}

// The listener refuses a dialer without the secret and waits on for the
// right one; a malformed offer is an error, not a panic.
func TestHostLinkRefusesStrangers(t *testing.T) {
	ln, err := ListenHost(HostConfig{Name: "shm link test"})
	require.NoError(t, err)
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	offer := ln.Offer()
	wrong := offer[:len(offer)-4] + "0000"
	if wrong == offer {
		wrong = offer[:len(offer)-4] + "1111"
	}
	accepted := make(chan Link, 1)
	go func() {
		l, err := ln.Accept(ctx)
		if err != nil {
			t.Error(err)
		}
		accepted <- l
	}()
	_, err = DialHost(ctx, HostConfig{Name: "stranger"}, wrong)
	require.Error(t, err, "a dialer with the wrong secret got a link")
	l, err := DialHost(ctx, HostConfig{Name: "peer"}, offer)
	require.NoError(t, err)
	defer l.Close()
	a := <-accepted
	require.NotNil(t, a)
	defer a.Close()

	for _, bad := range []string{"", "x", "meshmpi-host1 meshmpi-a zz", "meshmpi-host1 other 00", "meshmpi-host1 meshmpi-a 00"} {
		_, err := DialHost(ctx, HostConfig{Name: "peer"}, bad)
		require.Error(t, err, "%q", bad)
	}
	_, err = ListenHost(HostConfig{Name: "x", Ring: 1000})
	require.Error(t, err)
	// a listener nobody dials gives up with ctx
	ln2, err := ListenHost(HostConfig{Name: "shm link to nobody"})
	require.NoError(t, err)
	defer ln2.Close()
	short, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	_, err = ln2.Accept(short)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorContains(t, err, "shm link to nobody")
}

// envHostOffer hands TestHostLinkChild the offer to dial.
const envHostOffer = "MESHMPI_TEST_HOST_OFFER"

// TestHostLinkChild is the other process of TestHostLinkPeerDeath: it
// links, writes two frames and waits to be killed.
func TestHostLinkChild(t *testing.T) {
	offer := os.Getenv(envHostOffer)
	if offer == "" {
		t.Skip("run by TestHostLinkPeerDeath")
	}
	unix := os.Getenv(envHostOffer+"_UNIX") == "1"
	l, err := DialHost(context.Background(), HostConfig{Name: "child", Unix: unix}, offer)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	l.Bind(newRec())
	for i := range 2 {
		f := testFrame(i, 5000)
		if _, err := l.WriteFrame(f[:HeaderLen], f[HeaderLen:]); err != nil {
			os.Exit(4)
		}
	}
	select {} // until killed
}

// When the process at the other end dies, the link hands over what it had
// written, then closes with ErrProcFailed, naming the pair; writes fail.
func TestHostLinkPeerDeath(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	for _, unix := range []bool{false, true} {
		t.Run(fmt.Sprint("unix=", unix), func(t *testing.T) {
			ln, err := ListenHost(HostConfig{Name: "shm link between ranks 0 and 1", Unix: unix})
			require.NoError(t, err)
			defer ln.Close()
			cmd := exec.Command(os.Args[0], "-test.run=^TestHostLinkChild$")
			cmd.Env = append(os.Environ(), envHostOffer+"="+ln.Offer())
			if unix {
				cmd.Env = append(cmd.Env, envHostOffer+"_UNIX=1")
			}
			cmd.Stderr = os.Stderr
			require.NoError(t, cmd.Start())
			defer cmd.Process.Kill()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			l, err := ln.Accept(ctx)
			require.NoError(t, err)
			defer l.Close()
			r := newRec()
			l.Bind(r)
			r.waitFrames(t, 2)
			require.NoError(t, cmd.Process.Kill())
			_ = cmd.Wait()
			select {
			case err := <-r.closed:
				require.ErrorIs(t, err, ErrProcFailed)
				require.ErrorContains(t, err, "ranks 0 and 1")
			case <-time.After(20 * time.Second):
				t.Fatal("the link did not notice its peer's death")
			}
			_, err = l.WriteFrame(make([]byte, HeaderLen), nil)
			require.Error(t, err)
			require.False(t, errors.Is(err, ErrClosed), "a lost peer is not a local close: %v", err)
		})
	}
}

// pingRec answers every frame with the same frame (the pong side), or
// counts them (the ping side).
type pingRec struct {
	l    Link
	echo bool
	got  chan struct{}
}

func (p *pingRec) HandleFrame(hdr, payload []byte) {
	if p.echo {
		_, _ = p.l.WriteFrame(hdr, payload)
		return
	}
	p.got <- struct{}{}
}
func (*pingRec) HandleWritable()   {}
func (*pingRec) HandleClose(error) {}

// BenchmarkHostLink measures a frame's round trip (ping-pong, reported
// per one-way trip) and one-way streaming bandwidth on the link, with
// the allocations of the writer's and reader's paths.
func BenchmarkHostLink(b *testing.B) {
	for _, unix := range []bool{false, true} {
		kind := "shm"
		if unix {
			kind = "unix"
		}
		for _, size := range []int{8, 64 << 10, 1 << 20} {
			b.Run(fmt.Sprintf("%s/pingpong/%d", kind, size), func(b *testing.B) {
				a, c := hostPair(b, HostConfig{Name: "bench", Unix: unix})
				pa := &pingRec{l: a, got: make(chan struct{}, 1)}
				a.Bind(pa)
				c.Bind(&pingRec{l: c, echo: true})
				n := min(size, a.MaxFrame()-HeaderLen)
				hdr, payload := make([]byte, HeaderLen), make([]byte, n)
				b.SetBytes(int64(n))
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					if _, err := a.WriteFrame(hdr, payload); err != nil {
						b.Fatal(err)
					}
					<-pa.got
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/2/1000, "µs/one-way")
			})
		}
	}
}
