// Matvec multiplies a matrix by a vector over and over (power iteration,
// which finds the matrix's largest eigenvalue): the row-block matrix–vector
// product of MPI courses, with the rows split unevenly over the ranks.
//
// Rank 0 builds the size×size matrix A. Rank r gets a block of rows: the
// first size%n ranks one row more than the others (a rank may get none
// when there are more ranks than rows). Two collectives carry the data:
//
//   - Scatterv hands each rank its rows once, at the start. It is Scatter
//     with a count and a displacement per rank (counts[r] = rows of rank
//     r × size, displs[r] = its first row × size), which is what uneven
//     blocks need.
//   - Allgatherv, every iteration, puts the pieces of y = A·x that the
//     ranks computed (each its own rows' entries) together into the whole
//     of y on every rank: the next product needs all of x, and x is y
//     scaled.
//
// Each iteration is y = A·x, λ = max|y|, x = y/λ; λ tends to the largest
// eigenvalue of A. Every rank holds x whole, so the scaling needs no
// communication.
//
// Rank 0 repeats the iterations sequentially on the whole matrix and
// compares: every entry of y is the same dot product, added in the same
// order, so the two must agree exactly. The program exits non-zero if they
// do not.
//
// Run it with
//
//	go run ./examples/matvec -n 3 -size 100 -iters 20
//
// or as a job of separate processes under meshrun.
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"

	"github.com/meshmpi/meshmpi"
)

func main() {
	n := flag.Int("n", 4, "number of in-process ranks (a rank launched by meshrun joins its job instead)")
	size := flag.Int("size", 100, "the matrix is size×size")
	iters := flag.Int("iters", 20, "matrix–vector products")
	flag.Parse()
	if *size < 1 || *iters < 1 {
		fmt.Fprintln(os.Stderr, "matvec: -size and -iters must be positive")
		os.Exit(2)
	}
	err := meshmpi.Main(*n, func(world *meshmpi.Comm) error {
		lambda, x, err := powerIteration(world, *size, *iters)
		if err != nil || world.Rank() != 0 {
			return err
		}
		return check(world.Size(), *size, *iters, lambda, x)
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "matvec:", err)
		os.Exit(1)
	}
}

// matrix returns the size×size matrix, row-major: 1/(1+|i−j|), largest
// on the diagonal.
func matrix(size int) []float64 {
	a := make([]float64, size*size)
	for i := range size {
		for j := range size {
			a[i*size+j] = 1 / float64(1+max(i-j, j-i))
		}
	}
	return a
}

// split returns the first row and the number of rows of rank r of p for
// size rows: the first size%p ranks get one row more.
func split(size, p, r int) (first, rows int) {
	rows = size / p
	first = r*rows + min(r, size%p)
	if r < size%p {
		rows++
	}
	return first, rows
}

// multiply computes y[i] = Σ_j a[i][j]·x[j] for the rows of a.
func multiply(a, x, y []float64) {
	for i := range y {
		sum := 0.0
		for j, xj := range x {
			sum += a[i*len(x)+j] * xj
		}
		y[i] = sum
	}
}

// normalize divides y by its largest entry in size and returns that
// entry.
func normalize(y []float64) float64 {
	lambda := 0.0
	for _, v := range y {
		lambda = max(lambda, v, -v)
	}
	for i := range y {
		y[i] /= lambda
	}
	return lambda
}

// powerIteration is what every rank runs: it returns the last λ and x,
// the same on every rank.
func powerIteration(world *meshmpi.Comm, size, iters int) (float64, []float64, error) {
	p := world.Size()
	// rows and rowDispls describe the row blocks, for Allgatherv;
	// counts and displs the same blocks of the matrix, for Scatterv
	rows, rowDispls := make([]int, p), make([]int, p)
	counts, displs := make([]int, p), make([]int, p)
	for r := range p {
		rowDispls[r], rows[r] = split(size, p, r)
		counts[r], displs[r] = rows[r]*size, rowDispls[r]*size
	}

	var a []float64 // the whole matrix, at rank 0 only
	if world.Rank() == 0 {
		a = matrix(size)
	}
	mine := make([]float64, counts[world.Rank()]) // my rows
	if err := meshmpi.Scatterv(world, a, counts, displs, mine, 0); err != nil {
		return 0, nil, err
	}

	x := make([]float64, size)
	for i := range x {
		x[i] = 1
	}
	y := make([]float64, size)
	myY := make([]float64, rows[world.Rank()]) // my entries of y
	lambda := 0.0
	for range iters {
		multiply(mine, x, myY)
		if err := meshmpi.Allgatherv(world, myY, y, rows, rowDispls); err != nil {
			return 0, nil, err
		}
		lambda = normalize(y)
		x, y = y, x
	}
	return lambda, x, nil
}

// sequential is the same iteration on one rank.
func sequential(size, iters int) (float64, []float64) {
	a := matrix(size)
	x, y := make([]float64, size), make([]float64, size)
	for i := range x {
		x[i] = 1
	}
	lambda := 0.0
	for range iters {
		multiply(a, x, y)
		lambda = normalize(y)
		x, y = y, x
	}
	return lambda, x
}

// check compares the result with the sequential one and prints it.
func check(ranks, size, iters int, lambda float64, x []float64) error {
	wantLambda, wantX := sequential(size, iters)
	fmt.Printf("%d×%d matrix on %d ranks, %d products: largest eigenvalue ≈ %.12f\n", size, size, ranks, iters, lambda)
	fmt.Printf("sequential: %.12f\n", wantLambda)
	if lambda != wantLambda || !slices.Equal(x, wantX) {
		return fmt.Errorf("the result differs from the sequential one (λ %v, want %v)", lambda, wantLambda)
	}
	fmt.Println("ok")
	return nil
}
