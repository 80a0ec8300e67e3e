package wasm

import (
	"context"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/peer"
)

// evictEndpoint records what a guest's endpoint is told, in order.
type evictEndpoint struct {
	mu     sync.Mutex
	events []string
	errs   []error
	done   chan struct{} // closed at the event that ends the test
	want   int           // events before done
}

func (e *evictEndpoint) add(ev string, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.events, e.errs = append(e.events, ev), append(e.errs, err)
	if len(e.events) == e.want {
		close(e.done)
	}
}

func (e *evictEndpoint) Attach(int, peer.Link) error { return nil }
func (e *evictEndpoint) FailPeer(rank int, err error) {
	e.add("fail "+strconv.Itoa(rank), err)
}

// closingEndpoint is an evictEndpoint that can be closed with a cause,
// as a *peer.Endpoint can.
type closingEndpoint struct{ *evictEndpoint }

func (e closingEndpoint) Close(err error) { e.add("close", err) }

// TestGuestEvicted: a host's evicted message ends the guest's part in
// the job as a native rank's eviction does: OnEvicted's function is told
// first, then the endpoint closes with the reason (an endpoint that
// cannot be closed has every other rank fail), and the error matches
// peer.ErrProcFailed with the host's words, once.
func TestGuestEvicted(t *testing.T) {
	const reason = "rank 1 was evicted from the job: process failed: rank 1 was declared failed: no answer to pings within 3s"
	for _, tc := range []struct {
		name     string
		closable bool
		want     []string
	}{
		{"closable endpoint", true, []string{"told", "close"}},
		{"endpoint without Close", false, []string{"told", "fail 0", "fail 2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hostEnd, guestEnd := net.Pipe()
			defer hostEnd.Close()
			var key [KeyLen]byte
			go func() {
				rd, err := greetGuest(hostEnd, key, Welcome{Rank: 1, Size: 3})
				if err != nil {
					return
				}
				_, _ = hostEnd.Write(AppendEvicted(nil, reason))
				for { // what the guest writes, until it closes
					if _, err := rd.Next(); err != nil {
						return
					}
				}
			}()
			g, err := Connect(context.Background(), guestEnd, key)
			require.NoError(t, err)
			e := &evictEndpoint{done: make(chan struct{}), want: len(tc.want)}
			g.OnEvicted(func(err error) { e.add("told", err) })
			if tc.closable {
				g.Start(closingEndpoint{e})
			} else {
				g.Start(e)
			}
			defer g.Close()
			select {
			case <-e.done:
			case <-time.After(time.Minute): // hang guard
				t.Fatalf("the guest was told %v", e.events)
			}
			e.mu.Lock()
			defer e.mu.Unlock()
			require.Equal(t, tc.want, e.events)
			for _, err := range e.errs {
				require.ErrorIs(t, err, peer.ErrProcFailed)
				require.EqualError(t, err, reason)
			}
		})
	}
}
