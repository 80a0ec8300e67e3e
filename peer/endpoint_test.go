package peer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/meshmpi/meshmpi/op"
	"github.com/stretchr/testify/require"
)

var _ Link = (*memLink)(nil)

// rawLink is a link the test drives by hand: it records what the endpoint
// writes, and the test delivers frames through its handler.
type rawLink struct {
	mu     sync.Mutex
	h      LinkHandler
	frames [][]byte
	ready  bool
	closed bool
}

func (l *rawLink) Bind(h LinkHandler) { l.h = h }
func (l *rawLink) MaxFrame() int      { return 1024 }
func (l *rawLink) WriteFrame(hdr, payload []byte) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.frames = append(l.frames, append(append([]byte(nil), hdr...), payload...))
	return l.ready, nil
}
func (l *rawLink) Close() error {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	return nil
}
func (l *rawLink) written() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.frames)
}

func newEndpoint(t *testing.T, rank, size int) *Endpoint {
	t.Helper()
	e, err := NewEndpoint(Config{Rank: rank, Size: size})
	require.NoError(t, err)
	return e
}

func frame(h Header) []byte {
	b := make([]byte, HeaderLen)
	h.Encode(b)
	return b
}

func wait(op *Op) Result {
	for !op.Finished() {
		<-op.Done()
	}
	return op.Result()
}

// A peer that breaks the protocol is treated as lost: its link is closed
// and everything waiting on it fails with ErrProcFailed, never a panic.
func TestProtocolViolationFailsPeer(t *testing.T) {
	for _, tc := range []struct {
		name    string
		hdr     []byte
		payload []byte
		want    error
	}{
		{"spoofed source", frame(Header{Kind: KindEager, Source: 0, Total: 1}), []byte{1}, ErrFrame},
		{"bad version", func() []byte { b := frame(Header{Kind: KindEager, Source: 1}); b[0] = 9; return b }(), nil, ErrVersion},
		{"short header", []byte{1, 1, 0}, nil, ErrFrame},
		{"cts for unknown send", frame(Header{Kind: KindCTS, Source: 1, Seq: 12345, Total: 4}), nil, ErrFrame},
		{"data for unknown receive", frame(Header{Kind: KindData, Source: 1, RID: 99, Total: 4}), []byte{1, 2, 3, 4}, ErrFrame},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEndpoint(t, 0, 2)
			l := &rawLink{ready: true}
			require.NoError(t, e.Attach(1, l))
			var told []error
			e.OnPeerFailed(func(rank int, err error) {
				require.Equal(t, 1, rank)
				told = append(told, err)
			})
			specific, wild := e.GetOp(), e.GetOp()
			require.NoError(t, e.StartRecv(specific, 1, 0, 0, make([]byte, 8)))
			require.NoError(t, e.StartRecv(wild, AnySource, 0, AnyTag, make([]byte, 8)))

			l.h.HandleFrame(tc.hdr, tc.payload)

			require.True(t, l.closed, "the offending link must be closed")
			res := wait(specific)
			require.ErrorIs(t, res.Err, ErrProcFailed)
			require.ErrorIs(t, res.Err, tc.want)
			// the wildcard receive stays posted (another rank may send);
			// the hook tells the layer above, once
			require.False(t, wild.Finished())
			require.Len(t, told, 1)
			require.ErrorIs(t, told[0], tc.want)
			require.True(t, e.Cancel(wild))
			// later operations with the lost peer fail at once
			send := e.GetOp()
			require.NoError(t, e.StartSend(send, Standard, 1, 0, 0, []byte{1}))
			require.ErrorIs(t, wait(send).Err, ErrProcFailed)
		})
	}
}

// The endpoint stops writing when the link reports it is above its
// high-water mark and resumes only on HandleWritable: backpressure without
// polling.
func TestBackpressure(t *testing.T) {
	e := newEndpoint(t, 0, 2)
	l := &rawLink{ready: false}
	require.NoError(t, e.Attach(1, l))
	var ops []*Op
	for i := range 3 {
		op := e.GetOp()
		require.NoError(t, e.StartSend(op, Standard, 1, 0, int32(i), []byte{byte(i)}))
		ops = append(ops, op)
	}
	require.Equal(t, 1, l.written(), "one frame, then the link is full")
	require.True(t, ops[0].Finished())
	require.False(t, ops[1].Finished())
	l.h.HandleWritable()
	require.Equal(t, 2, l.written())
	l.ready = true
	l.h.HandleWritable()
	require.Equal(t, 3, l.written())
	for i, op := range ops {
		require.NoError(t, wait(op).Err)
		var h Header
		require.NoError(t, h.Decode(l.frames[i][:HeaderLen], 1))
		require.Equal(t, int32(i), h.Tag, "frames leave in order")
	}
}

// Rendezvous over frames far smaller than the message: the receiver gets
// the message intact, and never holds more than its own buffer.
func TestRendezvousManyFrames(t *testing.T) {
	a, b := newEndpoint(t, 0, 2), newEndpoint(t, 1, 2)
	la, lb := NewMemoryLinks(HeaderLen + 7)
	require.NoError(t, a.Attach(1, la))
	require.NoError(t, b.Attach(0, lb))
	msg := make([]byte, 1000)
	for i := range msg {
		msg[i] = byte(i * 7)
	}
	send := a.GetOp()
	require.NoError(t, a.StartSend(send, Standard, 1, 4, 9, msg))
	require.False(t, send.Finished(), "a rendezvous send waits for its receiver")
	got := make([]byte, 1000)
	recv := b.GetOp()
	require.NoError(t, b.StartRecv(recv, 0, 4, 9, got))
	require.NoError(t, wait(recv).Err)
	require.NoError(t, wait(send).Err)
	require.True(t, bytes.Equal(msg, got))
}

// Eager messages between two endpoints and through the unexpected queue
// allocate nothing once the pools are warm.
func TestEagerZeroAlloc(t *testing.T) {
	a, b := newEndpoint(t, 0, 2), newEndpoint(t, 1, 2)
	la, lb := NewMemoryLinks(0)
	require.NoError(t, a.Attach(1, la))
	require.NoError(t, b.Attach(0, lb))
	msg, got := make([]byte, 256), make([]byte, 256)
	cycle := func() {
		s, r := a.GetOp(), b.GetOp()
		_ = a.StartSend(s, Standard, 1, 0, 1, msg) // unexpected at b
		wait(s)
		_ = b.StartRecv(r, 0, 0, 1, got)
		wait(r)
		r2 := b.GetOp()
		_ = b.StartRecv(r2, AnySource, 0, AnyTag, got) // posted first
		_ = a.StartSend(s, Standard, 1, 0, 2, msg)
		wait(r2)
		a.PutOp(s)
		b.PutOp(r)
		b.PutOp(r2)
	}
	cycle()
	require.Zero(t, testing.AllocsPerRun(1000, cycle))
}

func BenchmarkHeaderEncodeDecode(b *testing.B) {
	b.ReportAllocs()
	var buf [HeaderLen]byte
	h := Header{Kind: KindData, Context: 3, Tag: 7, Source: 1, RID: 9, Total: 1 << 20, Offset: 4096}
	var got Header
	for range b.N {
		h.Encode(buf[:])
		if err := got.Decode(buf[:], 4096); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMatch posts a receive behind depth non-matching ones and
// delivers an eager message to it: matching cost per queue depth.
func BenchmarkMatch(b *testing.B) {
	for _, depth := range []int{0, 16, 256} {
		b.Run(fmt.Sprint("depth", depth), func(b *testing.B) {
			b.ReportAllocs()
			e, err := NewEndpoint(Config{Rank: 0, Size: 1})
			if err != nil {
				b.Fatal(err)
			}
			if err := e.Attach(0, NewLoopbackLink(0)); err != nil {
				b.Fatal(err)
			}
			for i := range depth { // receives that never match
				_ = e.StartRecv(e.GetOp(), 0, 0, int32(1000+i), nil)
			}
			msg := make([]byte, 8)
			s, r := e.GetOp(), e.GetOp()
			b.ResetTimer()
			for range b.N {
				_ = e.StartRecv(r, 0, 0, 1, msg)
				_ = e.StartSend(s, Standard, 0, 0, 1, msg)
				wait(r)
				wait(s)
			}
		})
	}
}

// CancelTagged withdraws a failed collective's posted receives and drops
// the unexpected messages it would have taken (eager and rendezvous
// announcements), leaving other tags and contexts alone: a later receive
// with the same tag must not take them.
func TestCancelTaggedDropsUnexpected(t *testing.T) {
	a, b := newEndpoint(t, 0, 2), newEndpoint(t, 1, 2)
	la, lb := NewMemoryLinks(HeaderLen + 64)
	require.NoError(t, a.Attach(1, la))
	require.NoError(t, b.Attach(0, lb))
	const ctx, other, mask = 7, 8, -1 << 12
	for _, m := range []struct {
		ctx uint32
		tag int32
		n   int
	}{
		{ctx, 5<<12 | 1, 8},    // eager, the cancelled sequence
		{ctx, 5<<12 | 2, 4096}, // rendezvous announcement, same sequence
		{ctx, 6<<12 | 1, 8},    // another sequence
		{other, 5<<12 | 1, 8},  // another context
	} {
		require.NoError(t, a.StartSend(a.GetOp(), Standard, 1, m.ctx, m.tag, make([]byte, m.n)))
	}
	require.Eventually(t, func() bool {
		_, ok, _ := b.Iprobe(0, other, AnyTag)
		return ok
	}, 10*time.Second, time.Millisecond, "messages arrive")
	posted := b.GetOp()
	require.NoError(t, b.StartRecv(posted, 0, ctx, 5<<12|3, make([]byte, 8))) // takes none of them

	errFailed := errors.New("collective failed")
	b.CancelTagged(ctx, 5<<12, mask, errFailed)

	require.ErrorIs(t, wait(posted).Err, errFailed)
	_, ok, err := b.Iprobe(0, ctx, 5<<12|1)
	require.NoError(t, err)
	require.False(t, ok, "eager message of the cancelled sequence kept")
	_, ok, _ = b.Iprobe(0, ctx, 5<<12|2)
	require.False(t, ok, "announcement of the cancelled sequence kept")
	for _, m := range []struct {
		ctx uint32
		tag int32
	}{{ctx, 6<<12 | 1}, {other, 5<<12 | 1}} {
		_, ok, _ := b.Iprobe(0, m.ctx, m.tag)
		require.True(t, ok, "message ctx %d tag %#x dropped", m.ctx, m.tag)
	}
}

// slotsInUse counts the rendezvous slots that hold an operation.
func (e *Endpoint) slotsInUse() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, op := range e.slots {
		if op != nil {
			n++
		}
	}
	return n
}

// A rank that fails after announcing a rendezvous message leaves the
// announcement in the unexpected queue; a receive that matches it later,
// or that was posted before and matches a late announcement, fails with
// ErrProcFailed instead of waiting for data that will never come. (A
// ReduceScatter whose peer was killed waited forever for such a receive:
// it matched the announcement after the failure had been handled.)
func TestReceiveOfFailedSendersAnnouncement(t *testing.T) {
	for _, tc := range []struct {
		name string
		post func(e *Endpoint, o *Op) error
	}{
		{"specific source", func(e *Endpoint, o *Op) error { return e.StartRecv(o, 1, 0, 5, make([]byte, 4096)) }},
		{"any source", func(e *Endpoint, o *Op) error { return e.StartRecv(o, AnySource, 0, AnyTag, make([]byte, 4096)) }},
		{"accumulating", func(e *Endpoint, o *Op) error {
			return e.StartRecvAccumulateMasked(o, 1, 0, 5, -1, make([]byte, 4096), op.Sum, op.Int64)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEndpoint(t, 0, 2)
			l := &rawLink{ready: true}
			require.NoError(t, e.Attach(1, l))
			l.h.HandleFrame(frame(Header{Kind: KindRTS, Source: 1, Tag: 5, Seq: 77, Total: 4096}), nil)
			e.FailPeer(1, fmt.Errorf("rank 1 left the job: %w", ErrProcFailed))

			op := e.GetOp()
			require.NoError(t, tc.post(e, op))
			require.ErrorIs(t, wait(op).Err, ErrProcFailed)
			require.Zero(t, e.slotsInUse(), "a slot outlives the receive")
		})
	}
}

// Rendezvous sends queued behind a blocked link, or started after the
// link failed, each complete once with ErrProcFailed when the peer fails,
// and give their slots back: a slot left behind would point at an op the
// pool hands out again.
func TestFailedPeerFreesSendSlots(t *testing.T) {
	e := newEndpoint(t, 0, 2)
	l := &rawLink{ready: false} // the first frame fills the link
	require.NoError(t, e.Attach(1, l))
	var ops []*Op
	for range 4 {
		op := e.GetOp()
		require.NoError(t, e.StartSend(op, Synchronous, 1, 0, 5, make([]byte, 64)))
		ops = append(ops, op)
	}
	require.Equal(t, 1, l.written(), "the link is blocked after one RTS")
	require.Equal(t, 4, e.slotsInUse())
	e.FailPeer(1, fmt.Errorf("rank 1 left the job: %w", ErrProcFailed))
	late := e.GetOp()
	require.NoError(t, e.StartSend(late, Synchronous, 1, 0, 5, make([]byte, 64)))
	for _, op := range append(ops, late) {
		require.ErrorIs(t, wait(op).Err, ErrProcFailed)
	}
	require.Zero(t, e.slotsInUse(), "slots outlive their sends")
}

// blockedDialer never connects: the endpoint's links are attached by hand,
// but it is an endpoint of a job with an authority (a Dialer).
type blockedDialer struct{}

func (blockedDialer) Dial(ctx context.Context, _ int) (Link, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// A lost link is a suspicion where the job has an authority (the endpoint
// dials through it): OnPeerFailed hears of it, OnPeerDeclared only once
// FailPeer confirms it, once. In an in-process world (no Dialer) the lost
// link is the confirmation.
func TestPeerDeclared(t *testing.T) {
	for _, tc := range []struct {
		name   string
		dialer Dialer
	}{
		{"job with an authority", blockedDialer{}},
		{"in-process world", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := NewEndpoint(Config{Rank: 0, Size: 2, Dialer: tc.dialer})
			require.NoError(t, err)
			defer e.Close(nil)
			l := &rawLink{ready: true}
			require.NoError(t, e.Attach(1, l))
			var failed, declared []int
			e.OnPeerFailed(func(r int, _ error) { failed = append(failed, r) })
			e.OnPeerDeclared(func(r int, _ error) { declared = append(declared, r) })
			l.h.HandleClose(ErrClosed)
			require.Equal(t, []int{1}, failed)
			if tc.dialer != nil {
				require.Empty(t, declared, "a lost link alone declares nothing")
			} else {
				require.Equal(t, []int{1}, declared)
			}
			e.FailPeer(1, fmt.Errorf("rank 1 left the job: %w", ErrProcFailed))
			e.FailPeer(1, fmt.Errorf("rank 1 left the job: %w", ErrProcFailed))
			require.Equal(t, []int{1}, failed)
			require.Equal(t, []int{1}, declared)
		})
	}
}
