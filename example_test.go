package meshmpi_test

import (
	"context"
	"fmt"

	"github.com/meshmpi/meshmpi"
)

// Four ranks in one process add up their shares with Allreduce.
func ExampleRun() {
	err := meshmpi.Run(4, func(world *meshmpi.Comm) error {
		part := []float64{float64(world.Rank() + 1)}
		total := make([]float64, 1)
		if err := meshmpi.Allreduce(world, part, total, meshmpi.Sum); err != nil {
			return err
		}
		if world.Rank() == 0 {
			fmt.Println("total:", total[0])
		}
		return nil
	})
	if err != nil {
		fmt.Println("job failed:", err)
	}
	// Output: total: 10
}

// A persistent collective is planned once and started many times.
func ExampleAllreduceInit() {
	_ = meshmpi.Run(3, func(world *meshmpi.Comm) error {
		in, out := []int64{0}, []int64{0}
		req, err := meshmpi.AllreduceInit(world, in, out, meshmpi.Max)
		if err != nil {
			return err
		}
		for step := range 3 {
			in[0] = int64(step*10 + world.Rank())
			if err := req.Start(); err != nil {
				return err
			}
			if _, err := req.Wait(context.Background()); err != nil {
				return err
			}
			if world.Rank() == 0 {
				fmt.Println("max:", out[0])
			}
		}
		return req.Free()
	})
	// Output:
	// max: 2
	// max: 12
	// max: 22
}
