//go:build !js && !wasip1

package host

import (
	"bytes"
	"encoding/binary"
	"net"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/internal/leaktest"
	"github.com/meshmpi/meshmpi/peer"
	"github.com/meshmpi/meshmpi/wasm"
)

// streamPair is a stream reader on the host's end of a loopback socket
// whose guest end the test writes, recording the messages it handles.
type streamPair struct {
	s     *streamReader
	guest net.Conn
	got   []wasm.Msg
}

func newStreamPair(t *testing.T) *streamPair {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	guest, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	hostEnd, err := ln.Accept()
	require.NoError(t, err)
	t.Cleanup(func() {
		guest.Close()
		hostEnd.Close()
	})
	rc, err := hostEnd.(*net.TCPConn).SyscallConn()
	require.NoError(t, err)
	p := &streamPair{guest: guest}
	p.s = newStreamReader(rc, nil, func(m *wasm.Msg) error {
		c := *m
		c.Frame = bytes.Clone(m.Frame)
		p.got = append(p.got, c)
		return nil
	}, func() {})
	return p
}

// TestStreamTake: the guest's writes reach the relay in stream order
// whether they are taken from its memory (take, the iovecs cut anywhere:
// inside a length, inside a frame, at a message's end) or went through
// the socket first (a write take left to wazero): take drains the
// socket before it handles what it was handed.
func TestStreamTake(t *testing.T) {
	leaktest.Check(t)
	frame := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i*31 + n)
		}
		return b
	}
	var stream []byte
	var want []wasm.Msg
	for i, n := range []int{peer.HeaderLen + 1, 4096, wasm.MaxFrame, 100, wasm.MaxFrame - 1, 70000} {
		f := frame(n)
		stream = wasm.AppendData(stream, 1, f[:peer.HeaderLen], f[peer.HeaderLen:])
		want = append(want, wasm.Msg{Type: wasm.MsgData, Rank: 1, Frame: f})
		stream = wasm.AppendCredit(stream, 2, 1000+i)
		want = append(want, wasm.Msg{Type: wasm.MsgCredit, Rank: 2, N: uint32(1000 + i)})
	}
	for _, tc := range []struct {
		name   string
		chunks []int // write sizes, cycled; the last write takes what is left
		socket int   // every socket-th write goes through the socket (0: none)
		iovecs int   // a taken write is cut into this many iovecs
	}{
		{"whole", []int{len(stream)}, 0, 1},
		{"byte by byte at the start", []int{1, 1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 1 << 20}, 0, 1},
		{"odd pieces", []int{7, 4093, 65536 + 3, 1 << 20}, 0, 3},
		{"socket and memory", []int{3, 4000, 1 << 20, 2, 100000}, 2, 2},
		{"socket first", []int{4096, 1 << 21}, 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newStreamPair(t)
			rest := stream
			for i := 0; len(rest) > 0; i++ {
				n := min(tc.chunks[i%len(tc.chunks)], len(rest))
				w := rest[:n]
				rest = rest[n:]
				if tc.socket > 0 && i%tc.socket == 0 && n <= 16<<10 {
					// as a write take left to wazero: into the socket,
					// small enough for its buffer; the next take reads it
					p.s.inSocket.Store(true)
					_, err := p.guest.Write(w)
					require.NoError(t, err)
					continue
				}
				var iovs [][]byte
				for k := range tc.iovecs {
					iovs = append(iovs, w[k*len(w)/tc.iovecs:(k+1)*len(w)/tc.iovecs])
				}
				require.True(t, p.s.take(iovs), "write %d", i)
				require.NoError(t, p.s.err)
			}
			p.s.drain() // a last socket write, if the stream ended with one
			require.Equal(t, len(want), len(p.got))
			for i := range want {
				require.Equal(t, want[i].Type, p.got[i].Type, "message %d", i)
				require.Equal(t, want[i].Rank, p.got[i].Rank, "message %d", i)
				require.Equal(t, want[i].N, p.got[i].N, "message %d", i)
				require.Equal(t, want[i].Frame, p.got[i].Frame, "message %d", i)
			}
		})
	}
}

// TestStreamTakeData: a write of a data message's head and payload as
// two iovecs (a guest's large frame) is handled with its payload where
// the guest wrote it (Msg.Payload, the same bytes), not joined to its
// head in the buffer; a split anywhere else is joined as before.
func TestStreamTakeData(t *testing.T) {
	leaktest.Check(t)
	hdr := make([]byte, peer.HeaderLen)
	hdr[0] = 9
	payload := bytes.Repeat([]byte{5}, wasm.LandMin)
	head := wasm.AppendDataHead(nil, 1, hdr, len(payload))
	p := newStreamPair(t)
	require.True(t, p.s.take([][]byte{head, payload}))
	require.NoError(t, p.s.err)
	require.Len(t, p.got, 1)
	require.Equal(t, hdr, p.got[0].Frame)
	require.Same(t, &payload[0], &p.got[0].Payload[0], "the payload was copied")

	// the same message cut one byte into its payload is one frame
	require.True(t, p.s.take([][]byte{append(bytes.Clone(head), payload[0]), payload[1:]}))
	require.NoError(t, p.s.err)
	require.Len(t, p.got, 2)
	require.Nil(t, p.got[1].Payload)
	require.Equal(t, append(bytes.Clone(hdr), payload...), p.got[1].Frame)
}

// TestStreamTakeMalformed: a length out of bounds in a taken write ends
// the stream with a protocol error, whether it starts the write or
// completes one the buffer began; later writes are left to the socket.
func TestStreamTakeMalformed(t *testing.T) {
	leaktest.Check(t)
	over := binary.LittleEndian.AppendUint32(nil, wasm.MaxMessage+1)
	for _, tc := range []struct {
		name   string
		writes [][]byte
	}{
		{"at once", [][]byte{over}},
		{"cut in its length", [][]byte{over[:2], over[2:]}},
		{"after a message", [][]byte{append(wasm.AppendCredit(nil, 1, 5), over...)}},
		{"zero", [][]byte{binary.LittleEndian.AppendUint32(nil, 0)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newStreamPair(t)
			for _, w := range tc.writes {
				require.True(t, p.s.take([][]byte{w}))
			}
			require.ErrorIs(t, p.s.err, wasm.ErrProtocol)
			require.ErrorContains(t, p.s.err, "message length")
			require.False(t, p.s.take([][]byte{wasm.AppendCredit(nil, 1, 5)}), "after the stream ended")
		})
	}
}
