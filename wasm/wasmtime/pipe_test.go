package wasmtime

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRing drives a small ring through wrap-arounds against a naive
// reference: a slice that grows at the back and shrinks at the front.
func TestRing(t *testing.T) {
	for _, tc := range []struct {
		name   string
		size   int
		writes []int // bytes offered per step; a negative n reads -n
	}{
		{"fill and drain", 8, []int{8, -8, 8, -8}},
		{"wrap", 8, []int{5, -3, 6, -4, 7, -9}},
		{"overfull", 4, []int{10, -1, 3, -10}},
		{"read empty", 4, []int{-3, 2, -3}},
		{"odd steps", 7, []int{3, 3, -2, 3, -5, 6, -1, -1, -7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := ring{buf: make([]byte, tc.size)}
			var ref []byte
			next := byte(0)
			for i, n := range tc.writes {
				if n >= 0 {
					b := make([]byte, n)
					for j := range b {
						b[j] = next + byte(j)
					}
					got := q.write(b)
					want := min(n, tc.size-len(ref))
					require.Equal(t, want, got, "step %d: write", i)
					ref = append(ref, b[:want]...)
					next += byte(want)
					continue
				}
				b := make([]byte, -n)
				got := q.read(b)
				want := min(-n, len(ref))
				require.Equal(t, want, got, "step %d: read", i)
				require.True(t, bytes.Equal(ref[:want], b[:got]), "step %d: bytes %v, want %v", i, b[:got], ref[:want])
				ref = ref[want:]
			}
			require.Equal(t, len(ref), q.n)
		})
	}
}

// TestPipeEnds: what each end sees as the other writes and closes.
func TestPipeEnds(t *testing.T) {
	t.Run("guest to host, then the guest closes", func(t *testing.T) {
		p := newPipe(16)
		h := hostEnd{p}
		require.Equal(t, int32(16), p.guestWrite(bytes.Repeat([]byte{1}, 20)))
		require.Equal(t, int32(0), p.guestWrite([]byte{2}), "full: nothing fits")
		p.closeGuest()
		got, err := io.ReadAll(h)
		require.NoError(t, err, "the host reads what was written, then EOF")
		require.Equal(t, bytes.Repeat([]byte{1}, 16), got)
		require.Equal(t, int32(-1), p.guestWrite([]byte{3}))
		_, err = h.Write([]byte{4})
		require.ErrorIs(t, err, io.ErrClosedPipe)
	})
	t.Run("host to guest, then the host closes", func(t *testing.T) {
		p := newPipe(16)
		h := hostEnd{p}
		buf := make([]byte, 8)
		require.Equal(t, int32(0), p.guestRead(buf), "nothing yet")
		n, err := h.Write([]byte("refused"))
		require.NoError(t, err)
		require.Equal(t, 7, n)
		require.NoError(t, h.Close())
		require.Equal(t, int32(7), p.guestRead(buf), "what the host wrote before closing is read first")
		require.Equal(t, "refused", string(buf[:7]))
		require.Equal(t, int32(-1), p.guestRead(buf))
		require.Equal(t, int32(-1), p.guestWrite(buf))
		_, err = h.Read(buf)
		require.True(t, errors.Is(err, net.ErrClosed))
	})
	t.Run("a blocked host write completes as the guest reads", func(t *testing.T) {
		p := newPipe(4)
		h := hostEnd{p}
		msg := []byte("a message longer than the ring")
		done := make(chan error, 1)
		go func() {
			_, err := h.Write(msg)
			done <- err
		}()
		var got []byte
		buf := make([]byte, 3)
		for len(got) < len(msg) {
			n := p.guestRead(buf)
			require.GreaterOrEqual(t, n, int32(0))
			got = append(got, buf[:n]...)
		}
		require.NoError(t, <-done)
		require.Equal(t, msg, got)
	})
	t.Run("a stopped pipe ends a blocked host read", func(t *testing.T) {
		p := newPipe(4)
		h := hostEnd{p}
		done := make(chan error, 1)
		go func() {
			_, err := h.Read(make([]byte, 4))
			done <- err
		}()
		p.stop()
		require.ErrorIs(t, <-done, io.EOF)
		require.True(t, p.stopped.Load())
	})
}
