//go:build !js && !wasip1

package peer

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The two-process benchmarks: the remote rank is this test binary run
// again (TestWebRTCChild), so the two ends share no scheduler or heap,
// as two native ranks on one host do. Signaling runs over two pipes.

const childEnv = "MESHMPI_PEER_WEBRTC_CHILD" // "echo" or the sink's message size

// pipeSignaler carries signals as frames (kind length, kind, payload
// length, payload) over a pipe each way.
type pipeSignaler struct {
	w    *bufio.Writer
	wc   io.Closer
	msgs chan sigMsg
}

func newPipeSignaler(r io.Reader, w io.WriteCloser) *pipeSignaler {
	s := &pipeSignaler{w: bufio.NewWriter(w), wc: w, msgs: make(chan sigMsg, 64)}
	go func() {
		br := bufio.NewReader(r)
		for {
			var hdr [5]byte
			if _, err := io.ReadFull(br, hdr[:1]); err != nil {
				s.msgs <- sigMsg{err: err}
				return
			}
			kind := make([]byte, hdr[0])
			if _, err := io.ReadFull(br, kind); err != nil {
				s.msgs <- sigMsg{err: err}
				return
			}
			if _, err := io.ReadFull(br, hdr[1:]); err != nil {
				s.msgs <- sigMsg{err: err}
				return
			}
			payload := make([]byte, binary.BigEndian.Uint32(hdr[1:]))
			if _, err := io.ReadFull(br, payload); err != nil {
				s.msgs <- sigMsg{err: err}
				return
			}
			s.msgs <- sigMsg{kind: string(kind), payload: payload}
		}
	}()
	return s
}

func (s *pipeSignaler) Send(_ context.Context, kind string, payload []byte) error {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(payload)))
	s.w.WriteByte(byte(len(kind)))
	s.w.WriteString(kind)
	s.w.Write(n[:])
	s.w.Write(payload)
	return s.w.Flush()
}

func (s *pipeSignaler) Recv(ctx context.Context) (string, []byte, error) {
	select {
	case m := <-s.msgs:
		return m.kind, m.payload, m.err
	case <-ctx.Done():
		return "", nil, ctx.Err()
	}
}

// TestWebRTCChild is the remote end of the two-process benchmarks; it
// skips unless a benchmark started it. It accepts one link (whose path
// the offer picks), then echoes 8 B messages or acknowledges each
// message of its size with 1 byte, until the benchmark closes the link.
func TestWebRTCChild(t *testing.T) {
	mode := os.Getenv(childEnv)
	if mode == "" {
		t.Skip("the two-process benchmarks' remote end")
	}
	sig := newPipeSignaler(os.NewFile(3, "signals-in"), os.NewFile(4, "signals-out"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l, err := AcceptWebRTC(ctx, loopbackConfig, sig)
	require.NoError(t, err)
	ep, err := NewEndpoint(Config{Rank: 1, Size: 2})
	require.NoError(t, err)
	defer ep.Close(nil)
	require.NoError(t, ep.Attach(0, l))
	size := 8
	if mode != "echo" {
		size, err = strconv.Atoi(mode)
		require.NoError(t, err)
	}
	buf, ack := make([]byte, size), []byte{1}
	r, s := ep.GetOp(), ep.GetOp()
	for {
		if ep.StartRecv(r, 0, 0, 1, buf) != nil || wait(r).Err != nil {
			return // the benchmark closed the link
		}
		reply := buf[:8]
		if mode != "echo" {
			reply = ack
		}
		if ep.StartSend(s, Standard, 0, 0, 2, reply) != nil || wait(s).Err != nil {
			return
		}
	}
}

// procPair starts the child in mode and dials it with cfg; the cleanup
// closes the link and waits for the child.
func procPair(b *testing.B, cfg WebRTCConfig, mode string) *Endpoint {
	b.Helper()
	toChild, childIn, err := os.Pipe()
	require.NoError(b, err)
	childOut, fromChild, err := os.Pipe()
	require.NoError(b, err)
	cmd := exec.Command(os.Args[0], "-test.run=^TestWebRTCChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+mode)
	cmd.ExtraFiles = []*os.File{toChild, fromChild}
	cmd.Stderr = os.Stderr
	require.NoError(b, cmd.Start())
	toChild.Close()
	fromChild.Close()
	sig := newPipeSignaler(childOut, childIn)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l, err := DialWebRTC(ctx, cfg, sig)
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		b.Fatal(err)
	}
	ep, err := NewEndpoint(Config{Rank: 0, Size: 2})
	require.NoError(b, err)
	require.NoError(b, ep.Attach(1, l))
	b.Cleanup(func() {
		ep.Close(nil)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			var exit *exec.ExitError
			if err != nil && !errors.As(err, &exit) {
				b.Error(err)
			}
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			b.Error("child did not end")
		}
		childIn.Close()
		childOut.Close()
	})
	return ep
}

// BenchmarkWebRTCTwoProcs compares pion's path and the native one between
// two processes on loopback: the 8 B round trip and n-byte messages each
// acknowledged by 1 byte. With -count the paths alternate.
func BenchmarkWebRTCTwoProcs(b *testing.B) {
	for _, p := range bothPaths {
		b.Run(p.name+"/pingpong-8B", func(b *testing.B) {
			a := procPair(b, p.cfg, "echo")
			msg := make([]byte, 8)
			s, r := a.GetOp(), a.GetOp()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				_ = a.StartRecv(r, 1, 0, 2, msg)
				_ = a.StartSend(s, Standard, 1, 0, 1, msg)
				if err := wait(s).Err; err != nil {
					b.Fatal(err)
				}
				if err := wait(r).Err; err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, n := range []int{64 << 10, 1 << 20} {
			b.Run(fmt.Sprintf("%s/bandwidth-%dKiB", p.name, n>>10), func(b *testing.B) {
				a := procPair(b, p.cfg, strconv.Itoa(n))
				msg, ack := pattern(n, 0), make([]byte, 1)
				s, r := a.GetOp(), a.GetOp()
				b.SetBytes(int64(n))
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					_ = a.StartRecv(r, 1, 0, 2, ack)
					_ = a.StartSend(s, Standard, 1, 0, 1, msg)
					if err := wait(s).Err; err != nil {
						b.Fatal(err)
					}
					if err := wait(r).Err; err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
