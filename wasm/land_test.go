package wasm

import (
	"bytes"
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/op"
	"github.com/meshmpi/meshmpi/peer"
)

// TestGuestLandsData: a rendezvous payload the host sends a guest rank
// lands in the receive buffer straight from the stream (Reader.Land,
// peer.DataLander): the guest's frame buffer never grows to hold it,
// and a message of two frames arrives intact at both offsets. An
// accumulating receive (the collectives' fused receive-and-reduce)
// takes the ordinary path, through the frame buffer, and reduces.
func TestGuestLandsData(t *testing.T) {
	const n = 1 << 20
	for _, tc := range []struct {
		name   string
		reduce bool
	}{{"copy", false}, {"accumulate", true}} {
		t.Run(tc.name, func(t *testing.T) {
			g, ep, host := startLandingGuest(t)
			msg := make([]float64, n/8)
			for i := range msg {
				msg[i] = float64(i)
			}
			buf := make([]float64, n/8)
			want := make([]float64, n/8)
			o := ep.GetOp()
			if tc.reduce {
				for i := range buf {
					buf[i] = 0.5
					want[i] = msg[i] + 0.5
				}
				require.NoError(t, ep.StartRecvAccumulate(o, 1, 0, 5, op.Bytes(buf), op.Sum, op.Float64))
			} else {
				copy(want, msg)
				require.NoError(t, ep.StartRecv(o, 1, 0, 5, op.Bytes(buf)))
			}
			host.rendezvous(t, op.Bytes(msg), 2)
			select {
			case <-o.Done():
			case <-time.After(30 * time.Second):
				t.Fatal("the receive never completed")
			}
			require.NoError(t, o.Result().Err)
			require.Equal(t, want, buf)
			if tc.reduce {
				require.GreaterOrEqual(t, cap(g.rd.buf), n/2, "the accumulating receive reads its frames whole")
			} else {
				require.Less(t, cap(g.rd.buf), LandMin, "the payload went through the frame buffer")
			}
		})
	}
}

// landingHost is the host's end of a guest's stream, with a link up to
// rank 1.
type landingHost struct {
	rd  *Reader
	w   func([]byte) error
	seq uint32
}

// startLandingGuest starts a guest rank 0 of 2 over a pipe, its links
// going to a real endpoint, and returns the host's end once the link
// to rank 1 is attached.
func startLandingGuest(t *testing.T) (*Guest, *peer.Endpoint, *landingHost) {
	hostEnd, guestEnd := net.Pipe()
	t.Cleanup(func() { hostEnd.Close() })
	var key [KeyLen]byte
	greeted := make(chan *Reader, 1)
	go func() {
		rd, err := greetGuest(hostEnd, key, Welcome{Rank: 0, Size: 2})
		if err == nil {
			_, err = hostEnd.Write(AppendLinkUp(nil, 1, MaxFrame, 4*MaxFrame))
		}
		if err != nil {
			rd = nil
		}
		greeted <- rd
	}()
	g, err := Connect(context.Background(), guestEnd, key)
	require.NoError(t, err)
	ep, err := peer.NewEndpoint(peer.Config{Rank: 0, Size: 2})
	require.NoError(t, err)
	g.Start(ep)
	t.Cleanup(g.Close)
	rd := <-greeted
	require.NotNil(t, rd, "handshake")
	return g, ep, &landingHost{rd: rd, w: func(b []byte) error { _, err := hostEnd.Write(b); return err }}
}

// rendezvous sends msg from rank 1 as a rendezvous in frames frames: the
// RTS, then, once the guest's CTS names its receive, the data.
func (h *landingHost) rendezvous(t *testing.T, msg []byte, frames int) {
	h.seq++
	hdr := make([]byte, peer.HeaderLen)
	(&peer.Header{Kind: peer.KindRTS, Context: 0, Tag: 5, Source: 1, Seq: h.seq, Total: uint64(len(msg))}).Encode(hdr)
	require.NoError(t, h.w(AppendData(nil, 1, hdr, nil)))
	var cts peer.Header
	for {
		m, err := h.rd.Next()
		require.NoError(t, err)
		if m.Type != MsgData {
			continue // credit
		}
		require.NoError(t, cts.Decode(m.Frame, len(m.Frame)-peer.HeaderLen))
		if cts.Kind == peer.KindCTS {
			break
		}
	}
	// the guest returns credit as it takes the frames; a pipe holds
	// nothing, so the host reads on while it writes
	go func() {
		for {
			if _, err := h.rd.Next(); err != nil {
				return
			}
		}
	}()
	require.Equal(t, h.seq, cts.Seq)
	require.EqualValues(t, len(msg), cts.Total)
	part := len(msg) / frames
	for off := 0; off < len(msg); off += part {
		end := min(off+part, len(msg))
		(&peer.Header{Kind: peer.KindData, Source: 1, RID: cts.RID, Total: uint64(len(msg)), Offset: uint64(off)}).Encode(hdr)
		require.NoError(t, h.w(AppendData(nil, 1, hdr, msg[off:end])))
	}
}

// A stream that ends inside a payload being landed is the stream's
// failure, as inside any other message; a hook that declines leaves the
// message to Next's caller whole.
func TestReaderLandEnds(t *testing.T) {
	hdr := make([]byte, peer.HeaderLen)
	msg := AppendData(nil, 2, hdr, make([]byte, LandMin))
	rd := NewReader(bytes.NewReader(msg[:len(msg)-1]))
	var got []byte
	rd.Land = func(rank int, h []byte, n int, read func([]byte) error) bool {
		got = make([]byte, n)
		require.Equal(t, 2, rank)
		require.Equal(t, hdr, h)
		require.Error(t, read(got))
		return true
	}
	_, err := rd.Next()
	require.ErrorIs(t, err, ErrProtocol)
	require.ErrorContains(t, err, "stream ends inside")
	require.Len(t, got, LandMin)

	rd = NewReader(bytes.NewReader(msg))
	rd.Land = func(int, []byte, int, func([]byte) error) bool { return false }
	m, err := rd.Next()
	require.NoError(t, err)
	require.Equal(t, MsgData, m.Type)
	require.Len(t, m.Frame, peer.HeaderLen+LandMin)
}
