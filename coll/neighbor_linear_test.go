package coll_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/meshmpi/meshmpi/coll"
	"github.com/meshmpi/meshmpi/coll/colltest"
	"github.com/meshmpi/meshmpi/op"
)

// nbrTopo is a test topology: every rank's neighborhood and, for the
// reference, where each receive block's data comes from.
type nbrTopo struct {
	name string
	n    int
	nbrs []coll.Neighbors
	// origin[r][i] is (sender, send block) of rank r's receive block i, or
	// sender -1 for a block nothing arrives in
	origin [][][2]int
}

// cartTopo is a Cartesian grid computed naively: row-major coordinates,
// neighbors (−, +) per dimension, and, by MPI-4.1 Example 8.10, receive
// block 2d+s filled by the neighbor's send block 2d+(1−s).
func cartTopo(dims []int, periods []bool) nbrTopo {
	n := 1
	for _, d := range dims {
		n *= d
	}
	t := nbrTopo{name: fmt.Sprintf("cart%v%v", dims, periods), n: n}
	coords := func(r int) []int {
		c := make([]int, len(dims))
		for d := len(dims) - 1; d >= 0; d-- {
			c[d], r = r%dims[d], r/dims[d]
		}
		return c
	}
	rank := func(c []int) int {
		r := 0
		for d := range dims {
			r = r*dims[d] + c[d]
		}
		return r
	}
	for r := range n {
		var nb []int
		for d := range dims {
			for _, dir := range []int{-1, 1} {
				c := coords(r)
				c[d] += dir
				switch {
				case c[d] >= 0 && c[d] < dims[d]:
					nb = append(nb, rank(c))
				case periods[d]:
					c[d] = (c[d] + dims[d]) % dims[d]
					nb = append(nb, rank(c))
				default:
					nb = append(nb, -1)
				}
			}
		}
		t.nbrs = append(t.nbrs, coll.Neighbors{Sources: nb, Dests: nb, Cart: true})
		var or [][2]int
		for i, s := range nb {
			or = append(or, [2]int{s, i ^ 1})
		}
		t.origin = append(t.origin, or)
	}
	return t
}

// graphTopo is a (multi)graph from a list of directed edges: a rank's
// destinations and sources are its out- and in-edges in list order, and
// the k-th edge u→v is the k-th in both u's destinations and v's sources.
func graphTopo(name string, n int, edges [][2]int) nbrTopo {
	t := nbrTopo{name: name, n: n, nbrs: make([]coll.Neighbors, n), origin: make([][][2]int, n)}
	for _, e := range edges {
		u, v := e[0], e[1]
		j := len(t.nbrs[u].Dests)
		t.nbrs[u].Dests = append(t.nbrs[u].Dests, v)
		t.nbrs[v].Sources = append(t.nbrs[v].Sources, u)
		t.origin[v] = append(t.origin[v], [2]int{u, j})
	}
	return t
}

func nbrTopos() []nbrTopo {
	ts := []nbrTopo{
		cartTopo([]int{1}, []bool{true}),
		cartTopo([]int{1}, []bool{false}),
		cartTopo([]int{2}, []bool{true}),
		cartTopo([]int{2}, []bool{false}),
		cartTopo([]int{3}, []bool{true}),
		cartTopo([]int{5}, []bool{false}),
		cartTopo([]int{2, 2}, []bool{true, true}),
		cartTopo([]int{2, 3}, []bool{true, false}),
		cartTopo([]int{1, 4}, []bool{true, true}),
		cartTopo([]int{2, 2, 2}, []bool{true, false, true}),
		cartTopo([]int{1, 2, 1}, []bool{true, true, false}),
		// asymmetric, with repeated edges and self-loops
		graphTopo("digraph", 4, [][2]int{{0, 1}, {1, 2}, {0, 1}, {3, 3}, {2, 0}, {1, 1}, {3, 0}, {0, 1}, {3, 3}}),
		// symmetric graph with a repeated undirected edge
		graphTopo("graph", 3, [][2]int{{0, 1}, {1, 0}, {1, 2}, {2, 1}, {0, 1}, {1, 0}}),
		graphTopo("empty", 3, nil),
	}
	return ts
}

// nbrArgs lays out every rank's call: blocks of count elements, or for the
// v-forms a count per edge (zeros included) and a gap before every block.
func nbrArgs(k coll.Coll, t nbrTopo, count, segment int) []coll.Args {
	edgeCount := func(s, j int) int { return (s*5 + j*3 + count) % 4 }
	args := make([]coll.Args, t.n)
	for r := range t.n {
		nb := &t.nbrs[r]
		a := coll.Args{Coll: k, Rank: r, Size: t.n, Count: count, ElemSize: 8, Type: op.Int64, Segment: segment, Nbr: nb}
		switch k {
		case coll.NeighborAllgatherv:
			a.Count = count + r%3
			a.Counts, a.Displs = make([]int, len(nb.Sources)), make([]int, len(nb.Sources))
			off := 0
			for i, s := range nb.Sources {
				if s >= 0 {
					a.Counts[i] = count + s%3
				}
				a.Displs[i] = off + 1
				off += a.Counts[i] + 1
			}
		case coll.NeighborAlltoallv:
			a.Counts, a.Displs = make([]int, len(nb.Sources)), make([]int, len(nb.Sources))
			a.SendCounts, a.SendDispls = make([]int, len(nb.Dests)), make([]int, len(nb.Dests))
			off := 0
			for i := range nb.Sources {
				if o := t.origin[r][i]; o[0] >= 0 {
					a.Counts[i] = edgeCount(o[0], o[1])
				}
				a.Displs[i] = off + 1
				off += a.Counts[i] + 1
			}
			off = 0
			for j := range nb.Dests {
				a.SendCounts[j], a.SendDispls[j] = edgeCount(r, j), off
				off += a.SendCounts[j] + 2
			}
		}
		args[r] = a
	}
	return args
}

// nbrBuffers returns buffers with contents unique per (rank, seed, byte):
// the receive buffer's prior contents must survive wherever nothing lands.
func nbrBuffers(a coll.Args, seed int) (send, recv []byte) {
	in, out := len(a.Nbr.Sources), len(a.Nbr.Dests)
	var sn, rn int
	switch a.Coll {
	case coll.NeighborAllgather:
		sn, rn = a.Count, in*a.Count
	case coll.NeighborAllgatherv:
		sn = a.Count
		for i := range in {
			rn = max(rn, a.Displs[i]+a.Counts[i])
		}
	case coll.NeighborAlltoall:
		sn, rn = out*a.Count, in*a.Count
	case coll.NeighborAlltoallv:
		for j := range out {
			sn = max(sn, a.SendDispls[j]+a.SendCounts[j])
		}
		for i := range in {
			rn = max(rn, a.Displs[i]+a.Counts[i])
		}
	}
	fill := func(n, which int) []byte {
		b := make([]byte, 8*n)
		for e := range n {
			binary.LittleEndian.PutUint64(b[8*e:], uint64(a.Rank)<<40|uint64(seed)<<24|uint64(which)<<20|uint64(e))
		}
		return b
	}
	return fill(sn, 1), fill(rn, 2)
}

// nbrReference computes every receive buffer naively from the origins.
func nbrReference(args []coll.Args, t nbrTopo, send, recv [][]byte) [][]byte {
	out := make([][]byte, len(args))
	for r, a := range args {
		out[r] = bytes.Clone(recv[r])
		for i, o := range t.origin[r] {
			s, j := o[0], o[1]
			if s < 0 {
				continue
			}
			sa := args[s]
			var src []byte
			switch a.Coll {
			case coll.NeighborAllgather:
				src = send[s][:8*sa.Count]
				copy(out[r][8*i*a.Count:], src)
			case coll.NeighborAllgatherv:
				copy(out[r][8*a.Displs[i]:], send[s][:8*sa.Count])
			case coll.NeighborAlltoall:
				copy(out[r][8*i*a.Count:], send[s][8*j*sa.Count:8*(j+1)*sa.Count])
			case coll.NeighborAlltoallv:
				off := 8 * sa.SendDispls[j]
				copy(out[r][8*a.Displs[i]:], send[s][off:off+8*sa.SendCounts[j]])
			}
		}
	}
	return out
}

var nbrColls = []coll.Coll{coll.NeighborAllgather, coll.NeighborAllgatherv, coll.NeighborAlltoall, coll.NeighborAlltoallv}

// Every neighborhood collective on every test topology, against the naive
// reference, with the plans verified statically (matching, races).
func TestNeighborLinear(t *testing.T) {
	t.Parallel()
	for _, k := range nbrColls {
		alg := coll.Algorithms(k)[0]
		for _, topo := range nbrTopos() {
			for _, c := range []struct{ count, segment int }{{0, 0}, {1, 0}, {3, 0}, {5, 16}} {
				name := fmt.Sprintf("%s/%s/count=%d/seg=%d", k, topo.name, c.count, c.segment)
				args := nbrArgs(k, topo, c.count, c.segment)
				if _, err := colltest.CheckStatic(alg, args); err != nil && !zeroMessages(args) {
					t.Fatalf("%s: %v", name, err)
				}
				for r := range args {
					p, err := coll.Build(alg, &args[r])
					if err != nil {
						t.Fatalf("%s: rank %d: %v", name, r, err)
					}
					if err := colltest.Hazards(p); err != nil {
						t.Fatalf("%s: rank %d: %v", name, r, err)
					}
				}
				send, recv := make([][]byte, topo.n), make([][]byte, topo.n)
				for r := range args {
					send[r], recv[r] = nbrBuffers(args[r], 3)
				}
				want := nbrReference(args, topo, send, recv)
				if err := colltest.Exec(alg, args, send, recv); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				for r := range recv {
					if !bytes.Equal(recv[r], want[r]) {
						t.Fatalf("%s: rank %d receive buffer differs from the reference", name, r)
					}
				}
			}
		}
	}
}

// zeroMessages reports calls that send empty messages, which
// colltest.Segments (assuming both sides skip them) rejects: neighborhood
// collectives send them so a count mismatch cannot hang.
func zeroMessages(args []coll.Args) bool {
	for _, a := range args {
		if a.Count == 0 || a.Counts != nil || a.SendCounts != nil {
			return true
		}
	}
	return false
}

// A repeated neighbor is matched in MPI's order: in a periodic ring of 2
// the block a rank sends in the negative direction arrives in the
// positive-direction block of the other, and vice versa; a ring of 1 does
// the same with itself.
func TestNeighborCartPairs(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 2} {
		topo := cartTopo([]int{n}, []bool{true})
		args := nbrArgs(coll.NeighborAlltoall, topo, 1, 0)
		send, recv := make([][]byte, n), make([][]byte, n)
		for r := range n {
			send[r] = binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, uint64(10*r)), uint64(10*r+1))
			recv[r] = make([]byte, 16)
		}
		if err := colltest.Exec(coll.Algorithms(coll.NeighborAlltoall)[0], args, send, recv); err != nil {
			t.Fatal(err)
		}
		for r := range n {
			other := (r + 1) % n
			neg, pos := binary.LittleEndian.Uint64(recv[r]), binary.LittleEndian.Uint64(recv[r][8:])
			// from the negative side comes what the neighbor sent in the positive direction
			if neg != uint64(10*other+1) || pos != uint64(10*other) {
				t.Fatalf("ring of %d, rank %d: got (%d, %d), want (%d, %d)", n, r, neg, pos, 10*other+1, 10*other)
			}
		}
	}
}

// Plans the engine cannot build: no neighborhood, in place, a neighbor
// outside the group, unbalanced self-loops, bad v layouts.
func TestNeighborLinearErrors(t *testing.T) {
	t.Parallel()
	alg := coll.Algorithms(coll.NeighborAlltoallv)[0]
	ring := coll.Neighbors{Sources: []int{1}, Dests: []int{1}}
	for _, c := range []struct {
		name string
		a    coll.Args
	}{
		{"no neighborhood", coll.Args{Coll: coll.NeighborAlltoallv, Size: 2, ElemSize: 8}},
		{"in place", coll.Args{Coll: coll.NeighborAlltoallv, Size: 2, ElemSize: 8, InPlace: true, Nbr: &ring}},
		{"outside", coll.Args{Coll: coll.NeighborAlltoallv, Size: 1, ElemSize: 8, Nbr: &ring, Counts: []int{1}, Displs: []int{0}, SendCounts: []int{1}, SendDispls: []int{0}}},
		{"self unbalanced", coll.Args{Coll: coll.NeighborAlltoallv, Size: 1, ElemSize: 8, Nbr: &coll.Neighbors{Sources: []int{0, 0}, Dests: []int{0}},
			Counts: []int{1, 1}, Displs: []int{0, 1}, SendCounts: []int{1}, SendDispls: []int{0}}},
		{"counts", coll.Args{Coll: coll.NeighborAlltoallv, Size: 2, ElemSize: 8, Nbr: &ring, Counts: []int{1, 1}, Displs: []int{0}, SendCounts: []int{1}, SendDispls: []int{0}}},
		{"negative", coll.Args{Coll: coll.NeighborAlltoallv, Size: 2, ElemSize: 8, Nbr: &ring, Counts: []int{-1}, Displs: []int{0}, SendCounts: []int{1}, SendDispls: []int{0}}},
		{"self sizes", coll.Args{Coll: coll.NeighborAlltoallv, Size: 1, ElemSize: 8, Nbr: &coll.Neighbors{Sources: []int{0}, Dests: []int{0}},
			Counts: []int{2}, Displs: []int{0}, SendCounts: []int{1}, SendDispls: []int{0}}},
		{"odd cart", coll.Args{Coll: coll.NeighborAlltoallv, Size: 2, ElemSize: 8, Nbr: &coll.Neighbors{Sources: []int{1}, Dests: []int{1}, Cart: true},
			Counts: []int{1}, Displs: []int{0}, SendCounts: []int{1}, SendDispls: []int{0}}},
	} {
		if _, err := coll.Build(alg, &c.a); err == nil {
			t.Errorf("%s: built", c.name)
		}
	}
}
