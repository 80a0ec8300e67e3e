// Package topo holds the pure rank arithmetic of the collective
// algorithms: partners, trees, folds and block schedules. Nothing here
// knows about buffers or plans, so every pattern is tested exhaustively on
// its own (MPICH's recexchalgo, UCC's coll_patterns).
package topo

// Ring is rank's place on the ring 0 → 1 → … → n-1 → 0: it receives from
// its left neighbour and sends to its right one.
type Ring struct {
	Rank, Size int
}

// Left is the rank this one receives from.
func (g Ring) Left() int { return (g.Rank - 1 + g.Size) % g.Size }

// Right is the rank this one sends to.
func (g Ring) Right() int { return (g.Rank + 1) % g.Size }

// Steps is the number of steps of a ring allgather: n-1.
func (g Ring) Steps() int { return g.Size - 1 }

// SendBlock is the block rank passes right at step s of a ring allgather:
// its own at step 0, then the one it received at step s-1.
func (g Ring) SendBlock(s int) int { return ringMod(g.Rank-s, g.Size) }

// RecvBlock is the block rank receives from the left at step s: the one
// its left neighbour sends, (rank-1) - s.
func (g Ring) RecvBlock(s int) int { return ringMod(g.Rank-s-1, g.Size) }

// ringMod is the non-negative remainder of a by n.
func ringMod(a, n int) int { return ((a % n) + n) % n }
