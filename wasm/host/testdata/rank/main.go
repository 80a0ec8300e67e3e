// Rank is the guest program of the WASI host's tests: one rank of a
// mixed job. -mode picks what it does:
//
//	suite  ranksuite.Suite (point-to-point and collectives, checked), then Finalize
//	trap   a barrier, then an out-of-bounds store: the runtime traps
//	peerfail  a barrier, then a receive from rank 0 that must fail with ErrProcFailed
//	echo   ranksuite.Echo for rank 1, the benchmarks' driver
//	exit   exits with status 3 without joining a job
//	sleep  sleeps for an hour without joining a job (until its host stops it)
//	spin   says so, then computes for ever without calling its host
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"time"
	"unsafe"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/internal/ranksuite"
)

func main() {
	mode := flag.String("mode", "suite", "suite, trap, echo, peerfail, exit, sleep or spin")
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
	case "peerfail":
		err = ranksuite.PeerFails(world, 0)
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
