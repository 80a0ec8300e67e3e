package object_test

import (
	"fmt"
	"strings"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/object"
)

// Config is what rank 0 reads and every rank needs.
type Config struct {
	Name  string
	Steps int
	Tags  map[string]string
}

// Broadcast a config struct, gather a result of any shape, and reduce
// with a Go function: mpi4py's comm.bcast, comm.gather, comm.allreduce.
func Example() {
	err := meshmpi.Run(3, func(world *meshmpi.Comm) error {
		var cfg Config
		if world.Rank() == 0 {
			cfg = Config{Name: "heat", Steps: 100, Tags: map[string]string{"lab": "3"}}
		}
		cfg, err := object.Bcast(world, cfg, 0) // every rank gets rank 0's config
		if err != nil {
			return err
		}
		report := fmt.Sprintf("rank %d ran %s for %d steps", world.Rank(), cfg.Name, cfg.Steps)
		reports, err := object.Gather(world, report, 0)
		if err != nil {
			return err
		}
		longest, err := object.Allreduce(world, report, func(a, b string) string {
			if len(b) > len(a) {
				return b
			}
			return a
		})
		if err != nil {
			return err
		}
		if world.Rank() == 0 {
			fmt.Println(strings.Join(reports, "\n"))
			fmt.Println("longest:", longest)
		}
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// rank 0 ran heat for 100 steps
	// rank 1 ran heat for 100 steps
	// rank 2 ran heat for 100 steps
	// longest: rank 0 ran heat for 100 steps
}

// A point-to-point exchange of a value whose length the receiver does not
// know: comm.send and comm.recv.
func ExampleRecv() {
	err := meshmpi.Run(2, func(world *meshmpi.Comm) error {
		if world.Rank() == 0 {
			return object.Send(world, []string{"alpha", "beta", "gamma"}, 1, 0)
		}
		words, st, err := object.Recv[[]string](world, 0, 0)
		if err != nil {
			return err
		}
		fmt.Println(words, "from rank", st.Source)
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output: [alpha beta gamma] from rank 0
}
