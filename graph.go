package meshmpi

// Graph and distributed graph topologies (MPI-4.1 §8.5.3, §8.5.4).
//
// Weights: a nil weights slice is MPI_UNWEIGHTED, a non-nil one (empty
// for no edges, MPI_WEIGHTS_EMPTY) gives one weight per edge. A rank with
// no edges of its own may pass nil in a weighted graph; ranks with edges
// must agree on weighted or not.

import (
	"fmt"
	"slices"

	"github.com/meshmpi/meshmpi/coll"
)

// GraphCreate returns a communicator with the graph topology of nnodes =
// len(index) ranks (MPI_Graph_create): rank r's neighbors are
// edges[index[r-1]:index[r]] (from 0 for rank 0). Self-loops and repeated
// edges are allowed. Ranks 0…nnodes−1 of c join it in their order
// (reorder keeps it: see topo.go); the others get nil. Collective over c;
// every rank passes the same arguments.
func (c *Comm) GraphCreate(index, edges []int, reorder bool) (*Comm, error) {
	argErr := graphCheck(c.Size(), index, edges)
	index, edges = slices.Clone(index), slices.Clone(edges)
	return c.topoCreate("graph create", argErr, c.firstRanks(len(index)), func(rank int) *topology {
		t := &topology{kind: TopoGraph, index: index, edges: edges, nbrErr: graphAsymmetry(index, edges)}
		nb := graphNeighbors(index, edges, rank)
		t.nbr = coll.Neighbors{Sources: nb, Dests: nb}
		return t
	})
}

// graphAsymmetry returns why a graph cannot carry neighborhood
// collectives, or nil. They send to and receive from the same list, so
// every edge A→B needs its B→A (as often): otherwise a rank would wait for
// a message nobody sends. GraphCreate itself allows such graphs.
func graphAsymmetry(index, edges []int) error {
	count := map[[2]int]int{}
	for r := range index {
		for _, nb := range graphNeighbors(index, edges, r) {
			count[[2]int{r, nb}]++
		}
	}
	for e, n := range count {
		if back := count[[2]int{e[1], e[0]}]; back != n {
			return fmt.Errorf("the graph has %d edges %d→%d but %d back: %w", n, e[0], e[1], back, ErrTopology)
		}
	}
	return nil
}

func graphCheck(size int, index, edges []int) error {
	nnodes := len(index)
	if nnodes > size {
		return fmt.Errorf("a graph of %d nodes on %d ranks: %w", nnodes, size, ErrArg)
	}
	prev := 0
	for r, x := range index {
		if x < prev {
			return fmt.Errorf("index[%d] = %d after %d: %w", r, x, prev, ErrArg)
		}
		prev = x
	}
	if prev != len(edges) {
		return fmt.Errorf("index ends at %d for %d edges: %w", prev, len(edges), ErrArg)
	}
	for i, e := range edges {
		if e < 0 || e >= nnodes {
			return fmt.Errorf("edges[%d] = %d, not a node of %d: %w", i, e, nnodes, ErrRank)
		}
	}
	return nil
}

func graphNeighbors(index, edges []int, rank int) []int {
	lo := 0
	if rank > 0 {
		lo = index[rank-1]
	}
	return edges[lo:index[rank]]
}

// GraphdimsGet returns the number of nodes and edges of c's graph
// (MPI_Graphdims_get).
func (c *Comm) GraphdimsGet() (nnodes, nedges int, err error) {
	t, err := c.topoOf("graphdims get", TopoGraph)
	if err != nil {
		return 0, 0, err
	}
	return len(t.index), len(t.edges), nil
}

// GraphGet returns c's graph as GraphCreate took it (MPI_Graph_get), as
// new slices.
func (c *Comm) GraphGet() (index, edges []int, err error) {
	t, err := c.topoOf("graph get", TopoGraph)
	if err != nil {
		return nil, nil, err
	}
	return slices.Clone(t.index), slices.Clone(t.edges), nil
}

// GraphNeighborsCount returns the number of neighbors of rank in c's graph
// (MPI_Graph_neighbors_count).
func (c *Comm) GraphNeighborsCount(rank int) (int, error) {
	nb, err := c.GraphNeighbors(rank)
	return len(nb), err
}

// GraphNeighbors returns the neighbors of rank in c's graph, in the order
// GraphCreate gave them (MPI_Graph_neighbors).
func (c *Comm) GraphNeighbors(rank int) ([]int, error) {
	t, err := c.topoOf("graph neighbors", TopoGraph)
	if err != nil {
		return nil, err
	}
	if rank < 0 || rank >= c.Size() {
		return nil, fmt.Errorf("graph neighbors on %s: rank %d: %w", c, rank, ErrRank)
	}
	return slices.Clone(graphNeighbors(t.index, t.edges, rank)), nil
}

// GraphMap returns the rank the calling rank would have in a graph of
// len(index) nodes made with reorder (MPI_Graph_map), or Undefined: as
// GraphCreate keeps the order, its own rank below len(index).
func (c *Comm) GraphMap(index, edges []int) (int, error) {
	if err := c.check(); err != nil {
		return Undefined, fmt.Errorf("graph map: %w", err)
	}
	if err := graphCheck(c.Size(), index, edges); err != nil {
		return Undefined, fmt.Errorf("graph map on %s: %w", c, err)
	}
	if c.rank >= len(index) {
		return Undefined, nil
	}
	return c.rank, nil
}

// weightsKind classifies one rank's weights for agreement: nil with no
// edges fits any graph, nil with edges is unweighted, non-nil weighted.
const (
	weightsAny = iota
	weightsNone
	weightsGiven
)

func weightsKind(weights []int, degree int) int {
	switch {
	case weights != nil:
		return weightsGiven
	case degree > 0:
		return weightsNone
	}
	return weightsAny
}

// checkRanks checks that every entry of ranks is a rank of a group of size.
func checkRanks(what string, ranks []int, size int) error {
	for i, r := range ranks {
		if r < 0 || r >= size {
			return fmt.Errorf("%s[%d] = %d, not a rank of %d: %w", what, i, r, size, ErrRank)
		}
	}
	return nil
}

func checkWeights(what string, weights []int, degree int) error {
	if weights == nil {
		return nil
	}
	if len(weights) != degree {
		return fmt.Errorf("%d %s for %d edges: %w", len(weights), what, degree, ErrArg)
	}
	for i, w := range weights {
		if w < 0 {
			return fmt.Errorf("%s[%d] = %d: %w", what, i, w, ErrArg)
		}
	}
	return nil
}

// distGraphAgree gathers every rank's record — an error flag, a weights
// kind, then the rest — and fails every rank alike if any rank's
// arguments were invalid or the ranks disagree on weights. It returns the
// records' rests and whether the graph is weighted.
func (c *Comm) distGraphAgree(verb string, argErr error, wkind int, rest []int) ([][]int, bool, error) {
	if err := c.checkIntra(verb); err != nil {
		return nil, false, err
	}
	flag := 0
	if argErr != nil {
		flag = 1
	}
	all, err := c.allgatherInts(append([]int{flag, wkind}, rest...))
	if err != nil {
		return nil, false, fmt.Errorf("%s on %s: %w", verb, c, err)
	}
	if argErr != nil {
		return nil, false, fmt.Errorf("%s on %s: %w", verb, c, argErr)
	}
	kinds := [3]bool{}
	for r, rec := range all {
		if rec[0] != 0 {
			return nil, false, fmt.Errorf("%s on %s: rank %d's arguments are invalid: %w", verb, c, r, ErrArg)
		}
		kinds[rec[1]] = true
		all[r] = rec[2:]
	}
	if kinds[weightsNone] && kinds[weightsGiven] {
		return nil, false, fmt.Errorf("%s on %s: some ranks give weights and some do not: %w", verb, c, ErrArg)
	}
	return all, kinds[weightsGiven], nil
}

// DistGraphCreateAdjacent returns a communicator with a distributed graph
// topology in which every rank names its own in-neighbors (sources) and
// out-neighbors (destinations), with optional weights
// (MPI_Dist_graph_create_adjacent). The graph must be consistent: the
// k-th time B is among A's destinations is the k-th time A is among B's
// sources; meshmpi checks this, so a neighborhood collective cannot wait
// for a message nobody sends. Repeated edges and self-loops are allowed.
// The ranks keep their order (see topo.go). Collective over c.
func (c *Comm) DistGraphCreateAdjacent(sources, sourceWeights, destinations, destWeights []int, reorder bool) (*Comm, error) {
	const verb = "dist graph create adjacent"
	size := c.Size()
	argErr := firstErr(
		checkRanks("sources", sources, size), checkRanks("destinations", destinations, size),
		checkWeights("source weights", sourceWeights, len(sources)), checkWeights("destination weights", destWeights, len(destinations)))
	sk, dk := weightsKind(sourceWeights, len(sources)), weightsKind(destWeights, len(destinations))
	if argErr == nil && min(sk, dk) == weightsNone && max(sk, dk) == weightsGiven {
		argErr = fmt.Errorf("weights for one direction only: %w", ErrArg)
	}
	wkind := max(sk, dk)
	rec := append(append([]int{len(sources)}, sources...), destinations...)
	all, weighted, err := c.distGraphAgree(verb, argErr, wkind, rec)
	if err != nil {
		return nil, err
	}
	// count every directed pair from both ends
	type pair struct{ from, to int }
	balance := map[pair]int{}
	for r, rec := range all {
		ns := rec[0]
		for _, s := range rec[1 : 1+ns] {
			balance[pair{s, r}]--
		}
		for _, d := range rec[1+ns:] {
			balance[pair{r, d}]++
		}
	}
	for p, n := range balance {
		if n != 0 {
			return nil, fmt.Errorf("%s on %s: rank %d lists rank %d as a destination %+d times more than rank %d lists rank %d as a source: %w",
				verb, c, p.from, p.to, n, p.to, p.from, ErrTopology)
		}
	}
	t := &topology{kind: TopoDistGraph, weighted: weighted,
		nbr: coll.Neighbors{Sources: slices.Clone(sources), Dests: slices.Clone(destinations)}}
	if weighted {
		t.srcWeights, t.dstWeights = cloneWeights(sourceWeights), cloneWeights(destWeights)
	}
	return c.topoCreate(verb, nil, c.firstRanks(size), func(int) *topology { return t })
}

// cloneWeights copies w, giving a non-nil slice (a weighted graph's rank
// without edges reports empty weights, not nil).
func cloneWeights(w []int) []int { return append([]int{}, w...) }

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// DistGraphCreate returns a communicator with a distributed graph topology
// whose edges any rank may give (MPI_Dist_graph_create): for each i, the
// edges from sources[i] to the next degrees[i] entries of destinations,
// with weights (nil: unweighted) one per destination. The ranks agree on
// the whole graph; each then holds its in- and out-edges, ordered by the
// rank that gave the edge and then by its position there, so the k-th
// edge from A to B is the k-th in both A's destinations and B's sources.
// The ranks keep their order (see topo.go). Collective over c.
func (c *Comm) DistGraphCreate(sources, degrees, destinations, weights []int, reorder bool) (*Comm, error) {
	const verb = "dist graph create"
	size := c.Size()
	argErr := checkRanks("sources", sources, size)
	if argErr == nil && len(degrees) != len(sources) {
		argErr = fmt.Errorf("%d degrees for %d sources: %w", len(degrees), len(sources), ErrArg)
	}
	total := 0
	for i := 0; argErr == nil && i < len(degrees); i++ {
		if degrees[i] < 0 {
			argErr = fmt.Errorf("degrees[%d] = %d: %w", i, degrees[i], ErrArg)
		}
		total += degrees[i]
	}
	if argErr == nil && total != len(destinations) {
		argErr = fmt.Errorf("degrees sum to %d for %d destinations: %w", total, len(destinations), ErrArg)
	}
	argErr = firstErr(argErr, checkRanks("destinations", destinations, size), checkWeights("weights", weights, len(destinations)))
	// the record: (from, to, weight) per edge
	var rec []int
	if argErr == nil {
		k := 0
		for i, s := range sources {
			for range degrees[i] {
				w := 0
				if weights != nil {
					w = weights[k]
				}
				rec = append(rec, s, destinations[k], w)
				k++
			}
		}
	}
	all, weighted, err := c.distGraphAgree(verb, argErr, weightsKind(weights, len(destinations)), rec)
	if err != nil {
		return nil, err
	}
	me := c.rank
	t := &topology{kind: TopoDistGraph, weighted: weighted, nbr: coll.Neighbors{Sources: []int{}, Dests: []int{}}}
	if weighted {
		t.srcWeights, t.dstWeights = []int{}, []int{}
	}
	for _, rec := range all {
		for e := 0; e+2 < len(rec); e += 3 {
			from, to, w := rec[e], rec[e+1], rec[e+2]
			if from == me {
				t.nbr.Dests = append(t.nbr.Dests, to)
				if weighted {
					t.dstWeights = append(t.dstWeights, w)
				}
			}
			if to == me {
				t.nbr.Sources = append(t.nbr.Sources, from)
				if weighted {
					t.srcWeights = append(t.srcWeights, w)
				}
			}
		}
	}
	return c.topoCreate(verb, nil, c.firstRanks(size), func(int) *topology { return t })
}

// DistGraphNeighborsCount returns the calling rank's in-degree and
// out-degree in c's distributed graph and whether it is weighted
// (MPI_Dist_graph_neighbors_count).
func (c *Comm) DistGraphNeighborsCount() (indegree, outdegree int, weighted bool, err error) {
	t, err := c.topoOf("dist graph neighbors count", TopoDistGraph)
	if err != nil {
		return 0, 0, false, err
	}
	return len(t.nbr.Sources), len(t.nbr.Dests), t.weighted, nil
}

// DistGraphNeighbors returns the calling rank's in-neighbors and
// out-neighbors in c's distributed graph, with their weights (nil when
// unweighted), in the order the neighborhood collectives use
// (MPI_Dist_graph_neighbors). The slices are new.
func (c *Comm) DistGraphNeighbors() (sources, sourceWeights, destinations, destWeights []int, err error) {
	t, err := c.topoOf("dist graph neighbors", TopoDistGraph)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	sources, destinations = slices.Clone(t.nbr.Sources), slices.Clone(t.nbr.Dests)
	if t.weighted {
		sourceWeights, destWeights = slices.Clone(t.srcWeights), slices.Clone(t.dstWeights)
	}
	return sources, sourceWeights, destinations, destWeights, nil
}
