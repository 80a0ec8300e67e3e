package meshmpi_test

import (
	"context"
	"fmt"

	"github.com/meshmpi/meshmpi"
)

// Point-to-point: rank 0 sends a slice, rank 1 receives it (MPI_Send,
// MPI_Recv; mpi4py's comm.Send and comm.Recv).
func ExampleSend() {
	err := meshmpi.Run(2, func(world *meshmpi.Comm) error {
		const tag = 7
		if world.Rank() == 0 {
			return meshmpi.Send(world, []int{1, 2, 3}, 1, tag)
		}
		buf := make([]int, 3)
		st, err := meshmpi.Recv(world, buf, 0, tag)
		if err != nil {
			return err
		}
		fmt.Println(buf, "from rank", st.Source, "count", st.Count)
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output: [1 2 3] from rank 0 count 3
}

// Nonblocking: every rank starts a receive from its left neighbor and a
// send to its right one, then waits for both (MPI_Irecv, MPI_Isend,
// MPI_Waitall).
func ExampleIsend() {
	err := meshmpi.Run(3, func(world *meshmpi.Comm) error {
		me, n := world.Rank(), world.Size()
		left, right := (me+n-1)%n, (me+1)%n
		got := make([]int, 1)
		recv, err := meshmpi.Irecv(world, got, left, 0)
		if err != nil {
			return err
		}
		send, err := meshmpi.Isend(world, []int{me * 100}, right, 0)
		if err != nil {
			return err
		}
		if err := meshmpi.Waitall(context.Background(), []*meshmpi.Request{recv, send}, nil); err != nil {
			return err
		}
		if me == 0 {
			fmt.Println("rank 0 got", got[0], "from rank", left)
		}
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output: rank 0 got 200 from rank 2
}

// Bcast: the root's buffer is copied into every rank's (MPI_Bcast).
func ExampleBcast() {
	err := meshmpi.Run(3, func(world *meshmpi.Comm) error {
		params := make([]float64, 2)
		if world.Rank() == 0 {
			params[0], params[1] = 0.5, 1e-6
		}
		if err := meshmpi.Bcast(world, params, 0); err != nil {
			return err
		}
		if world.Rank() == 2 {
			fmt.Println("rank 2 has", params)
		}
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output: rank 2 has [0.5 1e-06]
}

// Scatter hands each rank its block of the root's slice; Gather brings
// the blocks back in rank order (MPI_Scatter, MPI_Gather).
func ExampleScatter() {
	err := meshmpi.Run(3, func(world *meshmpi.Comm) error {
		var all []int
		if world.Rank() == 0 {
			all = []int{1, 2, 3, 4, 5, 6} // two per rank
		}
		mine := make([]int, 2)
		if err := meshmpi.Scatter(world, all, mine, 0); err != nil {
			return err
		}
		for i := range mine {
			mine[i] *= 10
		}
		var back []int
		if world.Rank() == 0 {
			back = make([]int, 6)
		}
		if err := meshmpi.Gather(world, mine, back, 0); err != nil {
			return err
		}
		if world.Rank() == 0 {
			fmt.Println(back)
		}
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output: [10 20 30 40 50 60]
}

// Reduce combines every rank's vector at the root, element by element
// (MPI_Reduce); MaxLoc finds the largest value and the rank holding it.
func ExampleReduce() {
	err := meshmpi.Run(4, func(world *meshmpi.Comm) error {
		me := world.Rank()
		sum := make([]int, 2)
		if err := meshmpi.Reduce(world, []int{me, 1}, sum, meshmpi.Sum, 0); err != nil {
			return err
		}
		temps := []meshmpi.Loc[float64]{meshmpi.MakeLoc(float64(me%3)*1.5, me)}
		hottest := make([]meshmpi.Loc[float64], 1)
		if err := meshmpi.Reduce(world, temps, hottest, meshmpi.MaxLoc, 0); err != nil {
			return err
		}
		if me == 0 {
			fmt.Println("sum:", sum, "hottest:", hottest[0].Value, "on rank", hottest[0].Index)
		}
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output: sum: [6 4] hottest: 3 on rank 2
}

// Allreduce gives every rank the combined vector (MPI_Allreduce).
func ExampleAllreduce() {
	err := meshmpi.Run(3, func(world *meshmpi.Comm) error {
		local := []float64{float64(world.Rank() + 1)}
		total := make([]float64, 1)
		if err := meshmpi.Allreduce(world, local, total, meshmpi.Sum); err != nil {
			return err
		}
		fmt.Printf("rank %d: %g\n", world.Rank(), total[0])
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	// Unordered output:
	// rank 0: 6
	// rank 1: 6
	// rank 2: 6
}

// A persistent send and receive are set up once and started every step
// (MPI_Send_init, MPI_Recv_init, MPI_Startall); a step allocates nothing.
func ExampleSendInit() {
	err := meshmpi.Run(2, func(world *meshmpi.Comm) error {
		other := 1 - world.Rank()
		out, in := []int{0}, []int{0}
		send, err := meshmpi.SendInit(world, out, other, 0)
		if err != nil {
			return err
		}
		recv, err := meshmpi.RecvInit(world, in, other, 0)
		if err != nil {
			return err
		}
		reqs := []*meshmpi.Request{send, recv}
		for step := range 3 {
			out[0] = 10*step + world.Rank()
			if err := meshmpi.Startall(reqs); err != nil {
				return err
			}
			if err := meshmpi.Waitall(context.Background(), reqs, nil); err != nil {
				return err
			}
			if world.Rank() == 0 {
				fmt.Println("step", step, "got", in[0])
			}
		}
		return send.Free()
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// step 0 got 1
	// step 1 got 11
	// step 2 got 21
}

// A halo exchange on a non-periodic 1-D Cartesian grid: CartShift names
// the neighbors, ProcNull at the edges, so the same Sendrecv runs on every
// rank (MPI_Cart_create, MPI_Cart_shift, MPI_Sendrecv).
func ExampleComm_CartShift() {
	err := meshmpi.Run(4, func(world *meshmpi.Comm) error {
		grid, err := world.CartCreate([]int{4}, []bool{false}, false)
		if err != nil {
			return err
		}
		left, right, err := grid.CartShift(0, 1)
		if err != nil {
			return err
		}
		edge := []float64{float64(grid.Rank())} // this rank's rightmost cell
		halo := []float64{-1}                   // the left neighbor's, or -1 at the edge
		if _, err := meshmpi.Sendrecv(grid, edge, right, 0, halo, left, 0); err != nil {
			return err
		}
		if grid.Rank() <= 1 {
			fmt.Printf("rank %d: left halo %g\n", grid.Rank(), halo[0])
		}
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	// Unordered output:
	// rank 0: left halo -1
	// rank 1: left halo 0
}

// Two groups talk through an intercommunicator: ranks of one group send
// to ranks of the other by their rank in it (MPI_Intercomm_create).
func ExampleIntercommCreate() {
	err := meshmpi.Run(4, func(world *meshmpi.Comm) error {
		color := world.Rank() % 2 // evens and odds
		half, err := world.Split(color, world.Rank())
		if err != nil {
			return err
		}
		// leaders: rank 0 of each half, world ranks 0 and 1
		inter, err := meshmpi.IntercommCreate(half, 0, world, 1-color, 99)
		if err != nil {
			return err
		}
		if color == 0 {
			return meshmpi.Send(inter, []int{world.Rank()}, half.Rank(), 0) // to the same rank of the odds
		}
		got := make([]int, 1)
		if _, err := meshmpi.Recv(inter, got, half.Rank(), 0); err != nil {
			return err
		}
		if half.Rank() == 1 {
			fmt.Println("odd rank 1 got", got[0], "from the evens; remote size", inter.RemoteSize())
		}
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output: odd rank 1 got 2 from the evens; remote size 2
}

// RecvAccumulate adds a message into the buffer as it arrives, with no
// temporary (after MPIX_Recv_accumulate).
func ExampleRecvAccumulate() {
	err := meshmpi.Run(3, func(world *meshmpi.Comm) error {
		if world.Rank() != 0 {
			return meshmpi.Send(world, []int{world.Rank(), 10 * world.Rank()}, 0, 0)
		}
		acc := []int{1000, 1000}
		for range 2 {
			if _, err := meshmpi.RecvAccumulate(world, acc, meshmpi.Sum, meshmpi.AnySource, 0); err != nil {
				return err
			}
		}
		fmt.Println(acc)
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output: [1003 1030]
}
