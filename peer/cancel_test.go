//go:build !js && !wasip1

package peer

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// cancelEager and cancelRndv are message sizes below and above the eager
// limit the cancel tests' endpoints have.
const (
	cancelEagerLimit = 1 << 10
	cancelEager      = 100
	cancelRndv       = 40 << 10
)

// cancelPair makes ranks 0 and 1 joined by some kind of link, with
// cancelEagerLimit; the cleanup closes them.
type cancelPair func(t *testing.T) (a, b *Endpoint)

func memCancelPair(t *testing.T) (*Endpoint, *Endpoint) {
	a, b, _, _ := memPair(t, cancelEagerLimit)
	t.Cleanup(func() { a.Close(nil); b.Close(nil) })
	return a, b
}

// linkCancelPair attaches two endpoints with cancelEagerLimit to la and lb.
func linkCancelPair(t *testing.T, la, lb Link) (*Endpoint, *Endpoint) {
	a, err := NewEndpoint(Config{Rank: 0, Size: 2, EagerLimit: cancelEagerLimit})
	require.NoError(t, err)
	b, err := NewEndpoint(Config{Rank: 1, Size: 2, EagerLimit: cancelEagerLimit})
	require.NoError(t, err)
	require.NoError(t, a.Attach(1, la))
	require.NoError(t, b.Attach(0, lb))
	t.Cleanup(func() { a.Close(nil); b.Close(nil) })
	return a, b
}

// cancelPairs lists the links the cancel tests run over; platform files
// add theirs.
var cancelPairs = []struct {
	name string
	pair cancelPair
}{{"memory", memCancelPair}}

// awaitProbe waits until a message from src with tag is unexpected at e.
func awaitProbe(t *testing.T, e *Endpoint, src int, tag int32) Envelope {
	t.Helper()
	ch := make(chan struct{}, 1)
	e.Watch(ch)
	defer e.Unwatch(ch)
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	for {
		e.Poll()
		env, ok, err := e.Iprobe(src, 0, tag)
		require.NoError(t, err)
		if ok {
			return env
		}
		select {
		case <-ch:
		case <-time.After(time.Millisecond): // a polled link delivers only when polled
		case <-timer.C:
			t.Fatalf("no message from rank %d tag %d arrived", src, tag)
		}
	}
}

// startSend starts a send of buf from a to rank 1 on tag and returns its op.
func startSend(t *testing.T, a *Endpoint, mode Mode, tag int32, buf []byte) *Op {
	t.Helper()
	op := a.GetOp()
	require.NoError(t, a.StartSend(op, mode, 1, 0, tag, buf))
	return op
}

// cancel asks to cancel send and waits for both ops: the cancel's
// outcome and the send's result.
func cancel(t *testing.T, a *Endpoint, send *Op) (cancelled bool, sent Result) {
	t.Helper()
	cop := a.GetOp()
	require.NoError(t, a.CancelSend(cop, send))
	cr := waitTimeout(t, cop, 10*time.Second)
	require.NoError(t, cr.Err)
	sent = waitTimeout(t, send, 10*time.Second)
	a.PutOp(cop)
	return cr.Cancelled, sent
}

func TestCancelSend(t *testing.T) {
	for _, p := range cancelPairs {
		t.Run(p.name, func(t *testing.T) {
			for _, tc := range []struct {
				name string
				mode Mode
				size int
			}{
				{"eager", Standard, cancelEager},
				{"empty", Standard, 0},
				{"rendezvous", Standard, cancelRndv},
				{"synchronous", Synchronous, cancelEager},
			} {
				t.Run(tc.name, func(t *testing.T) {
					hangGuard(t, time.Minute)
					a, b := p.pair(t)
					first, second := pattern(tc.size, 1), pattern(tc.size+1, 2)

					// unmatched: withdrawn, and nobody sees it
					send := startSend(t, a, tc.mode, 7, first)
					awaitProbe(t, b, AnySource, AnyTag)
					cancelled, sent := cancel(t, a, send)
					require.True(t, cancelled, "an unmatched send is cancelled")
					require.NoError(t, sent.Err)
					_, ok, err := b.Iprobe(AnySource, 0, AnyTag)
					require.NoError(t, err)
					require.False(t, ok, "the cancelled message is gone")

					// the next message is the one an any-source receive gets
					next := startSend(t, a, tc.mode, 7, second)
					got := make([]byte, len(second))
					recv := b.GetOp()
					require.NoError(t, b.StartRecv(recv, AnySource, 0, AnyTag, got))
					rr := waitTimeout(t, recv, 10*time.Second)
					require.NoError(t, rr.Err)
					require.Equal(t, len(second), rr.N)
					require.True(t, bytes.Equal(second, got), "received the message after the cancelled one")

					// matched: too late
					cancelled, sent = cancel(t, a, next)
					require.False(t, cancelled, "a received send is not cancelled")
					require.NoError(t, sent.Err)
					require.False(t, sent.Cancelled)

					// matched but not received yet: an Improbe took it
					third := startSend(t, a, tc.mode, 8, first)
					awaitProbe(t, b, 0, 8)
					m, err := b.Improbe(0, 0, 8)
					require.NoError(t, err)
					require.NotNil(t, m)
					cop := a.GetOp()
					require.NoError(t, a.CancelSend(cop, third))
					mr := b.GetOp()
					require.NoError(t, b.StartMrecv(mr, m, make([]byte, len(first))))
					require.NoError(t, waitTimeout(t, mr, 10*time.Second).Err)
					cr := waitTimeout(t, cop, 10*time.Second)
					require.NoError(t, cr.Err)
					require.False(t, cr.Cancelled, "a message taken by Improbe is matched")
					require.NoError(t, waitTimeout(t, third, 10*time.Second).Err)
					require.Zero(t, a.slotsInUse())
					require.Zero(t, b.slotsInUse())
				})
			}
		})
	}
}

// A receive posted while the cancel is on its way either gets the message
// (and the cancel says false) or does not (the cancel says true, and the
// receive gets the message sent after): never both, never neither.
func TestCancelSendRacesReceive(t *testing.T) {
	for _, p := range cancelPairs {
		t.Run(p.name, func(t *testing.T) {
			for _, size := range []int{cancelEager, cancelRndv} {
				hangGuard(t, 2*time.Minute)
				a, b := p.pair(t)
				n := 300
				if size > cancelEagerLimit || testing.Short() {
					n = 100
				}
				wins := [2]int{}
				for i := range n {
					msg, after := pattern(size, 2*i), pattern(size, 2*i+1)
					send := startSend(t, a, Standard, 3, msg)
					if i%2 == 0 {
						awaitProbe(t, b, 0, 3) // sometimes the message is sure to be unexpected
					}
					got := make([]byte, size)
					recv := b.GetOp()
					errc := make(chan error, 1)
					go func() { errc <- b.StartRecv(recv, AnySource, 0, 3, got) }()
					cancelled, sent := cancel(t, a, send)
					require.NoError(t, <-errc)
					require.NoError(t, sent.Err)
					if cancelled {
						next := startSend(t, a, Standard, 3, after)
						require.NoError(t, waitTimeout(t, next, 10*time.Second).Err)
						require.NoError(t, waitTimeout(t, recv, 10*time.Second).Err)
						require.True(t, bytes.Equal(after, got), "round %d: cancelled, yet the receive got the cancelled message", i)
						a.PutOp(next)
						wins[1]++
					} else {
						require.NoError(t, waitTimeout(t, recv, 10*time.Second).Err)
						require.True(t, bytes.Equal(msg, got), "round %d: not cancelled, yet the receive did not get the message", i)
						wins[0]++
					}
					a.PutOp(send)
					b.PutOp(recv)
					_, ok, err := b.Iprobe(AnySource, 0, AnyTag)
					require.NoError(t, err)
					require.False(t, ok, "round %d: a message was left over", i)
				}
				require.Zero(t, a.slotsInUse())
				require.Zero(t, b.slotsInUse())
				t.Logf("%d-byte messages: %d received, %d cancelled", size, wins[0], wins[1])
				a.Close(nil)
				b.Close(nil)
			}
		})
	}
}

// Cancels the endpoint cannot take are errors; those with nothing left to
// withdraw complete at once, not cancelled; a second cancel of a send
// waits for the message as the first did.
func TestCancelSendEdges(t *testing.T) {
	a, b := memCancelPair(t)
	cop := a.GetOp()
	idle := a.GetOp()
	require.ErrorIs(t, a.CancelSend(cop, idle), ErrCancelArg, "a send never started")
	recv := a.GetOp()
	require.NoError(t, a.StartRecv(recv, 1, 0, 1, nil))
	require.ErrorIs(t, a.CancelSend(cop, recv), ErrCancelArg, "a receive")
	require.True(t, a.Cancel(recv))
	require.False(t, cop.Active(), "a refused cancel leaves its op idle")

	// a rendezvous whose data moved has nothing to withdraw
	got := make([]byte, cancelRndv)
	r := b.GetOp()
	require.NoError(t, b.StartRecv(r, 0, 0, 2, got))
	send := startSend(t, a, Standard, 2, pattern(cancelRndv, 3))
	require.NoError(t, waitTimeout(t, send, 10*time.Second).Err)
	require.NoError(t, a.CancelSend(cop, send))
	require.False(t, waitTimeout(t, cop, time.Second).Cancelled)
	require.ErrorIs(t, a.CancelSend(send, cop), ErrCancelArg, "a cancel op is no send")

	// twice: the second cancel finds the message gone
	send2 := startSend(t, a, Standard, 4, pattern(cancelEager, 4))
	awaitProbe(t, b, 0, 4)
	cop2 := a.GetOp()
	require.NoError(t, a.CancelSend(cop, send2))
	require.NoError(t, a.CancelSend(cop2, send2))
	c1, c2 := waitTimeout(t, cop, 10*time.Second), waitTimeout(t, cop2, 10*time.Second)
	require.True(t, c1.Cancelled)
	require.False(t, c2.Cancelled, "the message was withdrawn by the first")
}

// The cancel frame names the message it follows on the link; the reply
// completes the cancel; a lost link fails a cancel waiting for one.
func TestCancelSendFrames(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply func(l *rawLink, h Header) // delivers the peer's answer, or fails the link
		want  bool
		err   error
	}{
		{"cancelled", func(l *rawLink, h Header) {
			l.h.HandleFrame(frame(Header{Kind: KindCancelReply, Source: 1, Flags: FlagCancelled, Seq: h.Seq, RID: h.RID}), nil)
		}, true, nil},
		{"too late", func(l *rawLink, h Header) {
			l.h.HandleFrame(frame(Header{Kind: KindCancelReply, Source: 1, Seq: h.Seq, RID: h.RID}), nil)
		}, false, nil},
		{"link lost", func(l *rawLink, h Header) { l.h.HandleClose(errors.New("gone")) }, false, ErrProcFailed},
		{"unknown cancel", func(l *rawLink, h Header) {
			l.h.HandleFrame(frame(Header{Kind: KindCancelReply, Source: 1, Seq: h.Seq + 1, RID: h.RID}), nil)
		}, false, ErrFrame},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newEndpoint(t, 0, 2)
			l := &rawLink{ready: true}
			require.NoError(t, a.Attach(1, l))
			send := a.GetOp()
			require.NoError(t, a.StartSend(send, Standard, 1, 5, 9, []byte("hello")))
			require.NoError(t, wait(send).Err, "an eager send completes once written")
			cop := a.GetOp()
			require.NoError(t, a.CancelSend(cop, send))
			require.Equal(t, 2, l.written())
			var eager, cf Header
			require.NoError(t, eager.Decode(l.frames[0][:HeaderLen], 5))
			require.NoError(t, cf.Decode(l.frames[1][:HeaderLen], 0))
			require.Equal(t, KindCancel, cf.Kind)
			require.NotZero(t, eager.Seq, "eager frames carry their id")
			require.Equal(t, Header{Kind: KindCancel, Context: 5, Tag: 9, Seq: eager.Seq, RID: cf.RID}, cf)
			require.False(t, cop.Finished(), "the cancel waits for the reply")
			require.ErrorIs(t, a.CancelSend(cop, send), ErrCancelArg, "cop is active")
			tc.reply(l, cf)
			if tc.err == ErrFrame {
				// the protocol error fails the link, and the cancel with it
				tc.err = ErrProcFailed
			}
			res := waitTimeout(t, cop, 10*time.Second)
			require.ErrorIs(t, res.Err, tc.err)
			require.Equal(t, tc.want, res.Cancelled)
			require.Zero(t, a.slotsInUse())
		})
	}
}

// A receiver withdraws only the message the frame names: same tag, other
// id, is left; the eager credit it held comes back.
func TestCancelArrivedReleasesCredit(t *testing.T) {
	b := newEndpoint(t, 1, 2)
	l := &rawLink{ready: true}
	require.NoError(t, b.Attach(0, l))
	for _, seq := range []uint32{1, 2} {
		l.h.HandleFrame(frame(Header{Kind: KindEager, Source: 0, Tag: 4, Seq: seq, Total: 3}), []byte{1, 2, byte(seq)})
	}
	held := b.unexpBytes
	require.NotZero(t, held)
	l.h.HandleFrame(frame(Header{Kind: KindCancel, Source: 0, Tag: 4, Seq: 2, RID: 77}), nil)
	l.h.HandleFrame(frame(Header{Kind: KindCancel, Source: 0, Tag: 4, Seq: 2, RID: 78, Flags: FlagRendezvous}), nil)
	require.Less(t, b.unexpBytes, held)
	var replies []Header
	for _, f := range l.frames { // a credit grant may be among them
		var h Header
		require.NoError(t, h.Decode(f[:HeaderLen], len(f)-HeaderLen))
		if h.Kind == KindCancelReply {
			replies = append(replies, h)
		}
	}
	require.Len(t, replies, 2)
	r1, r2 := replies[0], replies[1]
	require.Equal(t, Header{Kind: KindCancelReply, Source: 1, Flags: FlagCancelled, Seq: 2, RID: 77}, r1)
	require.Equal(t, Header{Kind: KindCancelReply, Source: 1, Flags: FlagRendezvous, Seq: 2, RID: 78}, r2, "no RTS 2: too late")
	got := make([]byte, 3)
	op := b.GetOp()
	require.NoError(t, b.StartRecv(op, AnySource, 0, AnyTag, got))
	require.NoError(t, wait(op).Err)
	require.Equal(t, []byte{1, 2, 1}, got)
	_, ok, err := b.Iprobe(AnySource, 0, AnyTag)
	require.NoError(t, err)
	require.False(t, ok)
}

func TestCancelFrameDecode(t *testing.T) {
	for _, tc := range []struct {
		name    string
		h       Header
		payload int
		ok      bool
	}{
		{"cancel", Header{Kind: KindCancel, Seq: 3, RID: 4, Tag: 5, Context: 6}, 0, true},
		{"cancel rendezvous", Header{Kind: KindCancel, Flags: FlagRendezvous, Seq: 3, RID: 4}, 0, true},
		{"reply", Header{Kind: KindCancelReply, Flags: FlagRendezvous | FlagCancelled, Seq: 3, RID: 4}, 0, true},
		{"cancel with cancelled flag", Header{Kind: KindCancel, Flags: FlagCancelled}, 0, false},
		{"cancel with payload", Header{Kind: KindCancel}, 1, false},
		{"reply refused", Header{Kind: KindCancelReply, Flags: FlagRefused}, 0, false},
		{"cts with cancelled flag", Header{Kind: KindCTS, Flags: FlagCancelled}, 0, false},
		{"eager with rendezvous flag", Header{Kind: KindEager, Flags: FlagRendezvous}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got Header
			err := got.Decode(frame(tc.h), tc.payload)
			if !tc.ok {
				require.ErrorIs(t, err, ErrFrame)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.h, got)
			require.NotContains(t, tc.h.Kind.String(), "kind(")
		})
	}
}
