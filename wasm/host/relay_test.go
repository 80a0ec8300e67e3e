//go:build !js && !wasip1

package host_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/internal/leaktest"
	"github.com/meshmpi/meshmpi/peer"
	"github.com/meshmpi/meshmpi/signaling"
	"github.com/meshmpi/meshmpi/wasm"
	"github.com/meshmpi/meshmpi/wasm/host"
	"github.com/meshmpi/meshmpi/wasm/internal/hosttest"
)

// TestMalformedGuest: a guest that breaks the protocol, before or after
// joining, gets its stream closed and Serve returns a protocol error; the
// host goes on.
func TestMalformedGuest(t *testing.T) {
	leaktest.Check(t)
	var key [wasm.KeyLen]byte
	key[0], key[wasm.KeyLen-1] = 1, 2
	var wrongKey [wasm.KeyLen]byte
	le := binary.LittleEndian
	for _, tc := range []struct {
		name  string
		join  bool   // send a valid join first (a job of one rank)
		bytes []byte // then these
		msg   string // in the error
		close bool   // the guest closes its end after the bytes
	}{
		{"oversized length", false, le.AppendUint32(nil, wasm.MaxMessage+1), "message length", false},
		{"not a join", false, wasm.AppendConnect(nil, 0), "instead of join", false},
		{"wrong key", false, wasm.AppendJoin(nil, wrongKey), "key", false},
		{"truncated", false, append(le.AppendUint32(nil, 100), byte(wasm.MsgJoin)), "stream ends", true},
		{"unknown type", true, append(le.AppendUint32(nil, 1), 77), "unknown message type", false},
		{"own rank", true, wasm.AppendConnect(nil, 0), "names rank 0", false},
		{"rank out of range", true, wasm.AppendData(nil, 3, make([]byte, 40), nil), "names rank 3", false},
		{"a host's message", true, wasm.AppendWelcome(nil, wasm.Welcome{Rank: 0, Size: 1}), "after joining", false},
		{"oversized after join", true, le.AppendUint32(nil, 1<<30), "message length", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := hosttest.Job(t, 1)
			hostEnd, guestEnd := net.Pipe()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- host.Serve(ctx, hostEnd, host.Config{Job: job, Key: key}) }()
			rd := wasm.NewReader(bufio.NewReader(guestEnd))
			m, err := rd.Next()
			require.NoError(t, err)
			require.Equal(t, wasm.MsgHostHello, m.Type)
			if tc.join {
				_, err = guestEnd.Write(wasm.AppendJoin(nil, key))
				require.NoError(t, err)
				m, err = rd.Next()
				require.NoError(t, err)
				require.Equal(t, wasm.MsgWelcome, m.Type)
			}
			if tc.close {
				_, err = guestEnd.Write(tc.bytes)
				require.NoError(t, err)
				guestEnd.Close()
			} else {
				go guestEnd.Write(tc.bytes) // the host may close before reading all of it
			}
			err = <-done
			require.ErrorIs(t, err, wasm.ErrProtocol)
			require.ErrorContains(t, err, tc.msg)
			if tc.close {
				return
			}
			// the guest's stream is closed
			_, err = io.ReadAll(guestEnd)
			require.NoError(t, err)
			guestEnd.Close()
		})
	}
}

// TestGuestNeverJoins: a program that exits without joining (not a rank,
// or it failed first) ends Serve without an error.
func TestGuestNeverJoins(t *testing.T) {
	leaktest.Check(t)
	hostEnd, guestEnd := net.Pipe()
	done := make(chan error, 1)
	go func() { done <- host.Serve(context.Background(), hostEnd, host.Config{}) }()
	_, err := wasm.NewReader(guestEnd).Next()
	require.NoError(t, err)
	guestEnd.Close()
	require.NoError(t, <-done)
}

// TestGuestVersionMismatch: a guest built for another protocol version
// (an older one reads neither the link-up's frame sizes nor messages as
// long as this host sends) is refused before the host joins anything:
// the refusal names both versions, and Serve returns ErrNotSupported.
func TestGuestVersionMismatch(t *testing.T) {
	leaktest.Check(t)
	var key [wasm.KeyLen]byte
	for _, v := range []uint16{wasm.Version - 1, wasm.Version + 1} {
		hostEnd, guestEnd := net.Pipe()
		done := make(chan error, 1)
		go func() { done <- host.Serve(context.Background(), hostEnd, host.Config{Key: key}) }()
		rd := wasm.NewReader(bufio.NewReader(guestEnd))
		m, err := rd.Next()
		require.NoError(t, err)
		require.Equal(t, wasm.MsgHostHello, m.Type)
		require.EqualValues(t, wasm.Version, m.Version)
		join := wasm.AppendJoin(nil, key)
		binary.LittleEndian.PutUint16(join[5:], v)
		_, err = guestEnd.Write(join)
		require.NoError(t, err)
		m, err = rd.Next()
		require.NoError(t, err)
		require.Equal(t, wasm.MsgRefused, m.Type)
		want := fmt.Sprintf("the host speaks protocol version %d, the guest %d", wasm.Version, v)
		require.Equal(t, want, m.Text)
		err = <-done
		require.ErrorIs(t, err, peer.ErrNotSupported)
		require.ErrorContains(t, err, want)
		guestEnd.Close()
	}
}

// TestEvictedGuestTold: when the job ends under a hosted rank (the
// server's EndJob, which evicts every rank, as a rank declared failed
// is), the host tells its guest it was evicted, with the reason, instead
// of reporting every other rank lost to it: a fault-tolerant guest told
// that would go on as a job of one.
func TestEvictedGuestTold(t *testing.T) {
	leaktest.Check(t)
	srv, err := signaling.ListenLocal(signaling.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	const id = "evicted-guest"
	token, err := srv.Token(id, 2, map[string]string{meshmpi.SettingNetwork: "loopback"}, time.Hour)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), hosttest.JobLimit)
	defer cancel()

	var key [wasm.KeyLen]byte
	hostEnd, guestEnd := net.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- host.Serve(ctx, hostEnd, host.Config{Key: key,
			Job: host.Job{Signal: srv.URL(), ID: id, Token: token, Rank: 0, JoinTimeout: time.Minute}})
	}()
	native := make(chan *meshmpi.Session, 1)
	go func() {
		s, err := meshmpi.Join(ctx, meshmpi.JobSpec{Signal: srv.URL(), Job: id, Token: token, Rank: 1})
		if err != nil {
			t.Errorf("rank 1 joins: %v", err)
		}
		native <- s
	}()
	rd := joinAsGuest(t, guestEnd, key)
	s := <-native
	require.NotNil(t, s)

	require.NoError(t, srv.EndJob(id, "the organizer ended it"))
	for {
		m, err := rd.Next()
		require.NoError(t, err, "the stream ended before the eviction")
		if m.Type == wasm.MsgEvicted {
			require.Contains(t, m.Text, "rank 0 was evicted from the job")
			require.Contains(t, m.Text, "the organizer ended it")
			break
		}
		// a link to rank 1 may come and go first; rank 1's departure
		// must not (it is what the eviction replaces)
		require.False(t, m.Type == wasm.MsgLinkDown && m.Cause == wasm.CauseLeft, "rank %d reported gone before the eviction: %q", m.Rank, m.Text)
	}
	guestEnd.Close()
	require.NoError(t, <-served)
	_ = s.Finalize() // fails: it was evicted too
}

// joinAsGuest plays a guest's part of the handshake on guestEnd, up to
// the welcome, and returns the reader of what the host sends next.
func joinAsGuest(t *testing.T, guestEnd net.Conn, key [wasm.KeyLen]byte) *wasm.Reader {
	t.Helper()
	rd := wasm.NewReader(bufio.NewReader(guestEnd))
	m, err := rd.Next()
	require.NoError(t, err)
	require.Equal(t, wasm.MsgHostHello, m.Type)
	_, err = guestEnd.Write(wasm.AppendJoin(nil, key))
	require.NoError(t, err)
	m, err = rd.Next()
	require.NoError(t, err)
	require.Equal(t, wasm.MsgWelcome, m.Type)
	return rd
}
