//go:build !js && !wasip1

package host

import (
	"fmt"
	"testing"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/wasm/internal/ranktest"
)

// BenchmarkRelay measures what the host's relay costs: rank 1 (native)
// drives rank 0, a wazero guest or, for comparison, a native rank, over
// the same WebRTC mesh on loopback: 8-byte ping-pong round trips and
// 1 MiB one-way messages. wasi-stockpoll runs the guest with wazero's
// own poll_oneoff, which spins while the guest waits (poll.go).
func BenchmarkRelay(b *testing.B) {
	for _, peer := range []string{"wasi", "wasi-stockpoll", "native"} {
		b.Run(peer, func(b *testing.B) { benchPair(b, peer != "native", peer == "wasi-stockpoll") })
	}
}

func benchPair(b *testing.B, wasi, stockPoll bool) {
	module, err := buildGuest()
	if err != nil {
		b.Fatal(err)
	}
	var p *Program
	if wasi {
		if p, err = compile(b.Context(), module, testDir+"/cache", stockPoll); err != nil {
			b.Fatal(err)
		}
		defer p.Close(b.Context())
	}
	job := testJob(b, 2)
	echoDone := make(chan error, 1)
	go func() {
		j := job
		j.Rank = 0
		if wasi {
			status, err := p.Run(b.Context(), Rank{Job: j, Name: "rank", Args: []string{"-mode", "echo"}})
			if err == nil && status != 0 {
				err = fmt.Errorf("the echo guest exited with status %d", status)
			}
			echoDone <- err
			return
		}
		s, err := meshmpi.Join(b.Context(), meshmpi.JobSpec{Signal: j.Signal, Job: j.ID, Token: j.Token, Rank: 0})
		if err == nil {
			if err = ranktest.Echo(s.World(), 1); err == nil {
				err = s.Finalize()
			}
		}
		echoDone <- err
	}()
	s, err := meshmpi.Join(b.Context(), meshmpi.JobSpec{Signal: job.Signal, Job: job.ID, Token: job.Token, Rank: 1})
	if err != nil {
		b.Fatal(err)
	}
	w := s.World()
	ping, big := make([]byte, 8), make([]byte, ranktest.RendezvousBytes)
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	// connect and warm up
	must(meshmpi.Send(w, ping, 0, ranktest.TagPing))
	_, err = meshmpi.Recv(w, ping, 0, ranktest.TagPing)
	must(err)
	// polls reports the guest's poll_oneoff calls per operation: a guest
	// that spins while it waits makes thousands per message
	polls := func(b *testing.B) func() {
		if p == nil {
			return func() {}
		}
		n := p.poll.calls.Load()
		return func() { b.ReportMetric(float64(p.poll.calls.Load()-n)/float64(b.N), "polls/op") }
	}
	b.Run("pingpong-8B", func(b *testing.B) {
		b.ReportAllocs()
		defer polls(b)()
		for b.Loop() {
			must(meshmpi.Send(w, ping, 0, ranktest.TagPing))
			_, err := meshmpi.Recv(w, ping, 0, ranktest.TagPing)
			must(err)
		}
	})
	b.Run("bandwidth-1MiB", func(b *testing.B) {
		b.SetBytes(int64(len(big)))
		b.ReportAllocs()
		defer polls(b)()
		for b.Loop() {
			must(meshmpi.Send(w, big, 0, ranktest.TagSink))
		}
		must(meshmpi.Send(w, big[:0], 0, ranktest.TagSync))
		_, err := meshmpi.Recv(w, big, 0, ranktest.TagSync)
		must(err)
	})
	must(meshmpi.Send(w, big[:0], 0, ranktest.TagStop))
	must(s.Finalize())
	must(<-echoDone)
}
