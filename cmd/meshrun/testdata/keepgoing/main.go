// Keepgoing is meshrun's job for --keep-going: once rank 0 has sent it a
// message, rank 2 exits with status 3 at once, without Finalize, as a
// crashing process would. The others learn of it (a receive from rank 2 fails with
// ErrProcFailed), then finish their work among themselves — rank 0 sends
// each survivor a number and gets it back doubled — and each prints that
// it survived. Their Finalize may report the failure (a world barrier
// with a member gone): once their work is done, that is no failure of
// theirs, and they exit 0.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/meshmpi/meshmpi"
)

const victim = 2

func main() {
	done := false
	err := meshmpi.Main(4, func(world *meshmpi.Comm) error {
		rank := world.Rank()
		buf := []int64{0}
		switch rank {
		case victim: // crashes once rank 0 has talked to it
			if _, err := meshmpi.Recv(world, buf, 0, 0); err != nil {
				return err
			}
			fmt.Println("rank 2 crashing")
			os.Exit(3)
		case 0:
			if err := meshmpi.Send(world, buf, victim, 0); err != nil {
				return err
			}
		}
		if _, err := meshmpi.Recv(world, buf, victim, 1); !errors.Is(err, meshmpi.ErrProcFailed) {
			return fmt.Errorf("receive from rank %d: want ErrProcFailed, got %v", victim, err)
		}
		if rank == 0 {
			for _, r := range []int{1, 3} {
				if err := meshmpi.Send(world, []int64{int64(r)}, r, 2); err != nil {
					return err
				}
				if _, err := meshmpi.Recv(world, buf, r, 3); err != nil {
					return err
				}
				if buf[0] != int64(2*r) {
					return fmt.Errorf("rank %d answered %d, want %d", r, buf[0], 2*r)
				}
			}
		} else {
			if _, err := meshmpi.Recv(world, buf, 0, 2); err != nil {
				return err
			}
			buf[0] *= 2
			if err := meshmpi.Send(world, buf, 0, 3); err != nil {
				return err
			}
		}
		fmt.Printf("rank %d survived rank %d's failure\n", rank, victim)
		done = true
		return nil
	})
	if err != nil && done && errors.Is(err, meshmpi.ErrProcFailed) {
		fmt.Fprintln(os.Stderr, "keepgoing: finalize saw the failure:", err)
		err = nil
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "keepgoing:", err)
		os.Exit(1)
	}
}
