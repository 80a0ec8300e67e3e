package peer

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// SendEager sends only what may leave at once, in order with what the
// link already carries, and leaves everything else to an Op; what it
// sent arrives whole.
func TestSendEager(t *testing.T) {
	small := []byte("eight by")
	// sized by the link's eager limit, known once it is attached
	atLimit := func(limit int) []byte { return bytesOf(limit) }
	pastLimit := func(limit int) []byte { return bytesOf(limit + 1) }
	cases := []struct {
		name  string
		setup func(a *Endpoint, raw *rawLink) // a's link to rank 1 is raw
		dst   int
		buf   []byte
		sized func(limit int) []byte // instead of buf
		sent  bool
	}{
		{name: "small", dst: 1, buf: small, sent: true},
		{name: "empty", dst: 1, buf: nil, sent: true},
		{name: "at the link's eager limit", dst: 1, sized: atLimit, sent: true},
		{name: "past the link's eager limit", dst: 1, sized: pastLimit},
		{name: "negative rank", dst: -1, buf: small},
		{name: "rank past the world", dst: 3, buf: small},
		{name: "no link yet", dst: 2, buf: small},
		{name: "a send queued before it", dst: 1, buf: small, setup: func(a *Endpoint, raw *rawLink) {
			raw.ready = false // the first send blocks the link; the second queues
			for range 2 {
				require.NoError(t, a.StartSend(a.GetOp(), Standard, 1, 0, 1, small))
			}
		}},
		{name: "blocked link", dst: 1, buf: small, setup: func(a *Endpoint, raw *rawLink) {
			raw.ready = false
			require.NoError(t, a.StartSend(a.GetOp(), Standard, 1, 0, 1, small))
		}},
		{name: "no credit", dst: 1, buf: small, setup: func(a *Endpoint, _ *rawLink) {
			c := a.conns[1].Load()
			c.credit.Store(0)
		}},
		{name: "dead link", dst: 1, buf: small, setup: func(a *Endpoint, _ *rawLink) {
			a.conns[1].Load().dead.Store(true)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := newEndpoint(t, 0, 3)
			raw := &rawLink{ready: true}
			require.NoError(t, a.Attach(1, raw))
			if tc.setup != nil {
				tc.setup(a, raw)
			}
			buf := tc.buf
			if tc.sized != nil {
				buf = tc.sized(a.conns[1].Load().eagerMax)
			}
			before := raw.written()
			sent, err := a.SendEager(tc.dst, 7, 5, buf)
			require.NoError(t, err)
			require.Equal(t, tc.sent, sent)
			if !tc.sent {
				require.Equal(t, before, raw.written(), "a send left to an Op writes nothing")
				return
			}
			require.Equal(t, before+1, raw.written())
			raw.mu.Lock()
			f := raw.frames[len(raw.frames)-1]
			raw.mu.Unlock()
			var h Header
			require.NoError(t, h.Decode(f[:HeaderLen], len(f)-HeaderLen))
			require.Equal(t, KindEager, h.Kind)
			require.Equal(t, uint32(7), h.Context)
			require.Equal(t, int32(5), h.Tag)
			require.Equal(t, uint64(len(buf)), h.Total)
			require.NotZero(t, h.Seq, "a message id, as a queued eager send has")
			require.Equal(t, string(buf), string(f[HeaderLen:]))
		})
	}
}

// Done is ready for an op that completed before it was called (no
// token was sent then: nobody had asked), and gets a token for one that
// completes after.
func TestDoneReady(t *testing.T) {
	a, b := memoryPair(t, 0)
	r := b.GetOp()
	got, msg := make([]byte, 8), []byte("8 bytes!")
	ready := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	for _, doneFirst := range []bool{false, true, false, true} {
		require.NoError(t, b.StartRecv(r, 0, 0, 1, got))
		var ch <-chan struct{}
		if doneFirst {
			ch = r.Done()
			require.False(t, ready(ch), "a token left from an earlier start")
		}
		sent, err := a.SendEager(1, 0, 1, msg) // handed over on this goroutine
		require.True(t, sent)
		require.NoError(t, err)
		require.True(t, r.Finished())
		if !doneFirst {
			ch = r.Done()
		}
		require.True(t, ready(ch), "done first: %v", doneFirst)
	}
}

// A goroutine that sleeps on Done wakes for its op's completion however
// the two race: Done's look at the state and the completer's look at
// the waiter flag cannot both miss (a miss would hang this test), and a
// token a start left behind never wakes the next start for good.
func TestDoneWakesWaiter(t *testing.T) {
	a, b := memoryPair(t, 0)
	r := b.GetOp()
	got, msg := make([]byte, 8), []byte("a message")[:8]
	for i := range 20000 {
		require.NoError(t, b.StartRecv(r, 0, 0, 1, got))
		go func() {
			if i%2 == 0 {
				if sent, _ := a.SendEager(1, 0, 1, msg); sent {
					return
				}
			}
			s := a.GetOp()
			_ = a.StartSend(s, Standard, 1, 0, 1, msg)
		}()
		for !r.Finished() {
			<-r.Done()
		}
		require.NoError(t, r.Result().Err)
	}
}

// bytesOf is n bytes of a repeating pattern.
func bytesOf(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + 1)
	}
	return b
}
