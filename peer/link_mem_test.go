package peer

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func memPair(t *testing.T, eager int) (a, b *Endpoint, la, lb Link) {
	t.Helper()
	var err error
	a, err = NewEndpoint(Config{Rank: 0, Size: 2, EagerLimit: eager})
	require.NoError(t, err)
	b, err = NewEndpoint(Config{Rank: 1, Size: 2, EagerLimit: eager})
	require.NoError(t, err)
	la, lb = NewMemoryLinks(0)
	require.NoError(t, a.Attach(1, la))
	require.NoError(t, b.Attach(0, lb))
	return a, b, la, lb
}

// While a rank polls, small frames for it wait in its inbox until it
// polls or stops polling; a large frame is handed over at once, behind the
// queued ones, so messages still match in the order they were sent.
func TestMemoryInboxQueuesForPoller(t *testing.T) {
	a, b, _, _ := memPair(t, 1<<20)
	small := []byte("small")
	large := bytes.Repeat([]byte{7}, memQueueMax+1)

	b.Polling(true)
	r1, r2 := b.GetOp(), b.GetOp()
	got1, got2 := make([]byte, 8), make([]byte, len(large))
	require.NoError(t, b.StartRecv(r1, 0, 0, 5, got1))
	require.NoError(t, b.StartRecv(r2, 0, 0, 9, got2))
	s := a.GetOp()
	require.NoError(t, a.StartSend(s, Standard, 1, 0, 5, small))
	require.NoError(t, wait(s).Err, "an eager send completes once its frame is queued")
	require.False(t, r1.Finished(), "a small frame waits for the polling receiver")
	b.Poll()
	require.True(t, r1.Finished())
	require.Equal(t, "small", string(got1[:wait(r1).N]))

	// queued, then large with the same tag: the large one goes straight
	// to b, after the queued one
	r3, r5 := b.GetOp(), b.GetOp()
	got3, got5 := make([]byte, len(large)), make([]byte, len(large))
	require.NoError(t, b.StartRecv(r3, 0, 0, 6, got3))
	require.NoError(t, b.StartRecv(r5, 0, 0, 6, got5))
	require.NoError(t, a.StartSend(s, Standard, 1, 0, 6, []byte("first")))
	wait(s)
	require.NoError(t, a.StartSend(s, Standard, 1, 0, 6, large))
	wait(s)
	require.True(t, r3.Finished(), "the large frame hands over the queued one")
	require.True(t, r5.Finished())
	require.Equal(t, "first", string(got3[:wait(r3).N]), "messages overtook each other")
	require.True(t, bytes.Equal(large, got5[:wait(r5).N]))
	require.False(t, r2.Finished())

	// stopping hands over what is queued
	r4 := b.GetOp()
	require.NoError(t, b.StartRecv(r4, 0, 0, 7, got1))
	require.NoError(t, a.StartSend(s, Standard, 1, 0, 7, small))
	wait(s)
	require.False(t, r4.Finished())
	b.Polling(false)
	require.True(t, r4.Finished())

	// not polling: the writer hands over at once
	require.NoError(t, b.StartRecv(r4, 0, 0, 8, got1))
	require.NoError(t, a.StartSend(s, Standard, 1, 0, 8, small))
	require.True(t, r4.Finished())
}

// A peer that sends and then closes its link: the receiver gets the
// message before it learns the peer is gone, as a data channel delivers.
func TestMemoryInboxCloseAfterQueued(t *testing.T) {
	a, b, la, _ := memPair(t, 0)
	b.Polling(true)
	s := a.GetOp()
	require.NoError(t, a.StartSend(s, Standard, 1, 0, 1, []byte("bye")))
	wait(s)
	require.NoError(t, la.Close())
	r := b.GetOp()
	got := make([]byte, 8)
	require.NoError(t, b.StartRecv(r, 0, 0, 1, got))
	b.Poll()
	require.NoError(t, wait(r).Err)
	require.Equal(t, "bye", string(got[:3]))
	r2 := b.GetOp()
	err := b.StartRecv(r2, 0, 0, 2, got)
	if err == nil {
		err = wait(r2).Err
	}
	require.ErrorIs(t, err, ErrProcFailed)
	b.Polling(false)
}

// Two ranks play ping-pong with messages of mixed sizes (queued, handed
// over directly, rendezvous) while each toggles its polling at random:
// every message arrives intact and in order, and none is stranded in an
// inbox (each ping waits for its pong, so a stranded frame hangs the test).
func TestMemoryInboxStress(t *testing.T) {
	a, b, _, _ := memPair(t, 2<<10)
	eps := []*Endpoint{a, b}
	const rounds = 20000
	sizes := []int{0, 8, 1000, memQueueMax, memQueueMax + 1, 20 << 10}
	payload := func(i int) []byte {
		p := make([]byte, sizes[i%len(sizes)])
		for j := range p {
			p[j] = byte(i + j)
		}
		return p
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for me, ep := range eps {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(me), 1))
			peer := 1 - me
			polling := false
			got := make([]byte, 20<<10)
			await := func(op *Op) error {
				for polling && !op.Finished() {
					ep.Poll()
					runtime.Gosched() // for GOMAXPROCS=1
				}
				return wait(op).Err
			}
			for i := range rounds {
				if rng.IntN(2) == 0 {
					polling = !polling
					ep.Polling(polling)
				}
				op := ep.GetOp()
				var err error
				if (i+me)%2 == 0 { // my turn to send
					err = ep.StartSend(op, Standard, peer, 0, int32(i), payload(i))
					if err == nil {
						err = await(op)
					}
				} else {
					err = ep.StartRecv(op, peer, 0, int32(i), got)
					if err == nil {
						err = await(op)
					}
					if err == nil && !bytes.Equal(payload(i), got[:op.Result().N]) {
						err = errors.New("message corrupted or out of order")
					}
				}
				ep.PutOp(op)
				if err != nil {
					errs <- err
					return
				}
			}
			if polling {
				ep.Polling(false)
			}
		})
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(2 * time.Minute): // a generous bound: a stranded frame hangs for good
		t.Fatal("ping-pong hung: a frame was stranded in an inbox")
	}
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}
