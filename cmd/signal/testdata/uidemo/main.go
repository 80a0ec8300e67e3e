// Uidemo is the program of the browser UI's test (ui_browser_test.go):
// every rank prints (so the dashboard has console lines from each), and
// runs rounds of collectives (Bcast, Allreduce, Barrier) and
// point-to-point exchanges with its ring neighbours (Sendrecv), so the
// timeline has operations of both kinds on every rank. Rank 0 checks the
// sums and prints "ok". With -fail R, rank R quits (exit status 3, without
// leaving the job) halfway, for the dashboard's errors and departures.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/meshmpi/meshmpi"
)

func main() {
	n := flag.Int("n", 4, "number of in-process ranks (a rank of a job joins it instead)")
	rounds := flag.Int("rounds", 12, "rounds of collectives and ring exchanges")
	pause := flag.Duration("pause", 40*time.Millisecond, "time each rank spends between rounds (work, as the dashboard sees it)")
	fail := flag.Int("fail", -1, "this rank quits halfway (exit status 3)")
	flag.Parse()
	if *rounds < 1 || *pause < 0 {
		fmt.Fprintln(os.Stderr, "uidemo: -rounds must be positive and -pause not negative")
		os.Exit(2)
	}
	if err := meshmpi.Main(*n, func(world *meshmpi.Comm) error { return demo(world, *rounds, *pause, *fail) }); err != nil {
		fmt.Fprintln(os.Stderr, "uidemo:", err)
		os.Exit(1)
	}
}

func demo(world *meshmpi.Comm, rounds int, pause time.Duration, fail int) error {
	rank, size := world.Rank(), world.Size()
	next, prev := (rank+1)%size, (rank+size-1)%size
	fmt.Printf("rank %d of %d: hello\n", rank, size)
	if fail >= 0 {
		fmt.Fprintf(os.Stderr, "rank %d: rank %d will quit halfway\n", rank, fail)
	}
	cfg := []int64{int64(rounds)}
	if err := meshmpi.Bcast(world, cfg, 0); err != nil {
		return err
	}
	for r := 1; r <= int(cfg[0]); r++ {
		time.Sleep(pause)
		if rank == fail && r == (int(cfg[0])+1)/2 {
			fmt.Fprintf(os.Stderr, "rank %d: quitting in round %d on purpose\n", rank, r)
			os.Exit(3)
		}
		send, sum := []float64{float64(rank * r), 1}, []float64{0, 0}
		if err := meshmpi.Allreduce(world, send, sum, meshmpi.Sum); err != nil {
			return err
		}
		if want := float64(r * size * (size - 1) / 2); sum[0] != want || sum[1] != float64(size) {
			return fmt.Errorf("round %d: allreduce gave %v, want [%g %d]", r, sum, want, size)
		}
		got := []int64{0}
		if _, err := meshmpi.Sendrecv(world, []int64{int64(rank)}, next, r, got, prev, r); err != nil {
			return err
		}
		if got[0] != int64(prev) {
			return fmt.Errorf("round %d: rank %d sent %d", r, prev, got[0])
		}
		if r%4 == 0 || r == int(cfg[0]) {
			fmt.Printf("rank %d: round %d of %d, allreduce sum %g\n", rank, r, cfg[0], sum[0])
		}
	}
	if err := meshmpi.Barrier(world); err != nil {
		return err
	}
	fmt.Printf("rank %d: done\n", rank)
	if rank == 0 {
		fmt.Println("ok")
	}
	return nil
}
