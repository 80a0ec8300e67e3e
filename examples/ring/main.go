// Ring passes a token around a ring of ranks: the "hello world" of message
// passing.
//
// It shows the smallest complete meshmpi program: meshmpi.Run starts an
// in-process world of n ranks (goroutines joined by memory links), and each
// rank talks to its neighbours with blocking Send and Recv. Rank 0 starts
// a token (an int64) at 0; every rank adds its own rank and passes it on to
// rank+1, and the last rank hands it back to rank 0, which ends the lap.
// After the given number of laps the token must hold
//
//	laps × (0 + 1 + … + n-1) = laps × n(n-1)/2
//
// and rank 0 checks that. A second, shorter pass around the ring then lets
// each rank print its line in rank order: a message is also a way to say
// "your turn".
//
// Run it with
//
//	go run ./examples/ring -n 4 -laps 3
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/meshmpi/meshmpi"
)

const (
	tagToken = 0 // the token going round
	tagTurn  = 1 // "your turn to print"
)

func main() {
	n := flag.Int("n", 4, "number of in-process ranks (a rank launched by meshrun joins its job instead)")
	laps := flag.Int("laps", 3, "times the token goes round the ring")
	flag.Parse()
	if *laps < 0 {
		fmt.Fprintln(os.Stderr, "ring: -laps must not be negative")
		os.Exit(2)
	}

	if err := meshmpi.Main(*n, func(world *meshmpi.Comm) error { return ring(world, *laps) }); err != nil {
		fmt.Fprintln(os.Stderr, "ring:", err)
		os.Exit(1)
	}
}

// ring is what every rank runs.
func ring(world *meshmpi.Comm, laps int) error {
	rank, size := world.Rank(), world.Size()
	next, prev := (rank+1)%size, (rank+size-1)%size
	token := []int64{0} // messages are slices of numbers

	for lap := 1; lap <= laps; lap++ {
		if rank == 0 { // rank 0 starts each lap, then waits for the token's return
			if err := meshmpi.Send(world, token, next, tagToken); err != nil {
				return err
			}
			if _, err := meshmpi.Recv(world, token, prev, tagToken); err != nil {
				return err
			}
			token[0] += int64(rank) // adds 0, like everyone adds its rank
			fmt.Printf("lap %d: token = %d\n", lap, token[0])
			continue
		}
		if _, err := meshmpi.Recv(world, token, prev, tagToken); err != nil {
			return err
		}
		token[0] += int64(rank)
		if err := meshmpi.Send(world, token, next, tagToken); err != nil {
			return err
		}
	}

	if rank == 0 {
		want := int64(laps) * int64(size) * int64(size-1) / 2
		fmt.Printf("final token = %d (want %d)\n", token[0], want)
		if token[0] != want {
			return fmt.Errorf("token is %d, want %d", token[0], want)
		}
	}

	// Print in rank order: wait for the previous rank's turn to end.
	turn := []int64{0}
	if rank > 0 {
		if _, err := meshmpi.Recv(world, turn, prev, tagTurn); err != nil {
			return err
		}
	}
	fmt.Printf("rank %d of %d: done\n", rank, size)
	if rank < size-1 {
		return meshmpi.Send(world, turn, next, tagTurn)
	}
	return nil
}
