//go:build !js && !wasip1

package host

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/peer"
	"github.com/meshmpi/meshmpi/wasm"
)

// sink is the remote rank's end of a relayed link: it counts frames.
type sink struct{ frames, bytes int }

func (s *sink) HandleFrame(hdr, payload []byte) { s.frames++; s.bytes += len(hdr) + len(payload) }
func (s *sink) HandleWritable()                 {}
func (s *sink) HandleClose(error)               {}

// countingStream is a guest's stream that only counts what the host
// writes to it.
type countingStream struct{ n int }

func (c *countingStream) Read([]byte) (int, error)    { return 0, io.EOF }
func (c *countingStream) Write(p []byte) (int, error) { c.n += len(p); return len(p), nil }
func (c *countingStream) Close() error                { return nil }

// TestRelayHotPathAllocs: relaying a frame each way allocates nothing
// once the queues have grown: the guest's data message is read, decoded
// and forwarded to the real link; the remote's frame is queued for the
// guest, written out (by the writer, or at once by the link's reader
// while no write is under way), and credited back. The real link is a
// memory link, so what is counted is the relay's own work.
func TestRelayHotPathAllocs(t *testing.T) {
	for _, direct := range []bool{false, true} {
		t.Run(fmt.Sprintf("direct=%v", direct), func(t *testing.T) { testRelayHotPathAllocs(t, direct) })
	}
}

func testRelayHotPathAllocs(t *testing.T, direct bool) {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	var guest countingStream
	r := &relay{rw: &guest, log: slog.New(slog.DiscardHandler), ctx: ctx, cancel: cancel, out: newOutQueue(),
		rank: 0, limit: 2, links: make([]*hostLink, 2), dialing: make([]bool, 2), stopWriter: make(chan struct{})}
	real, remote := peer.NewMemoryLinks(wasm.MaxFrame)
	var s sink
	remote.Bind(&s)
	require.NoError(t, r.Attach(1, real))
	// drain is the writer: it takes what is queued for the guest
	drain := func() int {
		b, ok := r.out.take(r.stopWriter)
		if !ok {
			return 0
		}
		n := len(b)
		r.out.give(b)
		return n
	}
	require.Positive(t, drain()) // the link-up
	r.out.setDirect(direct)

	hdr, payload := make([]byte, peer.HeaderLen), make([]byte, 16<<10)
	frame := append(append([]byte(nil), hdr...), payload...)
	var stream bytes.Reader
	rd := wasm.NewReader(&stream)
	toHost := wasm.AppendData(nil, 1, frame[:peer.HeaderLen], frame[peer.HeaderLen:])
	credit := wasm.AppendCredit(nil, 1, len(frame))
	// no require inside: boxing its arguments would allocate
	step := func() {
		// guest → host → remote
		stream.Reset(toHost)
		m, err := rd.Next()
		if err == nil {
			err = r.handle(&m)
		}
		// remote → host → guest, and the guest's credit
		before := guest.n
		switch {
		case err != nil:
		case direct:
			// a link with a reader of its own (WebRTC, shm) hands the
			// frame over on it; a memory link queues it for the writer
			// (HandleFrameFlow)
			r.links[1].HandleFrame(hdr, payload)
		default:
			_, err = remote.WriteFrame(hdr, payload)
		}
		if err != nil {
			t.Fatalf("relaying: %v", err)
		}
		if direct {
			if guest.n-before <= len(frame) {
				t.Fatalf("the link's reader wrote %d bytes to the guest, want the data", guest.n-before)
			}
			if len(r.out.buf) > 0 && drain() < 0 { // a credit, if any, waits for the writer
				t.Fatal("drain")
			}
		} else if drain() <= len(frame) { // the data, maybe a credit
			t.Fatal("the writer found no data for the guest")
		}
		stream.Reset(credit)
		if m, err = rd.Next(); err == nil {
			err = r.handle(&m)
		}
		if err != nil {
			t.Fatalf("credit: %v", err)
		}
	}
	step() // grow the queues
	allocs := testing.AllocsPerRun(200, step)
	require.Zero(t, allocs, "allocations per relayed frame pair")
	require.Equal(t, 202, s.frames)
}
