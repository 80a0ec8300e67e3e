// Abortrank is meshrun's aborting job: after a Barrier, rank 1 calls
// Abort(5) while the others wait for a message that never comes. Every
// rank must end with status 5, the others saying who aborted, and meshrun
// must exit with 5.
package main

import (
	"fmt"
	"os"

	"github.com/meshmpi/meshmpi"
)

func main() {
	err := meshmpi.Main(3, func(world *meshmpi.Comm) error {
		if err := meshmpi.Barrier(world); err != nil {
			return err
		}
		if world.Rank() == 1 {
			world.Abort(5)
		}
		_, err := meshmpi.Recv(world, make([]byte, 1), meshmpi.AnySource, 0)
		return err
	})
	fmt.Fprintln(os.Stderr, "abortrank: Abort did not end this rank:", err)
	os.Exit(1)
}
