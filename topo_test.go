package meshmpi

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// naiveCoords is row-major coordinates, computed the long way: count
// through the grid.
func naiveCoords(dims []int, rank int) []int {
	c := make([]int, len(dims))
	for range rank {
		for d := len(dims) - 1; d >= 0; d-- {
			if c[d]++; c[d] < dims[d] {
				break
			}
			c[d] = 0
		}
	}
	return c
}

// naiveRank searches the grid for coords, wrapped where periodic.
func naiveRank(dims []int, periods []bool, coords []int) int {
	want := slices.Clone(coords)
	for d := range want {
		if want[d] < 0 || want[d] >= dims[d] {
			if !periods[d] {
				return ProcNull
			}
			for want[d] < 0 {
				want[d] += dims[d]
			}
			want[d] %= dims[d]
		}
	}
	n := 1
	for _, d := range dims {
		n *= d
	}
	for r := range n {
		if slices.Equal(naiveCoords(dims, r), want) {
			return r
		}
	}
	return -99
}

// MPI-4.1 §8.5.2's examples, and more.
func TestDimsCreate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		n        int
		dims     []int
		want     []int
		bad      bool
		wantEach bool
	}{
		{n: 6, dims: []int{0, 0}, want: []int{3, 2}},
		{n: 7, dims: []int{0, 0}, want: []int{7, 1}},
		{n: 6, dims: []int{0, 3, 0}, want: []int{2, 3, 1}},
		{n: 7, dims: []int{0, 3, 0}, bad: true},
		{n: 1, dims: []int{0, 0, 0}, want: []int{1, 1, 1}},
		{n: 4, dims: []int{0, 0}, want: []int{2, 2}},
		{n: 8, dims: []int{0, 0, 0}, want: []int{2, 2, 2}},
		{n: 12, dims: []int{0, 0}, want: []int{4, 3}},
		{n: 16, dims: []int{0, 0, 0}, want: []int{4, 2, 2}},
		{n: 72, dims: []int{0, 0}, want: []int{9, 8}}, // greedy prime splitting gives 12×6
		{n: 5, dims: []int{0}, want: []int{5}},
		{n: 6, dims: []int{2, 3}, want: []int{2, 3}},
		{n: 6, dims: []int{2, 2}, bad: true},
		{n: 4, dims: []int{-1, 0}, bad: true},
		{n: 0, dims: []int{0}, bad: true},
		{n: 1, dims: nil, want: nil},
		{n: 2, dims: nil, bad: true},
	} {
		got, err := DimsCreate(c.n, c.dims)
		if c.bad {
			require.ErrorIs(t, err, ErrArg, "%d %v", c.n, c.dims)
			continue
		}
		require.NoError(t, err, "%d %v", c.n, c.dims)
		require.Equal(t, c.want, got, "%d %v", c.n, c.dims)
	}
	// every factorization is balanced: no product of the same size with a
	// smaller spread exists (brute force over all pairs and triples)
	for n := 1; n <= 64; n++ {
		got, err := DimsCreate(n, []int{0, 0})
		require.NoError(t, err)
		require.Equal(t, n, got[0]*got[1])
		require.GreaterOrEqual(t, got[0], got[1])
		for a := 1; a <= n; a++ {
			if n%a == 0 && a >= n/a {
				require.GreaterOrEqual(t, a-n/a, got[0]-got[1], "n=%d", n)
			}
		}
	}
}

// CartCoords, CartRank, CartShift and CartGet against the naive grid, for
// 1-, 2- and 3-D grids with 1- and 2-wide periodic dimensions and
// non-periodic edges; ranks beyond the grid get nil.
func TestCartQueries(t *testing.T) {
	for _, c := range []struct {
		size    int
		dims    []int
		periods []bool
	}{
		{1, []int{1}, []bool{true}},
		{2, []int{2}, []bool{true}},
		{3, []int{3}, []bool{false}},
		{5, []int{2, 2}, []bool{true, false}},
		{4, []int{1, 4}, []bool{true, true}},
		{8, []int{2, 2, 2}, []bool{false, true, false}},
		{8, []int{3, 1, 2}, []bool{true, false, true}},
		{3, []int{}, []bool{}},
	} {
		t.Run(fmt.Sprint(c.size, c.dims, c.periods), func(t *testing.T) {
			world(t, c.size, func(w *Comm) error {
				cart, err := w.CartCreate(c.dims, c.periods, true)
				if err != nil {
					return err
				}
				n := 1
				for _, d := range c.dims {
					n *= d
				}
				if w.Rank() >= n {
					return expect(cart == nil, "rank %d outside the grid got a communicator", w.Rank())
				}
				if cart.Rank() != w.Rank() || cart.Size() != n {
					return fmt.Errorf("rank %d of %d in the grid, want %d of %d", cart.Rank(), cart.Size(), w.Rank(), n)
				}
				if k, err := cart.TopoTest(); err != nil || k != TopoCart {
					return fmt.Errorf("topo test: %v %v", k, err)
				}
				dims, periods, coords, err := cart.CartGet()
				if err != nil || !slices.Equal(dims, c.dims) || !slices.Equal(periods, c.periods) || !slices.Equal(coords, naiveCoords(c.dims, w.Rank())) {
					return fmt.Errorf("cart get: %v %v %v %v", dims, periods, coords, err)
				}
				if nd, err := cart.CartdimGet(); err != nil || nd != len(c.dims) {
					return fmt.Errorf("cartdim get: %d %v", nd, err)
				}
				for r := range n {
					co, err := cart.CartCoords(r)
					if err != nil || !slices.Equal(co, naiveCoords(c.dims, r)) {
						return fmt.Errorf("coords of %d: %v %v", r, co, err)
					}
					if got, err := cart.CartRank(co); err != nil || got != r {
						return fmt.Errorf("rank at %v: %d %v", co, got, err)
					}
				}
				me := naiveCoords(c.dims, w.Rank())
				for d := range c.dims {
					for _, disp := range []int{-3, -2, -1, 0, 1, 2, 3} {
						src, dst, err := cart.CartShift(d, disp)
						at := slices.Clone(me)
						at[d] = me[d] - disp
						wantSrc := naiveRank(c.dims, c.periods, at)
						at[d] = me[d] + disp
						wantDst := naiveRank(c.dims, c.periods, at)
						if err != nil || src != wantSrc || dst != wantDst {
							return fmt.Errorf("shift dim %d by %d: (%d, %d) %v, want (%d, %d)", d, disp, src, dst, err, wantSrc, wantDst)
						}
						// a periodic coordinate wraps in CartRank too
						if c.periods[d] {
							if got, err := cart.CartRank(at); err != nil || got != wantDst {
								return fmt.Errorf("rank at %v: %d %v", at, got, err)
							}
						}
					}
				}
				dup, err := cart.Dup()
				if err != nil {
					return err
				}
				if k, _ := dup.TopoTest(); k != TopoCart {
					return fmt.Errorf("a duplicate lost its topology: %s", k)
				}
				return errors.Join(dup.Free(), cart.Free())
			})
		})
	}
}

// CartSub keeps the chosen dimensions: each subgrid holds the ranks that
// share the dropped coordinates, in grid order, with the kept sizes and
// periods.
func TestCartSub(t *testing.T) {
	dims, periods := []int{2, 3, 2}, []bool{true, false, true}
	for _, remain := range [][]bool{
		{true, false, false}, {false, true, false}, {true, false, true}, {true, true, true}, {false, false, false},
	} {
		t.Run(fmt.Sprint(remain), func(t *testing.T) {
			world(t, 12, func(w *Comm) error {
				cart, err := w.CartCreate(dims, periods, false)
				if err != nil {
					return err
				}
				sub, err := cart.CartSub(remain)
				if err != nil {
					return err
				}
				me := naiveCoords(dims, cart.Rank())
				var members []int // naive: every rank with my dropped coordinates
				for r := range 12 {
					co := naiveCoords(dims, r)
					same := true
					for d := range dims {
						same = same && (remain[d] || co[d] == me[d])
					}
					if same {
						members = append(members, r)
					}
				}
				var wantDims, wantCoords []int
				var wantPeriods []bool
				for d := range dims {
					if remain[d] {
						wantDims, wantPeriods, wantCoords = append(wantDims, dims[d]), append(wantPeriods, periods[d]), append(wantCoords, me[d])
					}
				}
				gd, gp, gc, err := sub.CartGet()
				if err != nil {
					return err
				}
				if sub.Size() != len(members) || sub.Rank() != slices.Index(members, cart.Rank()) ||
					len(gd) != len(wantDims) || !slices.Equal(gd, wantDims) && len(wantDims) > 0 ||
					!slices.Equal(gp, wantPeriods) && len(wantPeriods) > 0 || !slices.Equal(gc, wantCoords) && len(wantCoords) > 0 {
					return fmt.Errorf("sub: rank %d of %d, %v %v %v; want rank %d of %d, %v %v %v",
						sub.Rank(), sub.Size(), gd, gp, gc, slices.Index(members, cart.Rank()), len(members), wantDims, wantPeriods, wantCoords)
				}
				// the subgrid's ranks are the members in order: a message
				// along the kept dimensions reaches the naive neighbor
				g, err := sub.Group()
				if err != nil {
					return err
				}
				cg, err := cart.Group()
				if err != nil {
					return err
				}
				in, err := g.TranslateRanks(identityRanks(sub.Size()), cg)
				if err != nil {
					return err
				}
				return expect(slices.Equal(in, members), "sub members %v, want %v", in, members)
			})
		})
	}
}

// GraphCreate and its queries, with a self-loop and a repeated edge; ranks
// beyond the graph get nil.
func TestGraphQueries(t *testing.T) {
	index := []int{2, 5, 6, 8}
	edges := []int{1, 1, 0, 0, 2, 1, 3, 3} // 0:{1,1} 1:{0,0,2} 2:{1} 3:{3,3}
	world(t, 5, func(w *Comm) error {
		g, err := w.GraphCreate(index, edges, true)
		if err != nil {
			return err
		}
		if w.Rank() >= 4 {
			return expect(g == nil, "rank 4 outside the graph got a communicator")
		}
		if k, _ := g.TopoTest(); k != TopoGraph {
			return fmt.Errorf("topo test: %s", k)
		}
		nn, ne, err := g.GraphdimsGet()
		if err != nil || nn != 4 || ne != 8 {
			return fmt.Errorf("graphdims: %d %d %v", nn, ne, err)
		}
		gi, ge, err := g.GraphGet()
		if err != nil || !slices.Equal(gi, index) || !slices.Equal(ge, edges) {
			return fmt.Errorf("graph get: %v %v %v", gi, ge, err)
		}
		want := [][]int{{1, 1}, {0, 0, 2}, {1}, {3, 3}}
		for r := range 4 {
			nb, err := g.GraphNeighbors(r)
			cnt, err2 := g.GraphNeighborsCount(r)
			if err != nil || err2 != nil || !slices.Equal(nb, want[r]) || cnt != len(want[r]) {
				return fmt.Errorf("neighbors of %d: %v (%d) %v %v", r, nb, cnt, err, err2)
			}
		}
		if m, err := w.GraphMap(index, edges); err != nil || m != w.Rank() {
			return fmt.Errorf("graph map: %d %v", m, err)
		}
		return g.Free()
	})
}

// DistGraphCreateAdjacent and DistGraphCreate give every rank its in- and
// out-edges with weights, in MPI's order, and agree on the whole graph.
func TestDistGraphQueries(t *testing.T) {
	// the global graph, with a repeated edge 0→1 and a self-loop at 2
	edges := [][3]int{{0, 1, 5}, {1, 2, 6}, {0, 1, 7}, {2, 2, 8}, {2, 0, 9}, {3, 0, 10}, {1, 3, 11}}
	const n = 4
	// given: edge k is given by rank k mod n, so DistGraphCreate orders
	// them by giving rank, then position: 0, 4, 1, 5, 2, 6, 3
	var given []int
	for r := range n {
		for k := r; k < len(edges); k += n {
			given = append(given, k)
		}
	}
	listed := identityRanks(len(edges))
	inOut := func(r int, order []int) (src, srcW, dst, dstW []int) {
		src, srcW, dst, dstW = []int{}, []int{}, []int{}, []int{}
		for _, k := range order {
			e := edges[k]
			if e[0] == r {
				dst, dstW = append(dst, e[1]), append(dstW, e[2])
			}
			if e[1] == r {
				src, srcW = append(src, e[0]), append(srcW, e[2])
			}
		}
		return
	}
	check := func(g *Comm, r int, weighted bool, order []int) error {
		src, srcW, dst, dstW := inOut(r, order)
		in, out, wt, err := g.DistGraphNeighborsCount()
		if err != nil || in != len(src) || out != len(dst) || wt != weighted {
			return fmt.Errorf("count: %d %d %v %v", in, out, wt, err)
		}
		gs, gsw, gd, gdw, err := g.DistGraphNeighbors()
		if err != nil || !slices.Equal(gs, src) || !slices.Equal(gd, dst) {
			return fmt.Errorf("neighbors: %v %v %v, want %v %v", gs, gd, err, src, dst)
		}
		if weighted && (!slices.Equal(gsw, srcW) || !slices.Equal(gdw, dstW)) || !weighted && (gsw != nil || gdw != nil) {
			return fmt.Errorf("weights: %v %v, want %v %v (weighted %v)", gsw, gdw, srcW, dstW, weighted)
		}
		if k, _ := g.TopoTest(); k != TopoDistGraph {
			return fmt.Errorf("topo test: %s", k)
		}
		return g.Free()
	}
	world(t, n, func(w *Comm) error {
		r := w.Rank()
		for _, weighted := range []bool{false, true} {
			src, srcW, dst, dstW := inOut(r, listed)
			if !weighted {
				srcW, dstW = nil, nil
			}
			g, err := w.DistGraphCreateAdjacent(src, srcW, dst, dstW, false)
			if err != nil {
				return err
			}
			if err := check(g, r, weighted, listed); err != nil {
				return fmt.Errorf("adjacent: %w", err)
			}
			// the general form: rank k gives edges k, k+n, … of the list,
			// so every rank learns of edges others gave
			var s, deg, d, wts []int
			for i := r; i < len(edges); i += n {
				s, deg, d, wts = append(s, edges[i][0]), append(deg, 1), append(d, edges[i][1]), append(wts, edges[i][2])
			}
			if !weighted {
				wts = nil
			}
			g, err = w.DistGraphCreate(s, deg, d, wts, true)
			if err != nil {
				return err
			}
			if err := check(g, r, weighted, given); err != nil {
				return fmt.Errorf("general: %w", err)
			}
		}
		return nil
	})
}

// Misuse: wrong topology kinds, invalid grids and graphs, bad ranks, an
// inconsistent adjacency and mixed weights give errors on every rank, and
// no rank hangs on another's mistake.
func TestTopologyErrors(t *testing.T) {
	world(t, 4, func(w *Comm) error {
		r := w.Rank()
		var errs []error
		want := func(err, class error, what string) { errs = append(errs, expectErr(err, class, what)) }
		_, _, err := w.CartShift(0, 1)
		want(err, ErrTopology, "shift on the world")
		_, err = w.GraphNeighbors(0)
		want(err, ErrTopology, "graph neighbors on the world")
		_, _, _, err = w.DistGraphNeighborsCount()
		want(err, ErrTopology, "dist graph count on the world")
		_, err = w.CartCreate([]int{3, 2}, []bool{true, true}, false)
		want(err, ErrArg, "a grid larger than the group")
		_, err = w.CartCreate([]int{2, 0}, []bool{true, true}, false)
		want(err, ErrArg, "a zero dimension")
		_, err = w.CartCreate([]int{2}, []bool{true, true}, false)
		want(err, ErrArg, "periods of another length")
		// one rank's bad grid fails every rank
		dims := []int{2, 2}
		if r == 3 {
			dims = []int{2, -2}
		}
		_, err = w.CartCreate(dims, []bool{false, false}, false)
		want(err, ErrArg, "one rank's bad grid")
		cart, err := w.CartCreate([]int{2, 2}, []bool{false, true}, false)
		if err != nil {
			return err
		}
		_, _, err = cart.CartShift(2, 1)
		want(err, ErrArg, "shift along a missing dimension")
		_, err = cart.CartRank([]int{2, 0})
		want(err, ErrArg, "off a non-periodic edge")
		_, err = cart.CartRank([]int{0})
		want(err, ErrArg, "too few coordinates")
		_, err = cart.CartCoords(4)
		want(err, ErrRank, "coords of a rank outside")
		_, err = cart.GraphNeighbors(0)
		want(err, ErrTopology, "graph query on a grid")
		_, err = cart.CartSub([]bool{true})
		want(err, ErrArg, "sub with too few flags")
		_, err = w.GraphCreate([]int{1, 3}, []int{1, 0}, false)
		want(err, ErrArg, "index past the edges")
		_, err = w.GraphCreate([]int{1, 2}, []int{1, 5}, false)
		want(err, ErrRank, "an edge to a missing node")
		_, err = w.GraphCreate([]int{1, 2, 3, 4, 5}, []int{1, 2, 3, 4, 0}, false)
		want(err, ErrArg, "more nodes than ranks")
		_, err = w.DistGraphCreateAdjacent([]int{(r + 1) % 4}, nil, []int{(r + 1) % 4}, nil, false)
		want(err, ErrTopology, "an inconsistent adjacency")
		_, err = w.DistGraphCreateAdjacent([]int{9}, nil, nil, nil, false)
		want(err, ErrRank, "a source outside")
		var wts []int
		if r == 0 {
			wts = []int{1}
		}
		_, err = w.DistGraphCreate([]int{r}, []int{1}, []int{r}, wts, false)
		want(err, ErrArg, "mixed weights")
		_, err = w.DistGraphCreate([]int{r}, []int{2}, []int{r}, nil, false)
		want(err, ErrArg, "degrees past the destinations")
		_, err = DimsCreate(-1, nil)
		want(err, ErrArg, "negative nodes")
		err = NeighborAlltoall(w, []int{1}, []int{1})
		want(err, ErrTopology, "neighborhood collective without a topology")
		return errors.Join(errs...)
	})
}
