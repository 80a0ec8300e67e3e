package rankcheck

import (
	"fmt"
	"time"

	"github.com/meshmpi/meshmpi"
)

// Figures are what Bench measures between ranks 0 and 1.
type Figures struct {
	RoundTrip time.Duration // median-free mean of an 8-byte ping-pong round trip
	MBps      float64       // one-way bandwidth with 1 MiB messages, in 10⁶ bytes per second
}

// String is the line the browser bench rank prints and the test parses.
func (f Figures) String() string {
	return fmt.Sprintf("bench roundtrip_us=%.1f bandwidth_MBps=%.2f", float64(f.RoundTrip.Nanoseconds())/1e3, f.MBps)
}

// Bench runs, between ranks 0 and 1 of world, iters round trips of an
// 8-byte message (after a warm-up that opens the link) and then sends
// msgs messages of 1 MiB from 0 to 1, ended by a 1-element
// acknowledgement. Rank 0 returns the figures; rank 1 returns zero.
func Bench(world *meshmpi.Comm, iters, msgs int) (Figures, error) {
	rank := world.Rank()
	if rank > 1 {
		return Figures{}, nil
	}
	peer := 1 - rank
	ping := make([]byte, 8)
	pong := func() error {
		if rank == 0 {
			if err := meshmpi.Send(world, ping, peer, 1); err != nil {
				return err
			}
			_, err := meshmpi.Recv(world, ping, peer, 1)
			return err
		}
		if _, err := meshmpi.Recv(world, ping, peer, 1); err != nil {
			return err
		}
		return meshmpi.Send(world, ping, peer, 1)
	}
	for range 20 {
		if err := pong(); err != nil {
			return Figures{}, err
		}
	}
	t0 := time.Now()
	for range iters {
		if err := pong(); err != nil {
			return Figures{}, err
		}
	}
	var f Figures
	f.RoundTrip = time.Since(t0) / time.Duration(iters)

	big := make([]byte, 1<<20)
	ack := make([]byte, 1)
	t0 = time.Now()
	for range msgs {
		var err error
		if rank == 0 {
			err = meshmpi.Send(world, big, peer, 2)
		} else {
			_, err = meshmpi.Recv(world, big, peer, 2)
		}
		if err != nil {
			return Figures{}, err
		}
	}
	if rank == 1 {
		return Figures{}, meshmpi.Send(world, ack, 0, 3)
	}
	if _, err := meshmpi.Recv(world, ack, peer, 3); err != nil {
		return Figures{}, err
	}
	f.MBps = float64(msgs) * (1 << 20) / time.Since(t0).Seconds() / 1e6
	return f, nil
}
