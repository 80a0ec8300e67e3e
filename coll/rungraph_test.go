package coll

import (
	"fmt"
	"slices"
	"testing"

	"github.com/meshmpi/meshmpi/op"
	"github.com/stretchr/testify/require"
)

// reaches returns reach[i][j]: step j waits, directly or not, for step i,
// in the graph whose successors of i are succ(i).
func reaches(n int, succ func(i int) []int32) [][]bool {
	reach := make([][]bool, n)
	for i := range n {
		reach[i] = make([]bool, n)
		stack := append([]int32(nil), succ(i)...)
		for len(stack) > 0 {
			j := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if !reach[i][j] {
				reach[i][j] = true
				stack = append(stack, succ(int(j))...)
			}
		}
	}
	return reach
}

// The run graph orders the steps it keeps exactly as the plan does, keeps
// every step but no-ops, and counts dependencies and roots to match.
func TestRunGraphKeepsOrder(t *testing.T) {
	colls := []Coll{Barrier, Bcast, Reduce, Allreduce, Allgather, Alltoall, ReduceScatterBlock, Scan, Exscan}
	removedSome := false
	for _, k := range colls {
		for _, alg := range Algorithms(k) {
			for _, size := range []int{1, 3, 8, 11} {
				for rank := range size {
					a := Args{Coll: k, Rank: rank, Size: size, Root: size / 2, Count: 5, ElemSize: 8, Type: op.Int64, Op: op.Sum}
					if alg.Requires.holds(&a) != nil {
						continue
					}
					p, err := Build(alg, &a)
					require.NoError(t, err)
					name := fmt.Sprintf("%s/%s n=%d rank %d", k, alg.Name, size, rank)
					n := len(p.Steps)
					g := &p.run
					plan := reaches(n, p.Successors)
					run := reaches(n, func(i int) []int32 { return g.succ[g.off[i]:g.off[i+1]] })
					live, kept := int32(0), make([]bool, n)
					for i := range n {
						hasEdges := g.off[i+1] > g.off[i] || g.ndeps[i] > 0
						kept[i] = p.Steps[i].Kind != StepNop || hasEdges || slices.Contains(g.roots, int32(i))
						if kept[i] {
							live++
						} else {
							removedSome = true
						}
					}
					require.Equal(t, live, g.live, name)
					for i := range n {
						if !kept[i] {
							continue
						}
						preds := 0
						for j := range n {
							if kept[j] && j != i {
								require.Equal(t, plan[i][j], run[i][j], "%s: does step %d wait for %d", name, j, i)
							}
							if g.off[j+1] > g.off[j] && slices.Contains(g.succ[g.off[j]:g.off[j+1]], int32(i)) {
								preds++
							}
						}
						require.Equal(t, int32(preds), g.ndeps[i], "%s: step %d", name, i)
						require.Equal(t, preds == 0, slices.Contains(g.roots, int32(i)), "%s: step %d", name, i)
					}
				}
			}
		}
	}
	require.True(t, removedSome, "no plan lost a no-op")
}
