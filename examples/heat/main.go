// Heat diffuses heat on a periodic 2-D grid split among the ranks: the
// classic stencil program of MPI courses, with the halo exchange as one
// persistent neighborhood collective.
//
// DimsCreate picks a balanced px×py process grid and CartCreate makes it a
// periodic Cartesian communicator; each rank owns a block of the size×size
// grid (blocks differ by at most one row or column) plus a one-cell halo.
// Every step:
//
//  1. the halo exchange: the rank packs its first and last rows and
//     columns, and a persistent NeighborAlltoallv (planned once, by
//     NeighborAlltoallvInit, restarted with Start each step, allocating
//     nothing) sends them to the up, down, left and right neighbors and
//     receives theirs — in MPI's neighbor order, per dimension, negative
//     direction then positive — which the rank unpacks into its halo;
//  2. the explicit (Jacobi) update u' = u + α(north+south+west+east − 4u);
//  3. an Allreduce of the largest change: every rank stops at the same
//     step once it falls below -tol.
//
// With 4 ranks the process grid is 2×2, so each neighbor is the same rank
// in both directions of a dimension; MPI-4.1 §8.6 still says which block
// lands where, and the check below would catch a swap.
//
// The result is checked twice. On a periodic grid the update moves heat
// but never creates or destroys it, so the total (an Allreduce of the
// sums) must stay what it was. And rank 0 gathers the final field and
// compares it with a sequential run of the same steps, which adds the same
// numbers in the same order and must agree exactly.
//
// Run it with
//
//	go run ./examples/heat -n 4
//
// or as a job of separate processes under meshrun.
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

// alpha is the diffusion number; the explicit update is stable up to 1/4.
const alpha = 0.2

func main() {
	n := flag.Int("n", 4, "number of in-process ranks (a rank launched by meshrun joins its job instead)")
	size := flag.Int("size", 24, "the grid is size×size cells")
	tol := flag.Float64("tol", 1e-3, "stop once no cell changes by more than this in a step")
	maxSteps := flag.Int("steps", 10000, "stop after this many steps at most")
	flag.Parse()
	if *size < 1 || *tol <= 0 || *maxSteps < 1 {
		fmt.Fprintln(os.Stderr, "heat: -size, -tol and -steps must be positive")
		os.Exit(2)
	}
	err := meshmpi.Main(*n, func(world *meshmpi.Comm) error { return heat(world, *size, *tol, *maxSteps) })
	if err != nil {
		fmt.Fprintln(os.Stderr, "heat:", err)
		os.Exit(1)
	}
}

// initial is the starting temperature of global cell (i, j): a hot square
// off the centre on a cold plate.
func initial(i, j, size int) float64 {
	if i >= size/4 && i < size/2 && j >= size/3 && j < size/3+size/4+1 {
		return 100
	}
	return 0
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

// block is one rank's part of the grid: lx rows of ly cells, stored with a
// one-cell halo as (lx+2)×(ly+2), row-major.
type block struct {
	lx, ly  int
	u, next []float64
}

func (b *block) at(i, j int) int { return i*(b.ly+2) + j }

// Halo block order, the neighbor order of a 2-D grid: dimension 0 (rows)
// negative then positive, dimension 1 (columns) negative then positive.
const (
	up = iota
	down
	left
	right
)

// halo is the persistent exchange: packing buffers laid out by block
// (rows of ly, columns of lx) and the request that moves them.
type halo struct {
	send, recv    []float64
	counts, displ []int
	req           *meshmpi.Request
}

func newHalo(cart *meshmpi.Comm, b *block) (*halo, error) {
	h := &halo{counts: []int{b.ly, b.ly, b.lx, b.lx}}
	h.displ = []int{0, b.ly, 2 * b.ly, 2*b.ly + b.lx}
	h.send, h.recv = make([]float64, 2*(b.lx+b.ly)), make([]float64, 2*(b.lx+b.ly))
	var err error
	h.req, err = meshmpi.NeighborAlltoallvInit(cart, h.send, h.counts, h.displ, h.recv, h.counts, h.displ)
	return h, err
}

// exchange fills b's halo with the neighbors' edges.
func (h *halo) exchange(b *block) error {
	for j := 1; j <= b.ly; j++ {
		h.send[h.displ[up]+j-1] = b.u[b.at(1, j)]      // my first row goes up
		h.send[h.displ[down]+j-1] = b.u[b.at(b.lx, j)] // my last row goes down
	}
	for i := 1; i <= b.lx; i++ {
		h.send[h.displ[left]+i-1] = b.u[b.at(i, 1)]     // first column left
		h.send[h.displ[right]+i-1] = b.u[b.at(i, b.ly)] // last column right
	}
	if err := h.req.Start(); err != nil {
		return err
	}
	if _, err := h.req.Wait(context.Background()); err != nil {
		return err
	}
	for j := 1; j <= b.ly; j++ {
		b.u[b.at(0, j)] = h.recv[h.displ[up]+j-1]        // from the neighbor above: its last row
		b.u[b.at(b.lx+1, j)] = h.recv[h.displ[down]+j-1] // from below: its first row
	}
	for i := 1; i <= b.lx; i++ {
		b.u[b.at(i, 0)] = h.recv[h.displ[left]+i-1]
		b.u[b.at(i, b.ly+1)] = h.recv[h.displ[right]+i-1]
	}
	return nil
}

// step applies the update to every cell of b (its halo filled) and
// returns the largest change.
func step(u, next []float64, lx, ly int, at func(i, j int) int) float64 {
	change := 0.0
	for i := 1; i <= lx; i++ {
		for j := 1; j <= ly; j++ {
			c := u[at(i, j)]
			v := c + alpha*(u[at(i-1, j)]+u[at(i+1, j)]+u[at(i, j-1)]+u[at(i, j+1)]-4*c)
			next[at(i, j)] = v
			change = max(change, math.Abs(v-c))
		}
	}
	return change
}

// heat is what every rank runs.
func heat(world *meshmpi.Comm, size int, tol float64, maxSteps int) error {
	dims, err := meshmpi.DimsCreate(world.Size(), []int{0, 0})
	if err != nil {
		return err
	}
	if dims[0] > size || dims[1] > size {
		return fmt.Errorf("a %d×%d grid cannot be split %d×%d", size, size, dims[0], dims[1])
	}
	cart, err := world.CartCreate(dims, []bool{true, true}, true)
	if err != nil {
		return err
	}
	defer cart.Free()
	_, _, coords, err := cart.CartGet()
	if err != nil {
		return err
	}
	x0, lx := split(size, dims[0], coords[0])
	y0, ly := split(size, dims[1], coords[1])
	b := &block{lx: lx, ly: ly, u: make([]float64, (lx+2)*(ly+2)), next: make([]float64, (lx+2)*(ly+2))}
	for i := 1; i <= lx; i++ {
		for j := 1; j <= ly; j++ {
			b.u[b.at(i, j)] = initial(x0+i-1, y0+j-1, size)
		}
	}
	h, err := newHalo(cart, b)
	if err != nil {
		return err
	}
	defer h.req.Free()
	total := func() (float64, error) {
		sum := []float64{0}
		for i := 1; i <= lx; i++ {
			for j := 1; j <= ly; j++ {
				sum[0] += b.u[b.at(i, j)]
			}
		}
		err := meshmpi.Allreduce(cart, meshmpi.InPlace[float64](), sum, meshmpi.Sum)
		return sum[0], err
	}
	before, err := total()
	if err != nil {
		return err
	}

	steps, change := 0, []float64{math.Inf(1)}
	for steps < maxSteps && change[0] > tol {
		if err := h.exchange(b); err != nil {
			return err
		}
		change[0] = step(b.u, b.next, lx, ly, b.at)
		b.u, b.next = b.next, b.u
		steps++
		if err := meshmpi.Allreduce(cart, meshmpi.InPlace[float64](), change, meshmpi.Max); err != nil {
			return err
		}
	}
	after, err := total()
	if err != nil {
		return err
	}
	return check(cart, b, x0, y0, size, steps, change[0], before, after)
}

// check gathers the field at rank 0 and compares it with a sequential run
// of the same number of steps, and checks that the total heat held.
func check(cart *meshmpi.Comm, b *block, x0, y0, size, steps int, change, before, after float64) error {
	mine := []float64{float64(x0), float64(y0), float64(b.lx), float64(b.ly)}
	for i := 1; i <= b.lx; i++ {
		mine = append(mine, b.u[b.at(i, 1):b.at(i, b.ly)+1]...)
	}
	// every block's length first, then the blocks
	lens := make([]int, cart.Size())
	if err := meshmpi.Allgather(cart, []int{len(mine)}, lens); err != nil {
		return err
	}
	displs, all := make([]int, len(lens)), 0
	for r, l := range lens {
		displs[r], all = all, all+l
	}
	var field []float64
	if cart.Rank() == 0 {
		field = make([]float64, all)
	}
	if err := meshmpi.Gatherv(cart, mine, field, lens, displs, 0); err != nil {
		return err
	}
	if cart.Rank() != 0 {
		return nil
	}
	got := make([]float64, size*size)
	for r := range lens {
		p := field[displs[r]:]
		bx, by, blx, bly := int(p[0]), int(p[1]), int(p[2]), int(p[3])
		for i := range blx {
			copy(got[(bx+i)*size+by:], p[4+i*bly:4+(i+1)*bly])
		}
	}
	want := sequential(size, steps)
	diff := 0.0
	for k := range want {
		diff = max(diff, math.Abs(got[k]-want[k]))
	}
	fmt.Printf("%d×%d grid on %d ranks (%v process grid): %d steps, last change %.2g\n",
		size, size, cart.Size(), dimsOf(cart), steps, change)
	fmt.Printf("total heat %.6f before, %.6f after (relative drift %.1e)\n", before, after, math.Abs(after-before)/before)
	fmt.Printf("largest difference from the sequential solution: %g\n", diff)
	var errs []error
	if diff != 0 {
		errs = append(errs, fmt.Errorf("the field differs from the sequential solution by up to %g", diff))
	}
	if math.Abs(after-before) > 1e-9*before {
		errs = append(errs, fmt.Errorf("total heat went from %g to %g", before, after))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	fmt.Println("ok")
	return nil
}

func dimsOf(cart *meshmpi.Comm) string {
	dims, _, _, _ := cart.CartGet()
	return fmt.Sprintf("%d×%d", dims[0], dims[1])
}

// sequential runs steps of the same update on the whole grid in one piece,
// periodic through its halo.
func sequential(size, steps int) []float64 {
	b := &block{lx: size, ly: size, u: make([]float64, (size+2)*(size+2)), next: make([]float64, (size+2)*(size+2))}
	for i := range size {
		for j := range size {
			b.u[b.at(i+1, j+1)] = initial(i, j, size)
		}
	}
	for range steps {
		for k := 1; k <= size; k++ { // wrap the edges into the halo
			b.u[b.at(0, k)], b.u[b.at(size+1, k)] = b.u[b.at(size, k)], b.u[b.at(1, k)]
			b.u[b.at(k, 0)], b.u[b.at(k, size+1)] = b.u[b.at(k, size)], b.u[b.at(k, 1)]
		}
		step(b.u, b.next, size, size, b.at)
		b.u, b.next = b.next, b.u
	}
	out := make([]float64, 0, size*size)
	for i := 1; i <= size; i++ {
		out = append(out, b.u[b.at(i, 1):b.at(i, size)+1]...)
	}
	return out
}
