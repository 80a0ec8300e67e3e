// Detectrank measures failure detection. Every rank links to every other
// (one message each way per pair), and prints that it is ready, with its
// process id; then the victim (-victim, default 3) waits to be killed or
// stopped, while every other rank waits to receive from it. When that
// receive fails with ErrProcFailed (the rank's endpoint learned of the
// failure: the server's notice or its own link) the rank prints the time
// in Unix nanoseconds, so a test that noted when it killed or stopped the
// victim gets each survivor's detection latency. The survivors then end
// (with -hold F, once file F exists); their Finalize may report the
// failure, which is no error here. A victim that is only stopped, and
// resumes after the job declared it failed, finds itself evicted: its
// receive fails, and it ends with the error that says so.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/meshmpi/meshmpi"
)

func main() {
	victim := flag.Int("victim", 3, "the rank the test kills or stops")
	hold := flag.String("hold", "", "survivors end only once this file exists")
	flag.Parse()
	done := false
	err := meshmpi.Main(4, func(world *meshmpi.Comm) error {
		rank, size := world.Rank(), world.Size()
		for r := range size {
			if r != rank {
				if err := meshmpi.Send(world, []int64{int64(rank)}, r, 1); err != nil {
					return err
				}
			}
		}
		buf := []int64{0}
		for r := range size {
			if r != rank {
				if _, err := meshmpi.Recv(world, buf, r, 1); err != nil {
					return err
				}
			}
		}
		if err := meshmpi.Barrier(world); err != nil {
			return err
		}
		fmt.Printf("rank %d pid %d ready\n", rank, os.Getpid())
		if rank == *victim {
			_, err := meshmpi.Recv(world, buf, meshmpi.AnySource, 99) // until killed
			return err
		}
		_, err := meshmpi.Recv(world, buf, *victim, 99)
		at := time.Now().UnixNano()
		if !errors.Is(err, meshmpi.ErrProcFailed) {
			return fmt.Errorf("receive from rank %d: want ErrProcFailed, got %v", *victim, err)
		}
		fmt.Printf("rank %d detected rank %d at %d: %v\n", rank, *victim, at, err)
		for *hold != "" {
			if _, err := os.Stat(*hold); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		done = true
		return nil
	})
	if err != nil && done && errors.Is(err, meshmpi.ErrProcFailed) {
		err = nil // Finalize saw the failure
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "detectrank:", err)
		os.Exit(1)
	}
}
