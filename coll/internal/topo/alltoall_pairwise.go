package topo

// The pairwise exchange of alltoall (MPICH alltoall_intra_pairwise, Open
// MPI coll_base_alltoall_intra_pairwise): n-1 steps, in each of which a
// rank sends to one partner and receives from one, so every rank talks to
// every other exactly once and no link carries two messages at a time.

// AlltoallPairwiseSteps is the steps of the pairwise exchange, n-1; they
// are numbered k = 1 … n-1.
func AlltoallPairwiseSteps(n int) int { return n - 1 }

// AlltoallPairwise returns step k's partners: rank sends to `to` and
// receives from `from`. On a power of two they are the same, rank XOR k
// (the exchange is symmetric, MPICH's choice there); otherwise to = rank+k
// and from = rank-k (mod n).
func AlltoallPairwise(rank, n, k int) (to, from int) {
	if n&(n-1) == 0 {
		return rank ^ k, rank ^ k
	}
	return ringMod(rank+k, n), ringMod(rank-k, n)
}

// In place a rank may overwrite a block only once it has sent it, so
// every exchange is a swap between two ranks (Open MPI's
// mca_coll_base_alltoall_intra_basic_inplace): on a power of two rank
// swaps with rank XOR k at step k, n-1 steps; otherwise it swaps with both
// rank+k (its right partner) and rank-k (its left one) at step k, in
// ⌊n/2⌋ steps; when n is even the two coincide at the last step.

// AlltoallInPlaceSteps is the steps of the in-place exchange, numbered
// k = 1 … AlltoallInPlaceSteps(n).
func AlltoallInPlaceSteps(n int) int {
	if n&(n-1) == 0 {
		return n - 1
	}
	return n / 2
}

// AlltoallInPlace returns the ranks rank swaps a block with at step k:
// right, and left unless it is -1. At the same step, rank is its right
// partner's left partner, and its left partner's right one (on a power of
// two, right is rank XOR k and there is no left).
func AlltoallInPlace(rank, n, k int) (right, left int) {
	if n&(n-1) == 0 {
		return rank ^ k, -1
	}
	right, left = ringMod(rank+k, n), ringMod(rank-k, n)
	if right == left {
		left = -1
	}
	return right, left
}
