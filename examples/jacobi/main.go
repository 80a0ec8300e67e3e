// Jacobi solves Laplace's equation on a square plate whose top edge is
// held at 100 degrees and the other edges at 0, by Jacobi iteration: the
// 2-D domain decomposition of MPI courses, on a Cartesian process grid,
// with the halo exchange as one persistent neighborhood collective.
//
// DimsCreate picks a balanced px×py process grid and CartCreate makes it a
// Cartesian communicator, not periodic: a rank on the edge of the process
// grid has no neighbor on that side. Each rank owns a block of the
// size×size interior (blocks differ by at most one row or column) stored
// with a one-cell halo around it: on a side with a neighbor the halo holds
// the neighbor's edge cells, on a side of the plate it holds the fixed
// boundary temperature. Every step:
//
//  1. the halo exchange: the rank packs its first and last rows and
//     columns and Starts a persistent NeighborAlltoallv (planned once by
//     NeighborAlltoallvInit, for the life of the loop), which sends them to
//     the up, down, left and right neighbors and receives theirs, in the
//     Cartesian neighbor order (per dimension, the negative direction
//     first). A missing neighbor is ProcNull to the collective: nothing is
//     sent or received there, and the rank leaves that side's halo, the
//     plate's boundary, as it is;
//  2. the Jacobi update: every interior cell becomes the mean of its four
//     neighbors, computed from the old values only;
//  3. an Allreduce (Max) of the largest change of any cell: the residual
//     every rank tests to stop at the same step once it falls below -tol.
//
// Rank 0 then Gathervs the blocks and compares the field with a
// sequential Jacobi iteration on the whole plate. Each cell's update adds
// the same numbers in the same order, and the largest change is the same
// whichever rank finds it, so the two stop at the same step and agree
// exactly; the program exits non-zero if not.
//
// Run it with
//
//	go run ./examples/jacobi -n 4 -size 40
//
// or as a job of separate processes under meshrun.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"

	"github.com/meshmpi/meshmpi"
)

// hot is the temperature of the plate's top edge; the others are at 0.
const hot = 100

func main() {
	n := flag.Int("n", 4, "number of in-process ranks (a rank launched by meshrun joins its job instead)")
	size := flag.Int("size", 40, "the plate's interior is size×size cells")
	tol := flag.Float64("tol", 1e-3, "stop once no cell changes by more than this in a step")
	maxSteps := flag.Int("steps", 20000, "stop after this many steps at most")
	flag.Parse()
	if *size < 1 || *tol <= 0 || *maxSteps < 1 {
		fmt.Fprintln(os.Stderr, "jacobi: -size, -tol and -steps must be positive")
		os.Exit(2)
	}
	err := meshmpi.Main(*n, func(world *meshmpi.Comm) error {
		res, err := solve(world, *size, *tol, *maxSteps)
		if err != nil || world.Rank() != 0 {
			return err
		}
		return check(world.Size(), *size, *tol, *maxSteps, res)
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "jacobi:", err)
		os.Exit(1)
	}
}

// split returns the first row (or column) and the length of block c of p
// blocks of n: the first n%p blocks are one longer.
func split(n, p, c int) (first, length int) {
	length = n / p
	first = c*length + min(c, n%p)
	if c < n%p {
		length++
	}
	return first, length
}

// grid is a block of lx rows of ly cells with a one-cell halo, stored as
// (lx+2)×(ly+2), row-major: cell (i, j), 1 ≤ i ≤ lx, 1 ≤ j ≤ ly, is the
// block's, the others are its halo.
type grid struct {
	lx, ly int
	u      []float64
}

func newGrid(lx, ly int) *grid {
	return &grid{lx: lx, ly: ly, u: make([]float64, (lx+2)*(ly+2))}
}

func (g *grid) at(i, j int) int { return i*(g.ly+2) + j }

// update sets every cell of next to the mean of its neighbors in g and
// returns the largest change.
func (g *grid) update(next *grid) float64 {
	change := 0.0
	for i := 1; i <= g.lx; i++ {
		for j := 1; j <= g.ly; j++ {
			v := (g.u[g.at(i-1, j)] + g.u[g.at(i+1, j)] + g.u[g.at(i, j-1)] + g.u[g.at(i, j+1)]) / 4
			change = max(change, math.Abs(v-g.u[g.at(i, j)]))
			next.u[g.at(i, j)] = v
		}
	}
	return change
}

// interior returns the block's own cells, row by row.
func (g *grid) interior() []float64 {
	out := make([]float64, 0, g.lx*g.ly)
	for i := 1; i <= g.lx; i++ {
		out = append(out, g.u[g.at(i, 1):g.at(i, g.ly)+1]...)
	}
	return out
}

// Halo blocks in the Cartesian neighbor order: dimension 0 (rows)
// negative then positive, dimension 1 (columns) negative then positive.
const (
	up = iota
	down
	left
	right
)

// halo is the persistent exchange: packing buffers laid out by neighbor
// (rows of ly cells, columns of lx) and the request that moves them.
type halo struct {
	nbr           [4]int // the neighbors' ranks, ProcNull where there is none
	send, recv    []float64
	counts, displ []int
	req           *meshmpi.Request
}

func newHalo(cart *meshmpi.Comm, lx, ly int) (*halo, error) {
	h := &halo{counts: []int{ly, ly, lx, lx}, displ: []int{0, ly, 2 * ly, 2*ly + lx}}
	var err error
	if h.nbr[up], h.nbr[down], err = cart.CartShift(0, 1); err != nil {
		return nil, err
	}
	if h.nbr[left], h.nbr[right], err = cart.CartShift(1, 1); err != nil {
		return nil, err
	}
	h.send, h.recv = make([]float64, 2*(lx+ly)), make([]float64, 2*(lx+ly))
	h.req, err = meshmpi.NeighborAlltoallvInit(cart, h.send, h.counts, h.displ, h.recv, h.counts, h.displ)
	return h, err
}

// exchange fills g's halo with the neighbors' edge cells, on the sides
// that have a neighbor.
func (h *halo) exchange(g *grid) error {
	for j := 1; j <= g.ly; j++ {
		h.send[h.displ[up]+j-1] = g.u[g.at(1, j)]      // my first row goes up
		h.send[h.displ[down]+j-1] = g.u[g.at(g.lx, j)] // my last row goes down
	}
	for i := 1; i <= g.lx; i++ {
		h.send[h.displ[left]+i-1] = g.u[g.at(i, 1)]     // first column left
		h.send[h.displ[right]+i-1] = g.u[g.at(i, g.ly)] // last column right
	}
	if err := h.req.Start(); err != nil {
		return err
	}
	if _, err := h.req.Wait(context.Background()); err != nil {
		return err
	}
	for j := 1; j <= g.ly; j++ {
		if h.nbr[up] != meshmpi.ProcNull {
			g.u[g.at(0, j)] = h.recv[h.displ[up]+j-1] // the last row of the block above
		}
		if h.nbr[down] != meshmpi.ProcNull {
			g.u[g.at(g.lx+1, j)] = h.recv[h.displ[down]+j-1]
		}
	}
	for i := 1; i <= g.lx; i++ {
		if h.nbr[left] != meshmpi.ProcNull {
			g.u[g.at(i, 0)] = h.recv[h.displ[left]+i-1]
		}
		if h.nbr[right] != meshmpi.ProcNull {
			g.u[g.at(i, g.ly+1)] = h.recv[h.displ[right]+i-1]
		}
	}
	return nil
}

// result is what rank 0 learns: the whole field, the steps taken and the
// last residual.
type result struct {
	field    []float64 // size×size, row-major
	steps    int
	residual float64
	dims     []int
}

// solve is what every rank runs; the result is rank 0's.
func solve(world *meshmpi.Comm, size int, tol float64, maxSteps int) (*result, error) {
	dims, err := meshmpi.DimsCreate(world.Size(), []int{0, 0})
	if err != nil {
		return nil, err
	}
	if dims[0] > size || dims[1] > size {
		return nil, fmt.Errorf("a %d×%d plate cannot be split %d×%d", size, size, dims[0], dims[1])
	}
	cart, err := world.CartCreate(dims, []bool{false, false}, false)
	if err != nil {
		return nil, err
	}
	defer cart.Free()
	_, _, coords, err := cart.CartGet()
	if err != nil {
		return nil, err
	}
	x0, lx := split(size, dims[0], coords[0])
	_, ly := split(size, dims[1], coords[1])
	g, next := newGrid(lx, ly), newGrid(lx, ly)
	if x0 == 0 { // my block touches the hot top edge: both copies keep it
		for j := range ly + 2 {
			g.u[g.at(0, j)], next.u[g.at(0, j)] = hot, hot
		}
	}
	h, err := newHalo(cart, lx, ly)
	if err != nil {
		return nil, err
	}
	defer h.req.Free()

	steps, residual := 0, []float64{math.Inf(1)}
	for steps < maxSteps && residual[0] > tol {
		if err := h.exchange(g); err != nil {
			return nil, err
		}
		residual[0] = g.update(next)
		g, next = next, g
		steps++
		if err := meshmpi.Allreduce(cart, meshmpi.InPlace[float64](), residual, meshmpi.Max); err != nil {
			return nil, err
		}
	}

	// gather the blocks at rank 0, which knows where each goes
	var counts, displs []int
	var all []float64
	if cart.Rank() == 0 {
		counts, displs = make([]int, cart.Size()), make([]int, cart.Size())
		for r := range cart.Size() {
			c, err := cart.CartCoords(r)
			if err != nil {
				return nil, err
			}
			_, rx := split(size, dims[0], c[0])
			_, ry := split(size, dims[1], c[1])
			counts[r] = rx * ry
			if r > 0 {
				displs[r] = displs[r-1] + counts[r-1]
			}
		}
		all = make([]float64, size*size)
	}
	if err := meshmpi.Gatherv(cart, g.interior(), all, counts, displs, 0); err != nil {
		return nil, err
	}
	if cart.Rank() != 0 {
		return nil, nil
	}
	res := &result{field: make([]float64, size*size), steps: steps, residual: residual[0], dims: dims}
	for r := range cart.Size() {
		c, _ := cart.CartCoords(r)
		bx, rx := split(size, dims[0], c[0])
		by, ry := split(size, dims[1], c[1])
		for i := range rx {
			copy(res.field[(bx+i)*size+by:], all[displs[r]+i*ry:displs[r]+(i+1)*ry])
		}
	}
	return res, nil
}

// sequential is the same iteration on the whole plate in one block.
func sequential(size int, tol float64, maxSteps int) (field []float64, steps int) {
	g, next := newGrid(size, size), newGrid(size, size)
	for j := range size + 2 {
		g.u[g.at(0, j)], next.u[g.at(0, j)] = hot, hot
	}
	for residual := math.Inf(1); steps < maxSteps && residual > tol; steps++ {
		residual = g.update(next)
		g, next = next, g
	}
	return g.interior(), steps
}

// check compares the result with the sequential one and prints it.
func check(ranks, size int, tol float64, maxSteps int, res *result) error {
	want, wantSteps := sequential(size, tol, maxSteps)
	centre := res.field[(size/2)*size+size/2]
	fmt.Printf("%d×%d plate on %d ranks (%d×%d process grid): %d steps, residual %.2g, centre %.6f\n",
		size, size, ranks, res.dims[0], res.dims[1], res.steps, res.residual, centre)
	fmt.Printf("sequential: %d steps, centre %.6f\n", wantSteps, want[(size/2)*size+size/2])
	if res.steps != wantSteps || !slices.Equal(res.field, want) {
		return fmt.Errorf("the field differs from the sequential solution")
	}
	fmt.Println("ok")
	return nil
}
