// Pathrank is the rank program of the network-namespace tests (package
// internal/netlab): it joins its job from the environment (MESHMPI_SIGNAL,
// MESHMPI_JOB, MESHMPI_TOKEN, MESHMPI_RANK), checks an Allreduce, has rank
// 0 measure every link (8-byte ping-pong, 1 MiB messages), and prints how
// it reaches each peer:
//
//	link RANK PEER KIND LOCAL REMOTE RTT restarts=N  (Comm.LinkInfo)
//	bench PEER LAT_US MBPS                (rank 0: one-way 8 B latency, 1 MiB bandwidth)
//	pathrank ok RANK
//
// With -transfer N, rank 0 instead sends rank 1 N MiB of numbered data in
// 256 KiB messages, printing "transfer started" after the first and
// "transfer ok" once rank 1 checked every byte, then both print their
// link line; the network tests cut the path meanwhile.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/meshmpi/meshmpi"
)

func main() {
	pings := flag.Int("pings", 200, "8-byte round trips per peer")
	mib := flag.Int("mib", 16, "MiB sent to each peer for the bandwidth figure")
	transfer := flag.Int("transfer", 0, "MiB rank 0 sends rank 1, checked, instead of the measurements")
	flag.Parse()
	var rank int
	var err error
	if *transfer > 0 {
		rank, err = runTransfer(*transfer)
	} else {
		rank, err = run(*pings, *mib)
	}
	if err != nil {
		fmt.Println("pathrank error:", err)
		os.Exit(1)
	}
	fmt.Println("pathrank ok", rank)
}

func run(pings, mib int) (rank int, err error) {
	w, err := meshmpi.Init()
	if err != nil {
		return -1, err
	}
	n, me := w.Size(), w.Rank()
	in, out := []int64{int64(me + 1)}, []int64{0}
	if err := meshmpi.Allreduce(w, in, out, meshmpi.Sum); err != nil {
		return me, err
	}
	if want := int64(n * (n + 1) / 2); out[0] != want {
		return me, fmt.Errorf("allreduce: %d, want %d", out[0], want)
	}
	small := make([]byte, 8)
	big := make([]byte, 1<<20)
	for peer := 1; peer < n; peer++ {
		switch me {
		case 0:
			lat, err := pingpong(w, peer, small, pings)
			if err != nil {
				return me, err
			}
			bw, err := stream(w, peer, big, mib)
			if err != nil {
				return me, err
			}
			fmt.Printf("bench %d %.1f %.1f\n", peer, float64(lat)/float64(time.Microsecond), bw)
		case peer:
			if err := echo(w, small, pings); err != nil {
				return me, err
			}
			if err := sink(w, big, mib); err != nil {
				return me, err
			}
		}
	}
	if err := meshmpi.Barrier(w); err != nil {
		return me, err
	}
	if err := printLinks(w); err != nil {
		return me, err
	}
	return me, meshmpi.Finalize()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// printLinks prints a "link" line for each of w's other ranks.
func printLinks(w *meshmpi.Comm) error {
	for peer := range w.Size() {
		if peer == w.Rank() {
			continue
		}
		li, err := w.LinkInfo(peer)
		if err != nil {
			return err
		}
		fmt.Printf("link %d %d %s %s %s %v restarts=%d\n", w.Rank(), peer, li.Link, orDash(li.Local), orDash(li.Remote), li.RTT, li.Restarts)
	}
	return nil
}

// pingpong returns the one-way time of an 8-byte message to peer and back,
// the median half round trip of rounds after a warm-up.
func pingpong(w *meshmpi.Comm, peer int, b []byte, rounds int) (time.Duration, error) {
	times := make([]time.Duration, 0, rounds)
	for i := range rounds + 20 {
		t0 := time.Now()
		if err := meshmpi.Send(w, b, peer, 1); err != nil {
			return 0, err
		}
		if _, err := meshmpi.Recv(w, b, peer, 1); err != nil {
			return 0, err
		}
		if i >= 20 {
			times = append(times, time.Since(t0)/2)
		}
	}
	for i := 1; i < len(times); i++ { // insertion sort: a few hundred values
		for j := i; j > 0 && times[j] < times[j-1]; j-- {
			times[j], times[j-1] = times[j-1], times[j]
		}
	}
	return times[len(times)/2], nil
}

func echo(w *meshmpi.Comm, b []byte, rounds int) error {
	for range rounds + 20 {
		if _, err := meshmpi.Recv(w, b, 0, 1); err != nil {
			return err
		}
		if err := meshmpi.Send(w, b, 0, 1); err != nil {
			return err
		}
	}
	return nil
}

// stream sends mib 1 MiB messages to peer and waits for its
// acknowledgement: MB/s.
func stream(w *meshmpi.Comm, peer int, b []byte, mib int) (float64, error) {
	t0 := time.Now()
	for range mib {
		if err := meshmpi.Send(w, b, peer, 2); err != nil {
			return 0, err
		}
	}
	if _, err := meshmpi.Recv(w, b[:1], peer, 3); err != nil {
		return 0, err
	}
	return float64(mib<<20) / time.Since(t0).Seconds() / 1e6, nil
}

func sink(w *meshmpi.Comm, b []byte, mib int) error {
	for range mib {
		if _, err := meshmpi.Recv(w, b, 0, 2); err != nil {
			return err
		}
	}
	return meshmpi.Send(w, b[:1], 0, 3)
}

// runTransfer sends mib MiB of numbered 8-byte words from rank 0 to rank 1
// and checks them there.
func runTransfer(mib int) (int, error) {
	w, err := meshmpi.Init()
	if err != nil {
		return -1, err
	}
	me := w.Rank()
	const words = 32 << 10 // 256 KiB per message
	buf := make([]uint64, words)
	for m := range mib * 4 {
		switch me {
		case 0:
			for i := range buf {
				buf[i] = uint64(m*words + i)
			}
			if err := meshmpi.Send(w, buf, 1, 4); err != nil {
				return me, fmt.Errorf("transfer: message %d: %w", m, err)
			}
		case 1:
			if _, err := meshmpi.Recv(w, buf, 0, 4); err != nil {
				return me, fmt.Errorf("transfer: message %d: %w", m, err)
			}
			for i, v := range buf {
				if v != uint64(m*words+i) {
					return me, fmt.Errorf("transfer: message %d word %d is %d", m, i, v)
				}
			}
		}
		if m == 0 {
			fmt.Println("transfer started")
		}
	}
	if err := meshmpi.Barrier(w); err != nil {
		return me, err
	}
	fmt.Println("transfer ok")
	if err := printLinks(w); err != nil {
		return me, err
	}
	return me, meshmpi.Finalize()
}
