// Failrank is meshrun's failing job: after a Barrier, rank 2 exits with
// status 3 at once, without leaving the job, as a crashing process would,
// while the others wait in an Allreduce that needs it. The library must
// make their Allreduce fail with ErrProcFailed, so they exit by themselves
// (status 1) and meshrun exits with 3.
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
		if world.Rank() == 2 {
			fmt.Println("rank 2 crashing")
			os.Exit(3)
		}
		sum := []int64{0}
		return meshmpi.Allreduce(world, []int64{1}, sum, meshmpi.Sum)
	})
	if errors.Is(err, meshmpi.ErrProcFailed) {
		fmt.Fprintln(os.Stderr, "failrank: a peer failed:", err)
		os.Exit(1)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "failrank:", err)
		os.Exit(5)
	}
}
