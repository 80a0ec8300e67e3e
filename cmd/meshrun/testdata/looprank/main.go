// Looprank is meshrun's job that never ends by itself: after a Barrier
// each rank prints its process id and then runs Allreduces until one
// fails, as a long computation would. A test stops or kills one rank; the
// library must make the others' Allreduce fail with ErrProcFailed, so they
// exit by themselves with status 1.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/meshmpi/meshmpi"
)

func main() {
	err := meshmpi.Main(4, func(world *meshmpi.Comm) error {
		if err := meshmpi.Barrier(world); err != nil {
			return err
		}
		fmt.Printf("rank %d pid %d running\n", world.Rank(), os.Getpid())
		sum := []int64{0}
		for {
			if err := meshmpi.Allreduce(world, []int64{1}, sum, meshmpi.Sum); err != nil {
				return err
			}
		}
	})
	if errors.Is(err, meshmpi.ErrProcFailed) {
		fmt.Fprintln(os.Stderr, "looprank: a peer failed:", err)
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, "looprank:", err)
	os.Exit(5)
}
