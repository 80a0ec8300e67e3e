package meshmpi

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// timeLoop is one rank's part of a benchmark on the ranks of w: they
// start together at a barrier, each runs step b.N times, and rank 0 times
// from that barrier to one after the loop (amortized over b.N), so the
// time covers every rank's work.
func timeLoop(b *testing.B, w *Comm, step func() error) error {
	if err := Barrier(w); err != nil {
		return err
	}
	if w.Rank() == 0 {
		b.ResetTimer()
	}
	for range b.N {
		if err := step(); err != nil {
			return err
		}
	}
	err := Barrier(w)
	if w.Rank() == 0 {
		b.StopTimer()
	}
	return err
}

// roundTrip is one round trip between ranks 0 and 1 as a timeLoop step:
// rank 0 sends then receives, rank 1 receives then sends.
func roundTrip(w *Comm, send, recv func() error) func() error {
	first, second := send, recv
	if w.Rank() == 1 {
		first, second = recv, send
	}
	return func() error {
		if err := first(); err != nil {
			return err
		}
		return second()
	}
}

// startWait is one Start+Wait of persistent request r as a timeLoop step.
func startWait(r *Request) func() error {
	return func() error {
		if err := r.Start(); err != nil {
			return err
		}
		_, err := r.Wait(context.Background())
		return err
	}
}

// pingPong runs b.N round trips of size bytes between ranks 0 and 1 of an
// in-process world; b's timer covers the round trips only.
func pingPong(b *testing.B, size int, opts ...Option) {
	b.Helper()
	b.ReportAllocs()
	err := Run(2, func(w *Comm) error {
		buf := make([]byte, size)
		other := 1 - w.Rank()
		send := func() error { return Send(w, buf, other, 0) }
		recv := func() error {
			_, err := Recv(w, buf, other, 0)
			return err
		}
		return timeLoop(b, w, roundTrip(w, send, recv))
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
		err = timeLoop(b, w, roundTrip(w, startWait(send), startWait(recv)))
		return errors.Join(err, send.Free(), recv.Free())
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
