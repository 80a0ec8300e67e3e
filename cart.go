package meshmpi

// Cartesian topologies (MPI-4.1 §8.5.1–8.5.5). Ranks are laid out in
// row-major order: the last dimension varies fastest, so in a 2×3 grid
// rank 4 has coordinates (1, 1).

import (
	"fmt"
	"math"
	"slices"

	"github.com/meshmpi/meshmpi/coll"
)

// DimsCreate fills the zero entries of dims with a balanced factorization
// of nnodes (MPI_Dims_create): positive entries are kept, and the free ones
// get the factorization of nnodes/∏(positive entries) whose largest and
// smallest factors are closest, in non-increasing order. It returns the
// completed dims, a new slice. A negative entry, or kept entries whose
// product does not divide nnodes, is ErrArg.
//
//	DimsCreate(6, []int{0, 0})    → [3 2]
//	DimsCreate(7, []int{0, 0})    → [7 1]
//	DimsCreate(6, []int{0, 3, 0}) → [2 3 1]
//	DimsCreate(7, []int{0, 3, 0}) → ErrArg
func DimsCreate(nnodes int, dims []int) ([]int, error) {
	if nnodes <= 0 {
		return nil, fmt.Errorf("dims create: %d nodes: %w", nnodes, ErrArg)
	}
	out := slices.Clone(dims)
	fixed, free := 1, 0
	for i, d := range dims {
		switch {
		case d < 0:
			return nil, fmt.Errorf("dims create: dims[%d] = %d: %w", i, d, ErrArg)
		case d == 0:
			free++
		default:
			fixed *= d
		}
	}
	if nnodes%fixed != 0 {
		return nil, fmt.Errorf("dims create: %d nodes do not divide into the fixed dims %v: %w", nnodes, dims, ErrArg)
	}
	m := nnodes / fixed
	if free == 0 {
		if m != 1 {
			return nil, fmt.Errorf("dims create: dims %v hold %d nodes, not %d: %w", dims, fixed, nnodes, ErrArg)
		}
		return out, nil
	}
	best := balancedFactors(m, free)
	k := 0
	for i := range out {
		if out[i] == 0 {
			out[i] = best[k]
			k++
		}
	}
	return out, nil
}

// balancedFactors returns k factors of m, non-increasing, whose largest
// and smallest are closest; among those with the same spread it takes the
// one whose smallest factor is largest, then whose next smallest is, and
// so on (MPICH's choice: MPICH's test/mpi/topo/dims5 checks 75395 cases
// against it).
//
// It searches non-increasing factorizations over m's divisors only (at
// most 1600 below 2^31), largest factor ascending from ⌊m^(1/k)⌋, and
// cuts a branch as soon as its spread must exceed the best found: the
// smallest factor is at most the one being placed, so a placed factor d
// bounds the spread below by first−d. Walking every integer below m, as
// an earlier version did, took minutes on MPICH's list (seconds per
// large two-dimensional case, exponential in k).
func balancedFactors(m, k int) []int {
	ds := divisors(m)
	best := make([]int, 0, k)
	cur := make([]int, 0, k)
	spread := -1 // best's spread; -1 until a factorization is found
	var search func(rest, slots, hi int)
	search = func(rest, slots, hi int) {
		if slots == 1 {
			if rest > ds[hi] {
				return
			}
			cur = append(cur, rest)
			if d := cur[0] - rest; spread < 0 || d < spread || d == spread && revLexGreater(cur, best) {
				spread, best = d, append(best[:0], cur...)
			}
			cur = cur[:len(cur)-1]
			return
		}
		for i := hi; i >= 0; i-- {
			d := ds[i]
			if rest%d != 0 {
				continue
			}
			// the remaining slots hold factors ≤ d, so d^slots ≥ rest
			if pow := ipow(d, slots); pow >= 0 && pow < rest {
				break
			}
			if spread >= 0 && cur[0]-d > spread {
				break
			}
			cur = append(cur, d)
			search(rest/d, slots-1, i)
			cur = cur[:len(cur)-1]
		}
	}
	if k == 1 {
		return []int{m}
	}
	r := iroot(m, k)
	for i, first := range ds {
		if first < r {
			continue // k factors ≤ first could not reach m
		}
		if spread >= 0 && first-r > spread {
			break // the smallest factor is at most r
		}
		cur = append(cur[:0], first)
		search(m/first, k-1, i)
	}
	return best
}

// revLexGreater reports whether a beats b from the back: a's last (smallest)
// factor is larger, or equal and a's previous one is, and so on.
func revLexGreater(a, b []int) bool {
	for j := len(a) - 1; j >= 0; j-- {
		if a[j] != b[j] {
			return a[j] > b[j]
		}
	}
	return false
}

// divisors returns m's divisors in increasing order, by trial division up
// to √m.
func divisors(m int) []int {
	var lo, hi []int
	for d := 1; d*d <= m; d++ {
		if m%d == 0 {
			lo = append(lo, d)
			if d*d != m {
				hi = append(hi, m/d)
			}
		}
	}
	slices.Reverse(hi)
	return append(lo, hi...)
}

// iroot returns ⌊m^(1/k)⌋ for m ≥ 1, k ≥ 1.
func iroot(m, k int) int {
	r := max(1, int(math.Pow(float64(m), 1/float64(k))))
	for r > 1 && (ipow(r, k) < 0 || ipow(r, k) > m) {
		r-- // the float estimate was high
	}
	for p := ipow(r+1, k); p >= 0 && p <= m; p = ipow(r+1, k) {
		r++ // or low
	}
	return r
}

// ipow returns d^n, or -1 once it passes 2^40 (only compared against a
// node count).
func ipow(d, n int) int {
	p := 1
	for range n {
		p *= d
		if p > 1<<40 {
			return -1
		}
	}
	return p
}

// CartCreate returns a communicator with a Cartesian topology of the given
// dims, periodic where periods says (MPI_Cart_create). Ranks 0…∏dims−1 of
// c join it in their order (reorder is accepted and the order kept: see
// topo.go); the other ranks get nil. No dims at all makes a grid of one
// rank. Collective over c; every rank passes the same arguments.
func (c *Comm) CartCreate(dims []int, periods []bool, reorder bool) (*Comm, error) {
	n, argErr := c.cartCheck(dims, periods)
	dims, periods = slices.Clone(dims), slices.Clone(periods)
	return c.topoCreate("cart create", argErr, c.firstRanks(n), func(rank int) *topology {
		return newCart(dims, periods, rank)
	})
}

// cartCheck validates a grid for c and returns its number of ranks.
func (c *Comm) cartCheck(dims []int, periods []bool) (int, error) {
	if len(periods) != len(dims) {
		return 0, fmt.Errorf("%d dims and %d periods: %w", len(dims), len(periods), ErrArg)
	}
	n := 1
	for i, d := range dims {
		if d <= 0 {
			return 0, fmt.Errorf("dims[%d] = %d: %w", i, d, ErrArg)
		}
		if n *= d; n > c.Size() {
			return 0, fmt.Errorf("dims %v need more than the %d ranks of the communicator: %w", dims, c.Size(), ErrArg)
		}
	}
	return n, nil
}

// newCart builds the topology of rank in a grid: its coordinates and its
// neighbors, (negative, positive) per dimension, ProcNull off the edge of
// a non-periodic dimension (MPI-4.1 §8.6).
func newCart(dims []int, periods []bool, rank int) *topology {
	t := &topology{kind: TopoCart, dims: dims, periods: periods, coords: cartCoords(dims, rank)}
	nb := make([]int, 0, 2*len(dims))
	for d := range dims {
		src, dst := t.shift(d, 1)
		nb = append(nb, src, dst)
	}
	t.nbr = coll.Neighbors{Sources: nb, Dests: nb, Cart: true}
	return t
}

func cartCoords(dims []int, rank int) []int {
	coords := make([]int, len(dims))
	for d := len(dims) - 1; d >= 0; d-- {
		coords[d], rank = rank%dims[d], rank/dims[d]
	}
	return coords
}

// rankAt returns the rank at coords, wrapping periodic dimensions, or
// ProcNull when a non-periodic coordinate is off the grid.
func (t *topology) rankAt(coords []int) int {
	r := 0
	for d, x := range coords {
		if x < 0 || x >= t.dims[d] {
			if !t.periods[d] {
				return ProcNull
			}
			x = (x%t.dims[d] + t.dims[d]) % t.dims[d]
		}
		r = r*t.dims[d] + x
	}
	return r
}

// shift returns the ranks disp steps back and forth along dimension d.
func (t *topology) shift(d, disp int) (source, dest int) {
	at := slices.Clone(t.coords)
	at[d] = t.coords[d] - disp
	source = t.rankAt(at)
	at[d] = t.coords[d] + disp
	return source, t.rankAt(at)
}

// CartdimGet returns the number of dimensions of c's grid (MPI_Cartdim_get).
func (c *Comm) CartdimGet() (int, error) {
	t, err := c.topoOf("cartdim get", TopoCart)
	if err != nil {
		return 0, err
	}
	return len(t.dims), nil
}

// CartGet returns c's grid and the calling rank's coordinates in it
// (MPI_Cart_get), as new slices.
func (c *Comm) CartGet() (dims []int, periods []bool, coords []int, err error) {
	t, err := c.topoOf("cart get", TopoCart)
	if err != nil {
		return nil, nil, nil, err
	}
	return slices.Clone(t.dims), slices.Clone(t.periods), slices.Clone(t.coords), nil
}

// CartCoords returns the coordinates of rank in c's grid (MPI_Cart_coords).
func (c *Comm) CartCoords(rank int) ([]int, error) {
	t, err := c.topoOf("cart coords", TopoCart)
	if err != nil {
		return nil, err
	}
	if rank < 0 || rank >= c.Size() {
		return nil, fmt.Errorf("cart coords on %s: rank %d: %w", c, rank, ErrRank)
	}
	return cartCoords(t.dims, rank), nil
}

// CartRank returns the rank at coords in c's grid (MPI_Cart_rank). A
// coordinate outside a periodic dimension wraps around; outside a
// non-periodic one it is ErrArg.
func (c *Comm) CartRank(coords []int) (int, error) {
	t, err := c.topoOf("cart rank", TopoCart)
	if err != nil {
		return ProcNull, err
	}
	if len(coords) != len(t.dims) {
		return ProcNull, fmt.Errorf("cart rank on %s: %d coordinates for %d dims: %w", c, len(coords), len(t.dims), ErrArg)
	}
	r := t.rankAt(coords)
	if r == ProcNull {
		return ProcNull, fmt.Errorf("cart rank on %s: coordinates %v outside the grid %v: %w", c, coords, t.dims, ErrArg)
	}
	return r, nil
}

// CartShift returns the ranks disp steps back (source) and forth (dest)
// from the calling rank along dimension dim (MPI_Cart_shift): the partners
// of a shift by Sendrecv. Off the edge of a non-periodic dimension the
// partner is ProcNull.
func (c *Comm) CartShift(dim, disp int) (source, dest int, err error) {
	t, err := c.topoOf("cart shift", TopoCart)
	if err != nil {
		return ProcNull, ProcNull, err
	}
	if dim < 0 || dim >= len(t.dims) {
		return ProcNull, ProcNull, fmt.Errorf("cart shift on %s: dimension %d of %d: %w", c, dim, len(t.dims), ErrArg)
	}
	source, dest = t.shift(dim, disp)
	return source, dest, nil
}

// CartSub splits c's grid into subgrids of the dimensions remain keeps
// (MPI_Cart_sub): ranks that share their coordinates in the dropped
// dimensions form one, with the kept dimensions' sizes and periods, in
// the grid's order. Keeping none gives each rank a grid of one.
// Collective over c.
func (c *Comm) CartSub(remain []bool) (*Comm, error) {
	t, err := c.topoOf("cart sub", TopoCart)
	if err != nil {
		return nil, err
	}
	var argErr error
	if len(remain) != len(t.dims) {
		argErr = fmt.Errorf("%d remain flags for %d dims: %w", len(remain), len(t.dims), ErrArg)
	}
	var dims []int
	var periods []bool
	if argErr == nil {
		for d, keep := range remain {
			if keep {
				dims, periods = append(dims, t.dims[d]), append(periods, t.periods[d])
			}
		}
	}
	members := func() []int {
		// the ranks whose dropped coordinates are mine, in rank order: the
		// kept coordinates then run in row-major order too
		var ranks []int
		for r := range c.Size() {
			co := cartCoords(t.dims, r)
			same := true
			for d, keep := range remain {
				same = same && (keep || co[d] == t.coords[d])
			}
			if same {
				ranks = append(ranks, r)
			}
		}
		return ranks
	}
	return c.topoCreate("cart sub", argErr, members, func(rank int) *topology {
		return newCart(dims, periods, rank)
	})
}

// CartMap returns the rank the calling rank would have in a grid of the
// given dims made with reorder (MPI_Cart_map), or Undefined if it would
// not be in it: as CartCreate keeps the order, its own rank below ∏dims.
func (c *Comm) CartMap(dims []int, periods []bool) (int, error) {
	if err := c.check(); err != nil {
		return Undefined, fmt.Errorf("cart map: %w", err)
	}
	n, err := c.cartCheck(dims, periods)
	if err != nil {
		return Undefined, fmt.Errorf("cart map on %s: %w", c, err)
	}
	if c.rank >= n {
		return Undefined, nil
	}
	return c.rank, nil
}
