// Deadrank is meshrun's deadlocked job: every rank waits for a message
// from its left neighbour that no rank sends. Under --timeout each rank
// must say what it is blocked in and exit with 124.
package main

import (
	"fmt"
	"os"

	"github.com/meshmpi/meshmpi"
)

func main() {
	err := meshmpi.Main(3, func(world *meshmpi.Comm) error {
		left := (world.Rank() + world.Size() - 1) % world.Size()
		_, err := meshmpi.Recv(world, make([]byte, 1), left, 7)
		return err
	})
	fmt.Fprintln(os.Stderr, "deadrank: the deadlock ended:", err)
	os.Exit(1)
}
