package coll

import "slices"

// The graph a Run walks is the plan's, less the no-op steps whose removal
// adds no more than a couple of edges: the fence between two small rounds,
// the no-op a fused receive leaves behind (fuse.go). Each such step costs a
// trip through the ready list at every start, for nothing; with it gone,
// its successors depend directly on its predecessors, so every order the
// plan enforces still holds. Plan.Steps and Successors keep the plan's
// own shape (the verifier and the tests read it); only Runs see this one.

// maxElideEdges is how many more edges than it had a no-op may cost when
// it is removed: k predecessors and m successors become k·m edges.
const maxElideEdges = 2

// runGraph is the dependency graph Runs of a plan execute.
type runGraph struct {
	succ  []int32 // succ[off[i]:off[i+1]]: the steps that wait for step i
	off   []int32
	ndeps []int32 // per step: how many steps it waits for
	roots []int32 // steps that wait for none, in step order
	live  int32   // steps a Run executes: all but the removed no-ops
	// trail marks the trailing steps (nil if none): agreement-token
	// receives no other step waits for. They only check the ranks'
	// arguments, so a Run is settled before they complete (Run.Settled).
	trail  []bool
	ntrail int32
}

// markTrails marks the trailing steps among the first tokens steps of a
// plan (its agreement tokens, agree.go).
func (g *runGraph) markTrails(steps []Step, tokens int) {
	for i := range tokens {
		if steps[i].Kind != StepRecv || g.off[i+1] != g.off[i] {
			continue
		}
		if g.trail == nil {
			g.trail = make([]bool, len(steps))
		}
		g.trail[i] = true
		g.ntrail++
	}
}

// trailing reports whether step id is a trailing step.
func (g *runGraph) trailing(id int32) bool { return g.trail != nil && g.trail[id] }

// newRunGraph builds the run graph of steps whose dependencies are deps
// (duplicates allowed).
func newRunGraph(steps []Step, deps [][]StepID) runGraph {
	n := len(steps)
	preds := make([][]int32, n)
	succs := make([][]int32, n)
	for i, ds := range deps {
		for _, d := range ds {
			if !slices.Contains(preds[i], int32(d)) {
				preds[i] = append(preds[i], int32(d))
				succs[d] = append(succs[d], int32(i))
			}
		}
	}
	removed := make([]bool, n)
	for v := range n {
		k, m := len(preds[v]), len(succs[v])
		if steps[v].Kind != StepNop || k*m > k+m+maxElideEdges {
			continue
		}
		for _, a := range preds[v] {
			succs[a] = relink(succs[a], int32(v), succs[v])
		}
		for _, s := range succs[v] {
			preds[s] = relink(preds[s], int32(v), preds[v])
		}
		preds[v], succs[v], removed[v] = nil, nil, true
	}
	g := runGraph{off: make([]int32, n+1), ndeps: make([]int32, n)}
	for i := range n {
		g.off[i] = int32(len(g.succ))
		g.succ = append(g.succ, succs[i]...)
		g.ndeps[i] = int32(len(preds[i]))
		if !removed[i] {
			g.live++
			if len(preds[i]) == 0 {
				g.roots = append(g.roots, int32(i))
			}
		}
	}
	g.off[n] = int32(len(g.succ))
	return g
}

// relink returns l without v and with every element of with it lacked.
func relink(l []int32, v int32, with []int32) []int32 {
	l = slices.DeleteFunc(l, func(x int32) bool { return x == v })
	for _, x := range with {
		if !slices.Contains(l, x) {
			l = append(l, x)
		}
	}
	return l
}
