// Rank is the guest program of the WASI host's tests: one rank of a
// mixed job. -mode picks what it does:
//
//	suite  ranksuite.Suite (point-to-point and collectives, checked), then Finalize
//	trap   a barrier, then an out-of-bounds store: the runtime traps
//	peerfail  a barrier, then a receive from rank 0 that must fail with ErrProcFailed
//	echo   ranksuite.Echo for rank 1, the benchmarks' driver
//	exchange  sends rank 1-r messages of 1 B, 64 KiB, 1 MiB and 8 MiB+1
//	       while receiving its messages of those sizes (a job of 2), each
//	       checked byte for byte and by its CRC-32 against what the other
//	       rank made
//	exit   exits with status 3 without joining a job
//	sleep  sleeps for an hour without joining a job (until its host stops it)
//	spin   says so, then computes for ever without calling its host
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"hash/crc32"
	"os"
	"time"
	"unsafe"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/internal/ranksuite"
)

func main() {
	mode := flag.String("mode", "suite", "suite, trap, echo, peerfail, exchange, exit, exitjoined, sleep or spin")
	flag.Parse()
	if *mode == "exit" {
		fmt.Println("exiting with 3")
		os.Exit(3)
	}
	if *mode == "sleep" {
		time.Sleep(time.Hour)
		fmt.Println("slept an hour")
		os.Exit(0)
	}
	if *mode == "spin" {
		fmt.Println("spinning")
		x := uint64(1)
		for x != 0 { // never 0: x stays odd
			x = x*3 + 2
		}
		fmt.Println("spun", x)
		os.Exit(0)
	}
	world, err := meshmpi.Init()
	if err != nil {
		fail(err)
	}
	switch *mode {
	case "suite":
		err = ranksuite.Suite(world)
	case "trap":
		if err = meshmpi.Barrier(world); err == nil {
			trap()
		}
	case "echo":
		fmt.Printf("rank %d echoes rank 1\n", world.Rank())
		err = ranksuite.Echo(world, 1)
	case "exitjoined":
		// a program that leaves on an error: no Finalize, no Close
		fmt.Println("exiting with 3 in the job")
		os.Exit(3)
	case "peerfail":
		err = ranksuite.PeerFails(world, 0)
	case "exchange":
		err = exchange(world)
	default:
		err = fmt.Errorf("unknown mode %q", *mode)
	}
	if err != nil {
		fail(err)
	}
	// after a peer failed, the final barrier fails too
	if err := meshmpi.Finalize(); err != nil && (*mode == "suite" || !errors.Is(err, meshmpi.ErrProcFailed)) {
		fail(err)
	}
	fmt.Printf("rank %d done\n", world.Rank())
}

// trap stores far outside linear memory: WebAssembly traps, with no Go
// panic or exit on the way.
func trap() {
	fmt.Println("trapping")
	p := (*byte)(unsafe.Pointer(uintptr(0xFFFF0000)))
	*p = 1
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "rank:", err)
	os.Exit(1)
}

// exchangeSizes are the messages of -mode exchange: eager, one frame
// of the largest eager, one whole largest frame of the guest/host
// stream (wasm.MaxFrame's payload), and many of them with a byte over.
var exchangeSizes = []int{1, 64 << 10, 1 << 20, 8<<20 + 1}

// exchange sends the other rank of a job of two each message of
// exchangeSizes while it receives that rank's, both directions at once,
// and checks every message received against the one the other rank
// made.
func exchange(world *meshmpi.Comm) error {
	me, other := world.Rank(), 1-world.Rank()
	for _, n := range exchangeSizes {
		out, in := pattern(me, n), make([]byte, n)
		send, err := meshmpi.Isend(world, out, other, n%1000)
		if err != nil {
			return err
		}
		st, err := meshmpi.Recv(world, in, other, n%1000)
		if err != nil {
			return fmt.Errorf("receiving %d bytes: %w", n, err)
		}
		if _, err := send.Wait(context.Background()); err != nil {
			return fmt.Errorf("sending %d bytes: %w", n, err)
		}
		want := pattern(other, n)
		if st.Bytes != n || crc32.ChecksumIEEE(in) != crc32.ChecksumIEEE(want) {
			return fmt.Errorf("received %d of %d bytes with CRC-32 %08x, want %08x", st.Bytes, n, crc32.ChecksumIEEE(in), crc32.ChecksumIEEE(want))
		}
		for i := range in {
			if in[i] != want[i] {
				return fmt.Errorf("%d-byte message differs at byte %d", n, i)
			}
		}
	}
	fmt.Printf("rank %d exchanged %d messages intact\n", me, len(exchangeSizes))
	return nil
}

// pattern is rank's n-byte message: every offset's byte differs from
// its neighbours' and from the other rank's, so a frame out of place
// or a byte lost shows.
func pattern(rank, n int) []byte {
	b := make([]byte, n)
	x := uint32(rank+1)*0x9e3779b9 ^ uint32(n)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}
