// Allreduce shows the three forms of a collective on one operation,
// Allreduce with Sum, over an in-process world of -n ranks:
//
//  1. blocking: Allreduce returns when this rank's result is in place.
//     Rank r contributes the vector v[i] = r + i, so every rank must get
//     sum[i] = n(n-1)/2 + n·i.
//  2. nonblocking: Iallreduce starts the reduction and returns a Request
//     at once; the rank computes something independent of it meanwhile
//     (here Σ 1/k² for k ≤ 2 000 000, which tends to π²/6) and only then
//     Waits. Rank r contributes r², so the result is (n-1)n(2n-1)/6.
//  3. persistent: AllreduceInit plans the reduction once, for fixed
//     buffers; each of 10 iterations refills the send buffer (rank r
//     contributes r·it + i at iteration it), Starts the request and Waits
//     for it, so the result is it·n(n-1)/2 + n·i. A persistent collective
//     is the cheapest way to repeat the same collective in a loop.
//
// Every rank checks every result against the closed form; rank 0 prints
// one line per part. A mismatch makes the program exit non-zero.
//
// Run it with
//
//	go run ./examples/allreduce -n 4
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"

	"github.com/meshmpi/meshmpi"
)

const (
	length     = 1000      // elements of the reduced vectors
	basselTerm = 2_000_000 // terms of the overlapped computation
	iterations = 10        // starts of the persistent Allreduce
)

func main() {
	n := flag.Int("n", 4, "number of in-process ranks (a rank launched by meshrun joins its job instead)")
	flag.Parse()

	if err := meshmpi.Main(*n, allreduce); err != nil {
		fmt.Fprintln(os.Stderr, "allreduce:", err)
		os.Exit(1)
	}
}

// allreduce is what every rank runs.
func allreduce(world *meshmpi.Comm) error {
	rank, n := world.Rank(), float64(world.Size())
	ctx := context.Background()
	say := func(format string, args ...any) {
		if rank == 0 {
			fmt.Printf(format+"\n", args...)
		}
	}

	// 1. Blocking.
	send, recv := make([]float64, length), make([]float64, length)
	for i := range send {
		send[i] = float64(rank + i)
	}
	if err := meshmpi.Allreduce(world, send, recv, meshmpi.Sum); err != nil {
		return err
	}
	if err := check("blocking", recv, func(i int) float64 { return n*(n-1)/2 + n*float64(i) }); err != nil {
		return err
	}
	say("blocking:    Allreduce of %d elements, sum[i] = n(n-1)/2 + n·i: ok (sum[%d] = %g)", length, length-1, recv[length-1])

	// 2. Nonblocking, with a computation overlapped.
	sq, sqSum := []float64{float64(rank * rank)}, []float64{0}
	req, err := meshmpi.Iallreduce(world, sq, sqSum, meshmpi.Sum)
	if err != nil {
		return err
	}
	// sq and sqSum belong to the reduction until Wait returns: this loop
	// touches neither.
	bassel := 0.0
	for k := basselTerm; k >= 1; k-- { // smallest terms first, for accuracy
		bassel += 1 / (float64(k) * float64(k))
	}
	if _, err := req.Wait(ctx); err != nil {
		return err
	}
	if err := check("nonblocking", sqSum, func(int) float64 { return (n - 1) * n * (2*n - 1) / 6 }); err != nil {
		return err
	}
	// Σ_{k>K} 1/k² lies between 1/(K+1) and 1/K.
	if tail := math.Pi*math.Pi/6 - bassel; tail < 1/float64(basselTerm+1)-1e-12 || tail > 1/float64(basselTerm)+1e-12 {
		return fmt.Errorf("nonblocking: overlapped sum %.15f is off π²/6 by %g", bassel, tail)
	}
	say("nonblocking: Iallreduce of r², overlapped with Σ1/k² = %.9f: ok (sum = %g = (n-1)n(2n-1)/6)", bassel, sqSum[0])

	// 3. Persistent: planned once, started 10 times.
	req, err = meshmpi.AllreduceInit(world, send, recv, meshmpi.Sum)
	if err != nil {
		return err
	}
	for it := 1; it <= iterations; it++ {
		for i := range send { // the buffers are fixed; their contents may change between starts
			send[i] = float64(rank*it + i)
		}
		if err := req.Start(); err != nil {
			return errors.Join(err, req.Free())
		}
		if _, err := req.Wait(ctx); err != nil {
			return errors.Join(err, req.Free())
		}
		f := float64(it)
		if err := check(fmt.Sprintf("persistent, iteration %d", it), recv, func(i int) float64 { return f*n*(n-1)/2 + n*float64(i) }); err != nil {
			return errors.Join(err, req.Free())
		}
	}
	if err := req.Free(); err != nil {
		return err
	}
	say("persistent:  AllreduceInit once, %d × Start+Wait with new inputs, sum[i] = it·n(n-1)/2 + n·i: ok", iterations)
	return nil
}

// check compares got with the closed form want(i), exactly: every value is
// a small integer, which float64 sums represent exactly.
func check(part string, got []float64, want func(i int) float64) error {
	for i, g := range got {
		if w := want(i); g != w {
			return fmt.Errorf("%s: element %d is %g, want %g", part, i, g, w)
		}
	}
	return nil
}
