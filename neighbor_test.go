package meshmpi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/meshmpi/meshmpi/coll"
)

// topoSpec is a test topology over a world of n ranks: how to make it and,
// computed naively from its definition, every rank's neighbors and where
// each receive block's data comes from.
type topoSpec struct {
	name   string
	n      int // ranks in the topology (≤ world size)
	make   func(w *Comm) (*Comm, error)
	src    [][]int    // src[r]: in-neighbors in receive-block order (ProcNull: none)
	dst    [][]int    // dst[r]: out-neighbors in send-block order
	origin [][][2]int // origin[r][i]: (sender, its send block) of r's receive block i
}

// cartSpec: neighbors by walking the naive grid; by MPI-4.1 Example 8.10
// block 2d+s receives what the neighbor sent in block 2d+(1−s).
func cartSpec(dims []int, periods []bool) topoSpec {
	n := 1
	for _, d := range dims {
		n *= d
	}
	s := topoSpec{name: fmt.Sprintf("cart%v%v", dims, periods), n: n,
		make: func(w *Comm) (*Comm, error) { return w.CartCreate(dims, periods, true) }}
	for r := range n {
		var nb []int
		var or [][2]int
		for d := range dims {
			for _, dir := range []int{-1, 1} {
				at := naiveCoords(dims, r)
				at[d] += dir
				p := naiveRank(dims, periods, at)
				nb = append(nb, p)
				or = append(or, [2]int{p, len(nb) - 1 ^ 1})
			}
		}
		s.src, s.dst, s.origin = append(s.src, nb), append(s.dst, nb), append(s.origin, or)
	}
	return s
}

// edgeSpec is a directed multigraph given as a list: the k-th edge u→v is
// the k-th in u's destinations and in v's sources. make builds the
// communicator from the same lists.
func edgeSpec(name string, n int, edges [][2]int, build func(w *Comm, src, dst []int) (*Comm, error)) topoSpec {
	s := topoSpec{name: name, n: n, src: make2(n), dst: make2(n), origin: make([][][2]int, n)}
	for _, e := range edges {
		s.origin[e[1]] = append(s.origin[e[1]], [2]int{e[0], len(s.dst[e[0]])})
		s.dst[e[0]] = append(s.dst[e[0]], e[1])
		s.src[e[1]] = append(s.src[e[1]], e[0])
	}
	s.make = func(w *Comm) (*Comm, error) {
		if w.Rank() >= n {
			return build(w, nil, nil)
		}
		return build(w, s.src[w.Rank()], s.dst[w.Rank()])
	}
	return s
}

func make2(n int) [][]int {
	out := make([][]int, n)
	for i := range out {
		out[i] = []int{}
	}
	return out
}

// specs returns the topologies swept for a world of n ranks: Cartesian
// 1-, 2- and 3-D, periodic and not (DimsCreate's grids, so 2-wide and
// 1-wide periodic dimensions appear); a symmetric graph with a repeated
// edge and a self-loop; distributed graphs with asymmetric and repeated
// edges, in both constructors.
func specs(n int) []topoSpec {
	var ss []topoSpec
	for _, nd := range []int{1, 2, 3} {
		dims, _ := DimsCreate(n, make([]int, nd))
		for _, per := range []bool{true, false} {
			periods := make([]bool, nd)
			for d := range periods {
				periods[d] = per || d == 0 // "not periodic" keeps dimension 0 periodic: a mixed grid
			}
			if nd == 1 {
				periods[0] = per
			}
			ss = append(ss, cartSpec(dims, periods))
		}
	}
	// symmetric graph: a ring, the edge 0–1 twice, a self-loop at n-1
	var ring [][2]int
	for r := range n {
		if n > 1 {
			ring = append(ring, [2]int{r, (r + 1) % n}, [2]int{(r + 1) % n, r})
		}
	}
	ring = append(ring, [2]int{0, 1 % n}, [2]int{1 % n, 0}, [2]int{n - 1, n - 1})
	graph := edgeSpec("graph", n, ring, nil)
	graph.make = func(w *Comm) (*Comm, error) {
		// GraphCreate takes each rank's neighbor list; the graph is
		// symmetric, so sources and destinations are the same multiset,
		// and the collectives pair them by list order
		var index, edges []int
		for r := range n {
			edges = append(edges, graph.dst[r]...)
			index = append(index, len(edges))
		}
		return w.GraphCreate(index, edges, false)
	}
	// GraphCreate uses one list both ways: rebuild src and origin from dst
	graph.src = graph.dst
	graph.origin = make([][][2]int, n)
	for r := range n {
		seen := map[int]int{}
		for _, p := range graph.src[r] {
			k := seen[p] // the k-th time p is my neighbor: p's k-th listing of me
			seen[p]++
			j := -1
			for idx, q := range graph.dst[p] {
				if q == r {
					if k == 0 {
						j = idx
						break
					}
					k--
				}
			}
			graph.origin[r] = append(graph.origin[r], [2]int{p, j})
		}
	}
	ss = append(ss, graph)
	// asymmetric multigraph: r→r+1, r→r+2, 0→1 twice more, a self-loop at 0
	var dg [][2]int
	for r := range n {
		dg = append(dg, [2]int{r, (r + 1) % n}, [2]int{r, (r + 2) % n})
	}
	dg = append(dg, [2]int{0, 1 % n}, [2]int{0, 0}, [2]int{0, 1 % n})
	ss = append(ss, edgeSpec("distgraph-adjacent", n, dg, func(w *Comm, src, dst []int) (*Comm, error) {
		return w.DistGraphCreateAdjacent(src, nil, dst, nil, false)
	}))
	// the general constructor: rank r gives the edges k ≡ r (mod n), so
	// the agreed order is by giving rank: reorder the list the same way
	var byGiver [][2]int
	for r := range n {
		for k := r; k < len(dg); k += n {
			byGiver = append(byGiver, dg[k])
		}
	}
	general := edgeSpec("distgraph", n, byGiver, nil)
	general.make = func(w *Comm) (*Comm, error) {
		var s, deg, d, wts []int
		for k := w.Rank(); k < len(dg); k += n {
			s, deg, d, wts = append(s, dg[k][0]), append(deg, 1), append(d, dg[k][1]), append(wts, k)
		}
		return w.DistGraphCreate(s, deg, d, wts, true)
	}
	ss = append(ss, general)
	return ss
}

// edgeCount is the deterministic, uneven (zero included) count of the
// v-forms for a message: a function of its sender and send block, which
// the receiver knows through origin.
func edgeCount(sender, block, seed int) int { return (sender*5 + block*3 + seed) % 4 }

// allgathervCount is a sender's count in NeighborAllgatherv.
func allgathervCount(sender, seed int) int { return 1 + (sender+seed)%3 }

func val(rank, seed, block, e int) int64 {
	return int64(rank)<<40 | int64(seed)<<32 | int64(block)<<16 | int64(e)
}

// nbrCall is one rank's call of one neighborhood collective: buffers,
// layout and the expected receive buffer, computed naively.
type nbrCall struct {
	send, recv, want []int64
	scounts, sdispls []int
	rcounts, rdispls []int
	count            int
}

func newNbrCall(k coll.Coll, s topoSpec, r, seed, count int) nbrCall {
	in, out := len(s.src[r]), len(s.dst[r])
	var c nbrCall
	c.count = count
	// sendOf returns sender p's data for its send block j
	sendOf := func(p, j int) []int64 {
		var n int
		switch k {
		case coll.NeighborAllgather:
			n, j = count, 0
		case coll.NeighborAllgatherv:
			n, j = allgathervCount(p, seed), 0
		case coll.NeighborAlltoall:
			n = count
		case coll.NeighborAlltoallv:
			n = edgeCount(p, j, seed)
		}
		b := make([]int64, n)
		for e := range b {
			b[e] = val(p, seed, j, e)
		}
		return b
	}
	switch k {
	case coll.NeighborAllgather, coll.NeighborAllgatherv:
		c.send = sendOf(r, 0)
	case coll.NeighborAlltoall:
		for j := range out {
			c.send = append(c.send, sendOf(r, j)...)
		}
	case coll.NeighborAlltoallv:
		for j := range out {
			c.sdispls = append(c.sdispls, len(c.send))
			c.scounts = append(c.scounts, edgeCount(r, j, seed))
			c.send = append(c.send, sendOf(r, j)...)
			c.send = append(c.send, -7) // a gap
		}
	}
	// receive layout: fixed blocks, or a block per source with a gap before it
	var blocks [][2]int // offset, length
	off := 0
	for _, o := range s.origin[r] {
		n := count
		switch k {
		case coll.NeighborAllgatherv:
			n = 0
			if o[0] >= 0 {
				n = allgathervCount(o[0], seed)
			}
			off++
		case coll.NeighborAlltoallv:
			n = 0
			if o[0] >= 0 {
				n = edgeCount(o[0], o[1], seed)
			}
			off++
		}
		blocks = append(blocks, [2]int{off, n})
		c.rcounts, c.rdispls = append(c.rcounts, n), append(c.rdispls, off)
		off += n
	}
	c.recv = make([]int64, off+1)
	for e := range c.recv {
		c.recv[e] = -int64(1000*r + e) // prior contents, kept where nothing lands
	}
	c.want = slices.Clone(c.recv)
	for i, o := range s.origin[r] {
		if o[0] >= 0 {
			copy(c.want[blocks[i][0]:], sendOf(o[0], o[1]))
		}
	}
	if in == 0 && k != coll.NeighborAllgatherv && k != coll.NeighborAlltoallv {
		c.rcounts, c.rdispls = nil, nil
	}
	return c
}

// invokeNeighbor calls collective k in the given form.
func invokeNeighbor(form collForm, k coll.Coll, c *Comm, x *nbrCall, hs ...Hint) (*Request, error) {
	pick := func(b func() error, i, p func() (*Request, error)) (*Request, error) {
		return formCall(form, b, i, p)
	}
	switch k {
	case coll.NeighborAllgather:
		return pick(func() error { return NeighborAllgather(c, x.send, x.recv, hs...) },
			func() (*Request, error) { return IneighborAllgather(c, x.send, x.recv, hs...) },
			func() (*Request, error) { return NeighborAllgatherInit(c, x.send, x.recv, hs...) })
	case coll.NeighborAllgatherv:
		return pick(func() error { return NeighborAllgatherv(c, x.send, x.recv, x.rcounts, x.rdispls, hs...) },
			func() (*Request, error) { return IneighborAllgatherv(c, x.send, x.recv, x.rcounts, x.rdispls, hs...) },
			func() (*Request, error) {
				return NeighborAllgathervInit(c, x.send, x.recv, x.rcounts, x.rdispls, hs...)
			})
	case coll.NeighborAlltoall:
		return pick(func() error { return NeighborAlltoall(c, x.send, x.recv, hs...) },
			func() (*Request, error) { return IneighborAlltoall(c, x.send, x.recv, hs...) },
			func() (*Request, error) { return NeighborAlltoallInit(c, x.send, x.recv, hs...) })
	case coll.NeighborAlltoallv:
		return pick(func() error {
			return NeighborAlltoallv(c, x.send, x.scounts, x.sdispls, x.recv, x.rcounts, x.rdispls, hs...)
		}, func() (*Request, error) {
			return IneighborAlltoallv(c, x.send, x.scounts, x.sdispls, x.recv, x.rcounts, x.rdispls, hs...)
		}, func() (*Request, error) {
			return NeighborAlltoallvInit(c, x.send, x.scounts, x.sdispls, x.recv, x.rcounts, x.rdispls, hs...)
		})
	}
	return nil, fmt.Errorf("no neighborhood collective %s", k)
}

var neighborColls = []coll.Coll{coll.NeighborAllgather, coll.NeighborAllgatherv, coll.NeighborAlltoall, coll.NeighborAlltoallv}

// runNeighbor runs collective k on topo in one form and checks every
// receive buffer against the naive reference; a persistent request is
// started 4 times, its buffers refilled with new inputs (the v-forms'
// layouts stay those of Init) before each start.
func runNeighbor(form collForm, k coll.Coll, topo *Comm, s topoSpec, count int, hs ...Hint) error {
	r := topo.Rank()
	x := newNbrCall(k, s, r, 1, count)
	req, err := invokeNeighbor(form, k, topo, &x, hs...)
	if err != nil {
		return err
	}
	switch form {
	case blocking:
		return expect(slices.Equal(x.recv, x.want), "receive buffer %v, want %v", x.recv, x.want)
	case nonblocking:
		if _, err := req.Wait(context.Background()); err != nil {
			return err
		}
		return expect(slices.Equal(x.recv, x.want), "receive buffer %v, want %v", x.recv, x.want)
	}
	for start := range 4 {
		if start > 0 {
			// new inputs: same layout, other values (seed only changes values
			// for the fixed-size forms; the v-forms keep seed 1's counts)
			y := newNbrCall(k, s, r, 1, count)
			for e := range y.send {
				if y.send[e] != -7 {
					y.send[e] += int64(start) << 56
				}
			}
			for i, o := range s.origin[r] {
				if o[0] >= 0 {
					for e := range x.rcountsOrBlock(i) {
						y.want[x.offset(i)+e] += int64(start) << 56
					}
				}
			}
			copy(x.send, y.send)
			copy(x.recv, y.recv)
			x.want = y.want
		}
		if err := req.Start(); err != nil {
			return err
		}
		if _, err := req.Wait(context.Background()); err != nil {
			return err
		}
		if !slices.Equal(x.recv, x.want) {
			return fmt.Errorf("start %d: receive buffer %v, want %v", start, x.recv, x.want)
		}
	}
	return req.Free()
}

// rcountsOrBlock is the length of receive block i.
func (x *nbrCall) rcountsOrBlock(i int) int {
	if x.rcounts != nil {
		return x.rcounts[i]
	}
	return x.count
}

// offset is where receive block i starts.
func (x *nbrCall) offset(i int) int {
	if x.rdispls != nil {
		return x.rdispls[i]
	}
	return i * x.count
}

// Every neighborhood collective × form × topology × group size against
// the naive reference.
func TestNeighborCollectives(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4, 5, 8} {
		for _, s := range specs(n) {
			t.Run(fmt.Sprintf("n=%d/%s", n, s.name), func(t *testing.T) {
				world(t, n, func(w *Comm) error {
					topo, err := s.make(w)
					if err != nil || topo == nil {
						return errors.Join(err, expect(w.Rank() >= s.n, "rank %d got no communicator", w.Rank()))
					}
					var errs []error
					for _, k := range neighborColls {
						for _, f := range forms {
							for _, count := range []int{0, 3} {
								if err := runNeighbor(f.form, k, topo, s, count); err != nil {
									errs = append(errs, fmt.Errorf("%s %s count %d: rank %d: %w", k, f.name, count, topo.Rank(), err))
								}
							}
						}
					}
					// a segmented run: every message in 8-byte pieces
					if err := runNeighbor(nonblocking, coll.NeighborAlltoall, topo, s, 5, Segment(8)); err != nil {
						errs = append(errs, fmt.Errorf("segmented: %w", err))
					}
					return errors.Join(append(errs, topo.Free())...)
				})
			})
		}
	}
}

// The topology queries give the neighbors the collectives use: CartShift
// by 1 per dimension, GraphNeighbors, DistGraphNeighbors.
func TestNeighborQueriesMatchSpecs(t *testing.T) {
	world(t, 5, func(w *Comm) error {
		for _, s := range specs(5) {
			topo, err := s.make(w)
			if err != nil {
				return err
			}
			if topo == nil {
				continue
			}
			r := topo.Rank()
			var src, dst []int
			switch k, _ := topo.TopoTest(); k {
			case TopoCart:
				nd, _ := topo.CartdimGet()
				for d := range nd {
					a, b, err := topo.CartShift(d, 1)
					if err != nil {
						return err
					}
					src = append(src, a, b)
				}
				dst = src
			case TopoGraph:
				src, err = topo.GraphNeighbors(r)
				dst = src
			case TopoDistGraph:
				src, _, dst, _, err = topo.DistGraphNeighbors()
			}
			if err != nil {
				return err
			}
			if !slices.Equal(src, s.src[r]) || !slices.Equal(dst, s.dst[r]) {
				return fmt.Errorf("%s rank %d: neighbors %v → %v, want %v → %v", s.name, r, src, dst, s.src[r], s.dst[r])
			}
			if err := topo.Free(); err != nil {
				return err
			}
		}
		return nil
	})
}

// Misuse of the neighborhood collectives: in place, counts that do not
// fit the degrees, a buffer too small, an asymmetric graph; every rank
// fails and none hangs.
func TestNeighborErrors(t *testing.T) {
	world(t, 4, func(w *Comm) error {
		cart, err := w.CartCreate([]int{4}, []bool{true}, false)
		if err != nil {
			return err
		}
		var errs []error
		want := func(err, class error, what string) { errs = append(errs, expectErr(err, class, what)) }
		want(NeighborAlltoall(cart, InPlace[int64](), make([]int64, 2)), ErrBuffer, "in place")
		want(NeighborAllgather(cart, InPlace[int64](), make([]int64, 2)), ErrBuffer, "in place allgather")
		want(NeighborAlltoall(cart, make([]int64, 3), make([]int64, 4)), ErrCount, "3 elements for 2 neighbors")
		want(NeighborAlltoall(cart, make([]int64, 4), make([]int64, 3)), ErrCount, "receive buffer too small")
		want(NeighborAllgather(cart, make([]int64, 2), make([]int64, 3)), ErrCount, "allgather receive buffer too small")
		want(NeighborAllgatherv(cart, make([]int64, 1), make([]int64, 3), []int{1}, []int{0}), ErrCount, "one count for two neighbors")
		want(NeighborAlltoallv(cart, make([]int64, 2), []int{1, 1}, []int{0, 1}, make([]int64, 2), []int{1, -1}, []int{0, 1}), ErrCount, "a negative count")
		want(NeighborAlltoallv(cart, make([]int64, 2), []int{1, 1}, []int{0, 1}, make([]int64, 1), []int{1, 1}, []int{0, 1}), ErrCount, "a receive block past the buffer")
		// ranks disagree on the count: a mismatch, reported everywhere
		// (rank 2, whose neighbors 1 and 3 agree with it, may finish first)
		n := 1
		if cart.Rank() == 0 {
			n = 2
		}
		err = NeighborAlltoall(cart, make([]int64, 2*n), make([]int64, 2*n))
		finishedFirst := cart.Rank() == 2 && err == nil
		if !finishedFirst {
			want(err, ErrArg, "counts differ across ranks")
		}
		// a rank that finished first learns of the mismatch from the others'
		// notices and fails its next collective on cart instead, and the
		// others with it (collcontrol.go). A message on w from every rank
		// follows each rank's notice on its link, so once it has arrived
		// that next collective is the Barrier below, not a later one.
		if err := hearFromAll(w); err != nil {
			return err
		}
		if err := Barrier(cart); err != nil || finishedFirst {
			want(err, ErrArg, "the collective after a mismatch a rank finished first")
		}
		// a graph whose edge 0→1 has no way back cannot run neighborhood collectives
		g, err := w.GraphCreate([]int{1, 2, 3, 4}, []int{1, 2, 3, 0}, false)
		if err != nil {
			return err
		}
		want(NeighborAllgather(g, make([]int64, 1), make([]int64, 1)), ErrTopology, "asymmetric graph")
		// the communicator still works after all that
		if err := runNeighbor(blocking, coll.NeighborAlltoall, cart, cartSpec([]int{4}, []bool{true}), 2); err != nil {
			errs = append(errs, fmt.Errorf("after the errors: %w", err))
		}
		return errors.Join(append(errs, g.Free(), cart.Free())...)
	})
}

// hearFromAll receives a message from every other rank of c: whatever
// each sent this rank before it (on any context of the same link) has
// been delivered when it returns.
func hearFromAll(c *Comm) error {
	var reqs []*Request
	bufs := make([][]byte, c.Size())
	for r := range c.Size() {
		if r == c.Rank() {
			continue
		}
		bufs[r] = make([]byte, 1)
		rr, err := Irecv(c, bufs[r], r, 77)
		if err != nil {
			return err
		}
		sr, err := Isend(c, []byte{1}, r, 77)
		if err != nil {
			return err
		}
		reqs = append(reqs, rr, sr)
	}
	return Waitall(context.Background(), reqs, nil)
}
