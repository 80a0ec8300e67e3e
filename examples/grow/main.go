// Grow is a job that grows while it runs: it starts with the ranks its
// launcher started and waits for late ranks (volunteers, browser tabs,
// `meshrun join`) until it has -grow ranks, then every rank, late or not,
// takes part in collectives on the grown communicator.
//
// It shows MPI's way to join a running job (MPI-4.1 §11.8). Rank 0 opens
// a port and publishes it on the job's signaling server as the service
// "grow"; a late rank (world.Late(): its world is itself alone) looks the
// name up, Connects, and IntercommMerge makes one communicator of the job
// and itself. Every member of that communicator takes part in the next
// Accept, so the communicator grows by one rank per arrival, in the order
// the late ranks arrive. Once grown, Allreduce adds every rank's rank+1
// (the answer is n(n+1)/2) and Allgather collects which ranks came late;
// rank 0 prints both and the program fails if the sum is wrong.
//
// Run it with
//
//	meshrun -n 4 --max 8 ./examples/grow -grow 8
//
// and, while it waits, `meshrun join URL -n 2 ./examples/grow -grow 8`
// and two browser tabs on the join link meshrun prints. Without a
// launcher it runs in one process: ranks -first … -n-1 play late ranks
// (go run ./examples/grow -n 8 -first 4).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/meshmpi/meshmpi"
)

func main() {
	n := flag.Int("n", 8, "number of in-process ranks (a rank launched by meshrun joins its job instead)")
	first := flag.Int("first", 4, "in process: the ranks from this one on play late ranks")
	target := flag.Int("grow", 0, "ranks to grow to (0: the in-process -n; under a launcher, the job's own size)")
	wait := flag.Duration("wait", 2*time.Minute, "how long a late rank waits for the job's port")
	flag.Parse()
	err := meshmpi.Main(*n, func(world *meshmpi.Comm) error {
		cfg := config{first: *first, target: *target, wait: *wait}
		if cfg.target == 0 {
			if launched() {
				return fmt.Errorf("-grow: the number of ranks to grow to (the job's ranks and the late ones must agree on it)")
			}
			cfg.target = *n
		}
		return grow(world, cfg)
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "grow:", err)
		os.Exit(1)
	}
}

type config struct {
	first, target int
	wait          time.Duration
}

// service is the name the job publishes its port under.
const service = "grow"

func grow(world *meshmpi.Comm, cfg config) error {
	comm := world
	late := world.Late()
	if !late && world.Size() >= cfg.target && cfg.first < world.Size() && !launched() {
		// in one process: ranks first… arrive alone, as late ranks do
		color := 0
		if world.Rank() >= cfg.first {
			color, late = 1+world.Rank(), true
		}
		var err error
		if comm, err = world.Split(color, 0); err != nil {
			return err
		}
	}
	if cfg.target < comm.Size() {
		return fmt.Errorf("-grow %d: the job has %d ranks already", cfg.target, comm.Size())
	}
	var port string
	if !late && comm.Rank() == 0 {
		var err error
		if port, err = comm.OpenPort(); err != nil {
			return err
		}
		if err := comm.PublishName(service, port); err != nil {
			return err
		}
		fmt.Printf("waiting for %d late ranks on %s (service %q)\n", cfg.target-comm.Size(), port, service)
	}
	if late {
		ctx, cancel := context.WithTimeout(context.Background(), cfg.wait)
		p, err := comm.LookupName(ctx, service)
		cancel()
		if err != nil {
			return err
		}
		inter, err := comm.Connect(p, 0)
		if err != nil {
			return err
		}
		if comm, err = merge(world, comm, inter, true); err != nil {
			return err
		}
	}
	for comm.Size() < cfg.target {
		inter, err := comm.Accept(port, 0)
		if err != nil {
			return err
		}
		if comm, err = merge(world, comm, inter, false); err != nil {
			return err
		}
		if comm.Rank() == 0 {
			fmt.Printf("a rank joined: %d of %d\n", comm.Size(), cfg.target)
		}
	}
	if port != "" {
		if err := comm.UnpublishName(service, port); err != nil {
			return err
		}
		if err := comm.ClosePort(port); err != nil {
			return err
		}
	}

	n := comm.Size()
	sum := make([]int64, 1)
	if err := meshmpi.Allreduce(comm, []int64{int64(comm.Rank() + 1)}, sum, meshmpi.Sum); err != nil {
		return err
	}
	mark := []byte{'j'}
	if late {
		mark[0] = 'L'
	}
	all := make([]byte, n)
	if err := meshmpi.Allgather(comm, mark, all); err != nil {
		return err
	}
	if comm.Rank() == 0 {
		fmt.Printf("grown to %d ranks (%s: j the job's, L late): Allreduce of rank+1 = %d (want %d)\n", n, all, sum[0], n*(n+1)/2)
	}
	if sum[0] != int64(n*(n+1)/2) {
		return fmt.Errorf("allreduce on the grown communicator: %d, want %d", sum[0], n*(n+1)/2)
	}
	return comm.Disconnect()
}

// merge makes one communicator of inter's two groups (high: this group
// comes second) and frees inter and comm, the communicator it replaces
// (not the world).
func merge(world, comm, inter *meshmpi.Comm, high bool) (*meshmpi.Comm, error) {
	merged, err := inter.IntercommMerge(high)
	if err != nil {
		return nil, err
	}
	if err := inter.Free(); err != nil {
		return nil, err
	}
	if comm != world {
		_ = comm.Free()
	}
	return merged, nil
}

// launched reports whether a launcher started this process into a job.
func launched() bool {
	_, ok, _ := meshmpi.JobFromEnv()
	return ok
}
