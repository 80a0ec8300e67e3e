package coll

// ReduceScatterBlock "pairwise": n-1 pairwise exchange steps that fold
// every block in rank order, so it serves non-commutative ops too.
//
// Source: MPICH's MPIR_Reduce_scatter_block_intra_pairwise; it is
// ReduceScatter's pairwise algorithm (reduce_scatter_pairwise.go) with
// Size blocks of Count elements, and shares its schedule: arrivals from
// r-1, …, 0 are prepended to L = x_0 ⊕ … ⊕ x_r, those from n-1, …, r+1 to
// H = x_{r+1} ⊕ … ⊕ x_{n-1}, and the result is L ⊕ H.
//
// Schedule length: n-1 steps, one send and one receive of Count elements
// each.
// Memory: at most 2·Count elements of scratch not in place (a receive
// buffer and L), 3·Count in place (and H); see reduce_scatter_pairwise.go.
// Restrictions: none.
//
// 5 ranks, the arrivals at rank 1 (x_k is rank k's block 1); every rank
// sends to r+s and receives from r-s:
//
//	step 1   from 0: L = x0 ⊕ x1
//	step 2   from 4: H = x4
//	step 3   from 3: H = x3 ⊕ x4
//	step 4   from 2: H = x2 ⊕ x3 ⊕ x4
//	end      result = L ⊕ H = x0 ⊕ x1 ⊕ x2 ⊕ x3 ⊕ x4

func init() {
	Register(Algorithm{Coll: ReduceScatterBlock, Name: "pairwise",
		Desc: "n-1 pairwise exchange steps, rank-order fold; any op",
		Build: func(b *Builder, a *Args) error {
			counts := make([]int, a.Size)
			for k := range counts {
				counts[k] = a.Count
			}
			return buildReduceScatterPairwise(b, a, counts)
		}})
}
