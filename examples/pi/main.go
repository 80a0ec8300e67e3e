// Pi computes π as the integral of 4/(1+x²) over [0, 1]: the classic first
// collective program (MPICH's cpi).
//
// It shows the two most common collectives. Rank 0 owns the input (the
// -steps flag) and Bcasts it, so every rank works on the same problem;
// each rank then sums the midpoint rule over its strided share of the
// steps (rank r takes steps r, r+n, r+2n, …), and Reduce with Sum adds the
// partial sums up at rank 0. Rank 0 prints the estimate and its error
// against math.Pi, and the program exits non-zero if the error exceeds
//
//	1e-9 + h²/3,   h = 1/steps
//
// (the midpoint rule's error bound, h²/24 times the largest second
// derivative of 4/(1+x²) on [0, 1], which is 8 in size, plus room for
// rounding): with the default 10 000 000 steps, about 1e-9.
//
// Run it with
//
//	go run ./examples/pi -n 4 -steps 10000000
package main

import (
	"flag"
	"fmt"
	"math"
	"os"

	"github.com/meshmpi/meshmpi"
)

func main() {
	n := flag.Int("n", 4, "number of in-process ranks (a rank launched by meshrun joins its job instead)")
	steps := flag.Int64("steps", 10_000_000, "integration steps")
	flag.Parse()
	if *steps < 1 {
		fmt.Fprintln(os.Stderr, "pi: -steps must be at least 1")
		os.Exit(2)
	}

	err := meshmpi.Main(*n, func(world *meshmpi.Comm) error { return pi(world, *steps) })
	if err != nil {
		fmt.Fprintln(os.Stderr, "pi:", err)
		os.Exit(1)
	}
}

// pi is what every rank runs; only rank 0 looks at the flag's value.
func pi(world *meshmpi.Comm, flagSteps int64) error {
	rank, size := world.Rank(), world.Size()

	steps := []int64{0}
	if rank == 0 {
		steps[0] = flagSteps
	}
	if err := meshmpi.Bcast(world, steps, 0); err != nil { // now every rank has it
		return err
	}

	h := 1 / float64(steps[0])
	sum := 0.0
	for i := int64(rank); i < steps[0]; i += int64(size) {
		x := (float64(i) + 0.5) * h // the midpoint of step i
		sum += 4 / (1 + x*x)
	}

	part, total := []float64{sum * h}, []float64{0}
	if err := meshmpi.Reduce(world, part, total, meshmpi.Sum, 0); err != nil {
		return err
	}
	if rank != 0 {
		return nil
	}

	errAbs := math.Abs(total[0] - math.Pi)
	tol := 1e-9 + h*h/3
	fmt.Printf("pi ≈ %.16f  error %.3g  (%d steps on %d ranks, tolerance %.3g)\n", total[0], errAbs, steps[0], size, tol)
	if errAbs > tol {
		return fmt.Errorf("error %.3g exceeds %.3g", errAbs, tol)
	}
	return nil
}
