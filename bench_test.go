package meshmpi

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// pingPong runs b.N round trips of size bytes between ranks 0 and 1 of an
// in-process world; b's timer covers the round trips only.
func pingPong(b *testing.B, size int, opts ...Option) {
	b.Helper()
	b.ReportAllocs()
	err := Run(2, func(w *Comm) error {
		buf := make([]byte, size)
		other := 1 - w.Rank()
		if _, err := w.allgather(nil); err != nil { // start together
			return err
		}
		if w.Rank() == 0 {
			b.ResetTimer()
		}
		for range b.N {
			if w.Rank() == 0 {
				if err := Send(w, buf, other, 0); err != nil {
					return err
				}
				if _, err := Recv(w, buf, other, 0); err != nil {
					return err
				}
			} else {
				if _, err := Recv(w, buf, other, 0); err != nil {
					return err
				}
				if err := Send(w, buf, other, 0); err != nil {
					return err
				}
			}
		}
		if w.Rank() == 0 {
			b.StopTimer()
		}
		return nil
	}, opts...)
	if err != nil {
		b.Fatal(err)
	}
	// one-way latency and the bandwidth of the bytes moved both ways
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N), "ns/one-way")
	b.SetBytes(int64(2 * size))
}

// BenchmarkPingPong measures memory-link round trips (OSU osu_latency style).
func BenchmarkPingPong(b *testing.B) {
	for _, size := range []int{8, 1 << 20, 16 << 20} {
		b.Run(fmt.Sprintf("%dB", size), func(b *testing.B) { pingPong(b, size) })
	}
}

// BenchmarkPersistentPingPong is the ping-pong with persistent requests: a
// Start+Wait cycle per message, the path that must not allocate.
func BenchmarkPersistentPingPong(b *testing.B) {
	b.ReportAllocs()
	ctx := context.Background()
	err := Run(2, func(w *Comm) error {
		buf := make([]byte, 8)
		other := 1 - w.Rank()
		send, err := SendInit(w, buf, other, 0)
		if err != nil {
			return err
		}
		recv, err := RecvInit(w, buf, other, 0)
		if err != nil {
			return err
		}
		first, second := send, recv
		if w.Rank() == 1 {
			first, second = recv, send
		}
		if _, err := w.allgather(nil); err != nil {
			return err
		}
		if w.Rank() == 0 {
			b.ResetTimer()
		}
		for range b.N {
			for _, r := range []*Request{first, second} {
				if err := r.Start(); err != nil {
					return err
				}
				if _, err := r.Wait(ctx); err != nil {
					return err
				}
			}
		}
		if w.Rank() == 0 {
			b.StopTimer()
		}
		return errors.Join(send.Free(), recv.Free())
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N), "ns/one-way")
}

// BenchmarkSelfSendRecv is an eager send to oneself and its receive: the
// matching engine and framing with no goroutine handoff.
func BenchmarkSelfSendRecv(b *testing.B) {
	b.ReportAllocs()
	err := Run(1, func(w *Comm) error {
		buf := make([]byte, 8)
		b.ResetTimer()
		for range b.N {
			if err := Send(w, buf, 0, 0); err != nil {
				return err
			}
			if _, err := Recv(w, buf, 0, 0); err != nil {
				return err
			}
		}
		b.StopTimer()
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}
