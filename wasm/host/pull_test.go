//go:build !js && !wasip1

package host

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOutQueuePull: once the guest pulls, the queue hands no write out
// (neither to the writer nor to a link's reader), a push rings the
// guest, and the guest's reads, in pieces of any size and across iovecs,
// get the bytes in push order while more are pushed; the buffer does not
// grow for ever under reads in small pieces.
func TestOutQueuePull(t *testing.T) {
	q := newOutQueue()
	rings := 0
	// what the relay queued while it joined (link-ups) is not the
	// guest's to read before the queue is set, and follows the welcome
	early := []byte("link-up")
	q.push(append(q.lock(), early...))
	require.False(t, q.pending())
	require.Zero(t, q.pullInto([][]byte{make([]byte, 10)}))
	welcome := []byte("welcome")
	q.setPull(welcome, func() { rings++ })
	require.Equal(t, 1, rings, "setting the queue rings the guest")
	rings = 0
	q.setDirect(true)
	require.True(t, q.pending())
	want := append(append([]byte(nil), welcome...), early...)
	got := make([]byte, len(want))
	require.Equal(t, len(want), q.pullInto([][]byte{got}))
	require.Equal(t, want, got)
	require.False(t, q.pending())
	want, got = nil, nil
	push := func(n int) {
		b := q.lock()
		for i := range n {
			b = append(b, byte(len(want)+i))
		}
		want = append(want, b[len(b)-n:]...)
		if n%2 == 0 {
			q.push(b)
			return
		}
		_, ok := q.pushTake(b)
		require.False(t, ok, "a link's reader may not write: the guest pulls")
	}
	for i, n := range []int{1, 100, 70000, 3, 1 << 20, 4096} {
		push(n)
		require.Equal(t, i+1, rings)
		require.True(t, q.pending())
		// the guest reads some in pieces, two iovecs at a time
		for _, k := range []int{1, 7, 65536} {
			a, b := make([]byte, k), make([]byte, k/2+1)
			n := q.pullInto([][]byte{a, b})
			got = append(got, append(a, b...)[:n]...)
		}
	}
	stop := make(chan struct{})
	close(stop)
	_, ok := q.take(stop)
	require.False(t, ok, "the writer gets nothing to write")
	for q.pending() {
		p := make([]byte, 5000)
		got = append(got, p[:q.pullInto([][]byte{p})]...)
	}
	require.True(t, bytes.Equal(want, got), "%d bytes pushed, %d pulled", len(want), len(got))
	require.Zero(t, q.pullInto([][]byte{make([]byte, 10)}))
	require.LessOrEqual(t, cap(q.buf), 4<<20, "the buffer grew without bound")
}
