package wasm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/peer"
)

// TestFrameLimitsOnTheWire: a data message carries a frame of up to
// MaxFrame bytes (its length is then MaxMessage); a longer length is a
// protocol error, and a link-up offers frames of at most MaxFrame within
// a window that holds one.
func TestFrameLimitsOnTheWire(t *testing.T) {
	for _, tc := range []struct {
		name  string
		frame int
		ok    bool
	}{
		{"max-1", MaxFrame - 1, true},
		{"max", MaxFrame, true},
		{"max+1", MaxFrame + 1, false},
	} {
		t.Run("data "+tc.name, func(t *testing.T) {
			frame := bytes.Repeat([]byte{7}, tc.frame)
			m, err := NewReader(bytes.NewReader(AppendData(nil, 3, frame[:peer.HeaderLen], frame[peer.HeaderLen:]))).Next()
			if !tc.ok {
				require.ErrorIs(t, err, ErrProtocol)
				require.ErrorContains(t, err, "message length")
				return
			}
			require.NoError(t, err)
			require.Equal(t, 3, m.Rank)
			require.Equal(t, frame, m.Frame)
		})
		t.Run("link-up "+tc.name, func(t *testing.T) {
			m, err := NewReader(bytes.NewReader(AppendLinkUp(nil, 1, tc.frame, 4*MaxFrame))).Next()
			if !tc.ok {
				require.ErrorIs(t, err, ErrProtocol)
				return
			}
			require.NoError(t, err)
			require.EqualValues(t, tc.frame, m.N)
		})
	}
	_, err := NewReader(bytes.NewReader(AppendLinkUp(nil, 1, MaxFrame, MaxFrame-1))).Next()
	require.ErrorIs(t, err, ErrProtocol, "a window smaller than a frame")
}

// linkEndpoint takes the guest's links and records what they deliver.
type linkEndpoint struct {
	mu     sync.Mutex
	links  chan peer.Link
	frames chan []byte
	closed chan error
}

func newLinkEndpoint() *linkEndpoint {
	return &linkEndpoint{links: make(chan peer.Link, 1), frames: make(chan []byte, 16), closed: make(chan error, 1)}
}

func (e *linkEndpoint) Attach(_ int, l peer.Link) error {
	l.Bind(e)
	e.links <- l
	return nil
}
func (e *linkEndpoint) FailPeer(int, error) {}
func (e *linkEndpoint) HandleFrame(hdr, payload []byte) {
	e.frames <- append(append([]byte(nil), hdr...), payload...)
}
func (e *linkEndpoint) HandleWritable()       {}
func (e *linkEndpoint) HandleClose(err error) { e.closed <- err }

// greetGuest plays a host's part of the handshake on hostEnd, up to
// the welcome w, and returns the reader of what the guest sends next.
func greetGuest(hostEnd net.Conn, key [KeyLen]byte, w Welcome) (*Reader, error) {
	rd := NewReader(bufio.NewReader(hostEnd))
	if _, err := hostEnd.Write(AppendHostHello(nil, key)); err != nil {
		return nil, err
	}
	if m, err := rd.Next(); err != nil {
		return nil, err
	} else if m.Type != MsgJoin {
		return nil, fmt.Errorf("the guest sent %v, not join", m.Type)
	}
	_, err := hostEnd.Write(AppendWelcome(nil, w))
	return rd, err
}

// TestGuestFrameLimits: a guest's link to a rank whose link-up offers
// MaxFrame carries frames of MaxFrame and MaxFrame-1 bytes both ways,
// intact; it refuses to write one of MaxFrame+1 with an error (no
// panic, nothing sent), and a host that sends one breaks the protocol:
// the guest's stream ends and the link reports it lost.
func TestGuestFrameLimits(t *testing.T) {
	hostEnd, guestEnd := net.Pipe()
	defer hostEnd.Close()
	var key [KeyLen]byte
	msgs := make(chan Msg, 16)
	go func() {
		defer close(msgs)
		rd, err := greetGuest(hostEnd, key, Welcome{Rank: 0, Size: 2})
		if err != nil {
			return
		}
		if _, err := hostEnd.Write(AppendLinkUp(nil, 1, MaxFrame, 4*MaxFrame)); err != nil {
			return
		}
		for {
			m, err := rd.Next()
			if err != nil {
				return
			}
			m.Frame = bytes.Clone(m.Frame)
			msgs <- m
		}
	}()
	g, err := Connect(context.Background(), guestEnd, key)
	require.NoError(t, err)
	ep := newLinkEndpoint()
	g.Start(ep)
	defer g.Close()
	var l peer.Link
	select {
	case l = <-ep.links:
	case <-time.After(10 * time.Second):
		t.Fatal("no link")
	}
	require.Equal(t, MaxFrame, l.MaxFrame())
	frame := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i * 7)
		}
		return b
	}
	next := func() Msg {
		t.Helper()
		select {
		case m := <-msgs:
			return m
		case <-time.After(10 * time.Second):
			t.Fatal("no message from the guest")
		}
		return Msg{}
	}
	// guest → host
	for _, n := range []int{MaxFrame, MaxFrame - 1} {
		f := frame(n)
		_, err := l.WriteFrame(f[:peer.HeaderLen], f[peer.HeaderLen:])
		require.NoError(t, err, "%d bytes", n)
		m := next()
		require.Equal(t, MsgData, m.Type)
		require.Equal(t, f, m.Frame, "%d bytes", n)
	}
	f := frame(MaxFrame + 1)
	_, err = l.WriteFrame(f[:peer.HeaderLen], f[peer.HeaderLen:])
	require.ErrorContains(t, err, "exceeds")
	// nothing of it went out: the next message is the next frame
	small := frame(peer.HeaderLen + 1)
	_, err = l.WriteFrame(small[:peer.HeaderLen], small[peer.HeaderLen:])
	require.NoError(t, err)
	require.Equal(t, small, next().Frame)

	// host → guest
	for _, n := range []int{MaxFrame, MaxFrame - 1} {
		f := frame(n)
		_, err := hostEnd.Write(AppendData(nil, 1, f[:peer.HeaderLen], f[peer.HeaderLen:]))
		require.NoError(t, err)
		select {
		case got := <-ep.frames:
			require.Equal(t, f, got, "%d bytes", n)
		case <-time.After(10 * time.Second):
			t.Fatalf("the %d-byte frame did not arrive", n)
		}
	}
	// one over: the guest reads the length and ends the stream
	over := AppendData(nil, 1, f[:peer.HeaderLen], f[peer.HeaderLen:])
	require.Equal(t, MaxMessage+1, int(binary.LittleEndian.Uint32(over)))
	go hostEnd.Write(over) // the guest stops reading at the length
	select {
	case err := <-ep.closed:
		require.ErrorIs(t, err, ErrProtocol)
		require.ErrorIs(t, err, peer.ErrProcFailed)
	case <-time.After(10 * time.Second):
		t.Fatal("the link survived an oversized frame")
	}
	require.Empty(t, ep.frames)
}

// TestGuestVersionMismatch: a host that speaks another protocol version
// is refused by the guest with an error that names both versions.
func TestGuestVersionMismatch(t *testing.T) {
	for _, v := range []uint16{Version - 1, Version + 1} {
		hostEnd, guestEnd := net.Pipe()
		var key [KeyLen]byte
		go func() {
			hello := AppendHostHello(nil, key)
			binary.LittleEndian.PutUint16(hello[prefixLen+1:], v)
			_, _ = hostEnd.Write(hello)
		}()
		_, err := Connect(context.Background(), guestEnd, key)
		require.ErrorIs(t, err, peer.ErrNotSupported)
		require.ErrorContains(t, err, "the host speaks protocol version "+strconv.Itoa(int(v))+", this rank "+strconv.Itoa(Version))
		hostEnd.Close()
	}
}
