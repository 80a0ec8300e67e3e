// Clusterrank is a rank of cmd/signal's cluster test: it joins its job
// from the environment (meshrun's variables, MESHMPI_SIGNAL a list of the
// cluster's servers), links to every other rank (an Alltoall), says
// "linked", then reduces until the file named by its first argument
// exists (the test creates it once it killed a server) and a few rounds
// more, checks every result, says "done" and finalizes.
package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/meshmpi/meshmpi"
)

func main() {
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "clusterrank:", err)
		os.Exit(1)
	}
}

func run(goFile string) error {
	world, err := meshmpi.Init()
	if err != nil {
		return err
	}
	rank, n := world.Rank(), world.Size()
	send, recv := make([]int64, n), make([]int64, n)
	for i := range send {
		send[i] = int64(rank*n + i)
	}
	if err := meshmpi.Alltoall(world, send, recv); err != nil {
		return err
	}
	for i, v := range recv {
		if v != int64(i*n+rank) {
			return fmt.Errorf("alltoall: recv[%d] = %d, want %d", i, v, i*n+rank)
		}
	}
	fmt.Println("linked")
	deadline := time.Now().Add(5 * time.Minute)
	after := -1
	for round := 0; after < 0 || round < after; round++ {
		one, sum := []int64{int64(rank + round)}, []int64{0}
		if err := meshmpi.Allreduce(world, one, sum, meshmpi.Sum); err != nil {
			return fmt.Errorf("round %d: %w", round, err)
		}
		if want := int64(n*(n-1)/2 + n*round); sum[0] != want {
			return fmt.Errorf("round %d: sum %d, want %d", round, sum[0], want)
		}
		// every rank decides together whether the file is there
		there := []int64{0}
		if _, err := os.Stat(goFile); err == nil {
			there[0] = 1
		}
		all := []int64{0}
		if err := meshmpi.Allreduce(world, there, all, meshmpi.Max); err != nil {
			return err
		}
		if all[0] == 1 && after < 0 {
			after = round + 20
		}
		if time.Now().After(deadline) {
			return errors.New("the test never said go")
		}
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Println("done")
	return meshmpi.Finalize()
}
