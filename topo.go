package meshmpi

// Process topologies (MPI-4.1 chapter 8): a communicator may carry a
// Cartesian grid, a graph or a distributed graph, which names each rank's
// neighbors for the topology queries (cart.go, graph.go) and the
// neighborhood collectives (neighbor.go).
//
// Reorder. Every constructor takes MPI's reorder flag and keeps the ranks
// in their order whatever it says, which MPI allows (§8.5.1: the
// implementation "may" reorder). meshmpi cannot yet do better: links
// connect lazily, so their costs are unknown when a topology is made, and
// browser, WASI and native ranks share no notion of a node.

import (
	"encoding/binary"
	"fmt"

	"github.com/meshmpi/meshmpi/coll"
)

// Topo is the kind of process topology a communicator carries
// (MPI_Topo_test's status).
type Topo int

// Topology kinds (MPI_UNDEFINED, MPI_CART, MPI_GRAPH, MPI_DIST_GRAPH).
const (
	TopoNone      Topo = iota // no topology
	TopoCart                  // a Cartesian grid (CartCreate, CartSub)
	TopoGraph                 // a graph every rank knows whole (GraphCreate)
	TopoDistGraph             // a distributed graph (DistGraphCreate, DistGraphCreateAdjacent)
)

func (t Topo) String() string {
	switch t {
	case TopoNone:
		return "none"
	case TopoCart:
		return "cart"
	case TopoGraph:
		return "graph"
	case TopoDistGraph:
		return "dist_graph"
	}
	return fmt.Sprintf("Topo(%d)", int(t))
}

// topology is what a communicator knows of its topology. It is built
// before the communicator is handed out and never changed, so the
// communicator and its duplicates share it.
type topology struct {
	kind Topo
	// Cartesian: the grid and this rank's coordinates
	dims    []int
	periods []bool
	coords  []int
	// graph: MPI_Graph_create's arrays, every rank's neighbors
	index, edges []int
	// distributed graph: the weights, nil when unweighted
	srcWeights, dstWeights []int
	weighted               bool
	// this rank's neighborhood for the neighborhood collectives, in the
	// order the queries return it, and why they cannot run (nil: they can)
	nbr    coll.Neighbors
	nbrErr error
}

// TopoTest returns the kind of topology c carries (MPI_Topo_test).
func (c *Comm) TopoTest() (Topo, error) {
	if err := c.check(); err != nil {
		return TopoNone, fmt.Errorf("topo test: %w", err)
	}
	if c.topo == nil {
		return TopoNone, nil
	}
	return c.topo.kind, nil
}

// topoOf returns c's topology if it is of kind k.
func (c *Comm) topoOf(verb string, k Topo) (*topology, error) {
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", verb, err)
	}
	if c.topo == nil || c.topo.kind != k {
		have := TopoNone
		if c.topo != nil {
			have = c.topo.kind
		}
		return nil, fmt.Errorf("%s on %s: needs a %s topology, has %s: %w", verb, c, k, have, ErrTopology)
	}
	return c.topo, nil
}

// topoCreate is the collective core of the topology constructors: it
// makes the communicator of members (ranks of c in their new order; nil
// for a rank left out) and gives it the topology topo builds from its
// rank. A rank whose own arguments are wrong (argErr) still takes part,
// and every rank then fails alike, so no rank waits for one that gave up.
func (c *Comm) topoCreate(verb string, argErr error, members func() []int, topo func(rank int) *topology) (*Comm, error) {
	if err := c.checkIntra(verb); err != nil {
		return nil, err
	}
	rec := []byte{0}
	if argErr != nil {
		rec[0] = 1
	}
	othersBad := false
	n, err := c.create(rec, func(recs [][]byte) []int {
		for _, b := range recs {
			othersBad = othersBad || b[0] != 0
		}
		if othersBad {
			return nil
		}
		return members()
	})
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s on %s: %w", verb, c, err)
	case argErr != nil:
		return nil, fmt.Errorf("%s on %s: %w", verb, c, argErr)
	case othersBad:
		return nil, fmt.Errorf("%s on %s: another rank's arguments are invalid: %w", verb, c, ErrArg)
	}
	if n != nil {
		n.topo = topo(n.rank)
	}
	return n, nil
}

// checkIntra checks c for a topology constructor: topologies live on
// intracommunicators only (MPI-4.1 §8.5).
func (c *Comm) checkIntra(verb string) error {
	if err := c.check(); err != nil {
		return fmt.Errorf("%s: %w", verb, err)
	}
	if c.inter != nil {
		return fmt.Errorf("%s on %s: an intercommunicator cannot carry a topology: %w", verb, c, ErrComm)
	}
	return nil
}

// firstRanks returns the members function of a topology over ranks
// [0, n) of c, in order.
func (c *Comm) firstRanks(n int) func() []int {
	return func() []int {
		if c.rank >= n {
			return nil
		}
		return identityRanks(n)
	}
}

// allgatherInts gathers every rank's list of integers (of any length) at
// every rank, over c's internal allgather: one round for the lengths, one
// for the lists padded to the longest.
func (c *Comm) allgatherInts(mine []int) ([][]int, error) {
	lens, err := c.allgather(binary.LittleEndian.AppendUint64(nil, uint64(len(mine))))
	if err != nil {
		return nil, err
	}
	longest := 0
	for r := range c.ranks {
		longest = max(longest, int(binary.LittleEndian.Uint64(lens[8*r:])))
	}
	out := make([][]int, len(c.ranks))
	if longest == 0 { // every rank knows: no second round
		for r := range out {
			out[r] = []int{}
		}
		return out, nil
	}
	rec := make([]byte, 8*longest)
	for i, x := range mine {
		binary.LittleEndian.PutUint64(rec[8*i:], uint64(int64(x)))
	}
	all, err := c.allgather(rec)
	if err != nil {
		return nil, err
	}
	for r := range out {
		n := int(binary.LittleEndian.Uint64(lens[8*r:]))
		out[r] = make([]int, n)
		for i := range n {
			out[r][i] = int(int64(binary.LittleEndian.Uint64(all[8*(r*longest+i):])))
		}
	}
	return out, nil
}
