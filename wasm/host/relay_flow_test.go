//go:build !js && !wasip1

package host

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/internal/leaktest"
	"github.com/meshmpi/meshmpi/peer"
	"github.com/meshmpi/meshmpi/wasm"
)

// flowRelay is a relay as Serve runs it after the welcome (reader and
// writer goroutines), on a synchronous stream whose guest end the test
// drives, with no mesh.
type flowRelay struct {
	r     *relay
	guest net.Conn
	rd    *wasm.Reader
	done  chan struct{} // the reader ended
}

func startFlowRelay(t *testing.T, rank, limit int) *flowRelay {
	ctx, cancel := context.WithCancelCause(context.Background())
	hostEnd, guestEnd := net.Pipe() // a write waits for the reader, as a full socket does
	r := &relay{rw: hostEnd, log: slog.New(slog.DiscardHandler), ctx: ctx, cancel: cancel, out: newOutQueue(),
		rank: rank, limit: limit, links: make([]*hostLink, limit), dialing: make([]bool, limit),
		stopWriter: make(chan struct{}), writerDone: make(chan struct{})}
	f := &flowRelay{r: r, guest: guestEnd, rd: wasm.NewReader(bufio.NewReader(guestEnd)), done: make(chan struct{})}
	r.out.setDirect(true)
	go r.writer()
	go func() {
		defer close(f.done)
		_ = r.readLoop(wasm.NewReader(bufio.NewReaderSize(hostEnd, 64<<10)))
	}()
	t.Cleanup(func() {
		guestEnd.Close()
		hostEnd.Close()
		<-f.done
		close(r.stopWriter)
		<-r.writerDone
		cancel(nil)
	})
	return f
}

// Two WASI hosts of one process linked by a memory link, whose
// hand-over runs on the writer's goroutine (the other relay's reader):
// both guests write 4 windows' worth to each other before reading
// anything, as an all-pairs 1 MiB exchange does. Neither relay's reader
// may wait inside the other's hand-over (for its guest's credit, or for
// a write to a guest that is itself blocked writing): both guests' writes
// complete, then every frame arrives in order, and the credit the
// receiving guest returns resumes the sending side (peer.Resumer), so
// the sender gets back all but the last credit batch.
func TestRelaysOverMemoryLink(t *testing.T) {
	leaktest.Check(t)
	const frame = wasm.MaxFrame
	for _, tc := range []struct {
		name   string
		frames int // per direction
	}{
		{"a frame", 1},
		{"one window", Window / frame},
		{"four windows", 4 * Window / frame},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := []*flowRelay{startFlowRelay(t, 0, 2), startFlowRelay(t, 1, 2)}
			a, b := peer.NewMemoryLinks(frame)
			// Attach writes the link-up: the guests read it first
			up := make(chan error, 2)
			for i, f := range rs {
				go func() {
					m, err := f.rd.Next()
					if err == nil && (m.Type != wasm.MsgLinkUp || m.Rank != 1-i) {
						err = fmt.Errorf("guest %d got %v for rank %d, not a link-up", i, m.Type, m.Rank)
					}
					up <- err
				}()
			}
			require.NoError(t, rs[0].r.Attach(1, a))
			require.NoError(t, rs[1].r.Attach(0, b))
			for range rs {
				require.NoError(t, <-up)
			}

			// phase 1: each guest writes everything, reading nothing
			wrote := make(chan error, 2)
			for i, f := range rs {
				go func() {
					hdr, payload := make([]byte, peer.HeaderLen), make([]byte, frame-peer.HeaderLen)
					var msg []byte
					for n := range tc.frames {
						binary.LittleEndian.PutUint32(payload, uint32(n))
						msg = wasm.AppendData(msg[:0], 1-i, hdr, payload)
						if _, err := f.guest.Write(msg); err != nil {
							wrote <- err
							return
						}
					}
					wrote <- nil
				}()
			}
			guard := time.NewTimer(time.Minute) // hang guard
			defer guard.Stop()
			for range rs {
				select {
				case err := <-wrote:
					require.NoError(t, err)
				case <-guard.C:
					t.Fatal("the guests' writes never completed: a relay's reader waits inside the other's hand-over")
				}
			}

			// phase 2: each guest reads, crediting what it consumed
			type result struct {
				frames, credited int
				err              error
			}
			got := make(chan result, 2)
			sent := tc.frames * frame
			for i, f := range rs {
				go func() {
					var res result
					unacked := 0
					for res.frames < tc.frames || res.credited < sent-creditBatch {
						m, err := f.rd.Next()
						if err != nil {
							res.err = err
							break
						}
						switch m.Type {
						case wasm.MsgData:
							if seq := binary.LittleEndian.Uint32(m.Frame[peer.HeaderLen:]); int(seq) != res.frames || m.Rank != 1-i {
								res.err = fmt.Errorf("frame %d from rank %d is #%d", res.frames, m.Rank, seq)
							}
							res.frames++
							if unacked += len(m.Frame); unacked >= Window/8 {
								_, res.err = f.guest.Write(wasm.AppendCredit(nil, 1-i, unacked))
								unacked = 0
							}
						case wasm.MsgCredit:
							res.credited += int(m.N)
						default:
							res.err = fmt.Errorf("guest %d got %v", i, m.Type)
						}
						if res.err != nil {
							break
						}
					}
					got <- res
				}()
			}
			for range rs {
				select {
				case res := <-got:
					require.NoError(t, res.err)
					require.Equal(t, tc.frames, res.frames)
					require.GreaterOrEqual(t, res.credited, sent-creditBatch)
				case <-guard.C:
					t.Fatal("the guests never got every frame and their credit")
				}
			}
		})
	}
}

// What a guest wrote before it exited is still read: when the run ends
// the relay's context because the guest exited (errGuestDone), the
// stream stays open for reading up to its end, which the guest's closed
// end gives; any other end of the context closes it at once.
func TestStreamAfterGuestExit(t *testing.T) {
	leaktest.Check(t)
	for _, tc := range []struct {
		name  string
		cause error
		read  bool // the guest's last bytes are read
	}{
		{"the guest exited", errGuestDone, true},
		{"the run stopped", context.Canceled, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pipeEnd, guestEnd := net.Pipe()
			hostEnd := &watchedConn{Conn: pipeEnd, acted: make(chan struct{})}
			defer hostEnd.Close()
			ctx, cancel := context.WithCancelCause(context.Background())
			stop := watchStream(ctx, hostEnd, func() bool { return false })
			defer stop()
			last := wasm.AppendData(nil, 1, make([]byte, peer.HeaderLen), []byte("decision"))
			wrote := make(chan error, 1)
			go func() {
				_, err := guestEnd.Write(last) // waits for the host to read it, as a full socket would
				// the guest's end closes after watchStream acted: a
				// pipe, unlike a socket, refuses a deadline once its
				// remote end is closed
				<-hostEnd.acted
				guestEnd.Close()
				wrote <- err
			}()
			cancel(tc.cause)
			rd := wasm.NewReader(hostEnd)
			if !tc.read {
				// nothing reads yet, so the guest's write ends only when
				// watchStream closes the stream (a read before that, on
				// its goroutine, would still take the bytes)
				select {
				case err := <-wrote:
					require.Error(t, err) // the guest's write found the stream closed
				case <-time.After(time.Minute): // hang guard
					t.Fatal("the stream stayed open after the run stopped")
				}
				_, err := rd.Next()
				require.Error(t, err)
				return
			}
			m, err := rd.Next()
			require.NoError(t, err)
			require.Equal(t, wasm.MsgData, m.Type)
			require.Equal(t, "decision", string(m.Frame[peer.HeaderLen:]))
			require.NoError(t, <-wrote)
			_, err = rd.Next()
			require.ErrorIs(t, err, io.EOF) // then the end of the stream
		})
	}
}

// watchedConn is a net.Conn that says when watchStream acted on it: set
// its read deadline (a guest that exited) or closed it.
type watchedConn struct {
	net.Conn
	acted chan struct{}
	once  sync.Once
}

func (w *watchedConn) SetReadDeadline(t time.Time) error {
	err := w.Conn.SetReadDeadline(t)
	w.once.Do(func() { close(w.acted) })
	return err
}

func (w *watchedConn) Close() error {
	err := w.Conn.Close()
	w.once.Do(func() { close(w.acted) })
	return err
}
