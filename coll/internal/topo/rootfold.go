package topo

// RootFold is the shape of Rabenseifner's reduce (MPICH's
// MPIR_Reduce_intra_reduce_scatter_gather) on N ranks: the group is folded
// onto P = 2^⌊log2 N⌋ survivors, which reduce-scatter by recursive halving
// and then gather the blocks to the root along a binomial tree.
//
// The fold pairs the first 2R ranks (R = N - P) as (2i, 2i+1): one of each
// pair sends its whole vector to the other and sits out. The odd rank
// survives unless the even one is Root, so the root always survives and
// never waits for an extra hop. Survivors are renumbered 0..P-1: pair i's
// survivor is i, and rank r ≥ 2R is r - R.
type RootFold struct{ N, Root, P, R int }

// NewRootFold returns the fold of n ≥ 1 ranks for root.
func NewRootFold(n, root int) RootFold {
	p := 1
	for p*2 <= n {
		p *= 2
	}
	return RootFold{N: n, Root: root, P: p, R: n - p}
}

// survivor returns the rank of pair i that stays.
func (f RootFold) survivor(i int) int {
	if f.Root == 2*i {
		return 2 * i
	}
	return 2*i + 1
}

// NewRank returns r's number among the survivors, -1 if r sits out.
func (f RootFold) NewRank(r int) int {
	if r >= 2*f.R {
		return r - f.R
	}
	if f.survivor(r/2) != r {
		return -1
	}
	return r / 2
}

// OldRank returns the rank of survivor x.
func (f RootFold) OldRank(x int) int {
	if x < f.R {
		return f.survivor(x)
	}
	return x + f.R
}

// Partner returns the other rank of r's pair, -1 when r is not paired.
func (f RootFold) Partner(r int) int {
	if r >= 2*f.R {
		return -1
	}
	return r ^ 1
}

// Halving describes the reduce-scatter step of distance m (m = P/2, P/4,
// …, 1) for survivor x, the P blocks numbered as survivors: x exchanges
// with x^m, keeps the m blocks from keep on and sends the m blocks from
// give on. Before the step x holds the 2m blocks from x &^ (2m-1); after
// the last step it holds block x alone.
func (f RootFold) Halving(x, m int) (partner, keep, give int) {
	lo := x &^ (2*m - 1)
	if x&m == 0 {
		return x ^ m, lo, lo + m
	}
	return x ^ m, lo + m, lo
}

// Gather describes the gather step of distance m (m = 1, 2, …, P/2) for
// survivor x, after the halving left block y at survivor y. Survivors are
// numbered relative to the root's survivor number by xor, so the tree is
// rooted there. A survivor whose relative number has a bit below m set has
// already sent its blocks (active false). Otherwise it holds the m blocks
// from x &^ (m-1), and either sends them to x^m (send true) or receives
// that partner's m blocks, from partner &^ (m-1).
func (f RootFold) Gather(x, m int) (partner int, send, active bool) {
	u := x ^ f.NewRank(f.Root)
	if u&(m-1) != 0 {
		return -1, false, false
	}
	return x ^ m, u&m != 0, true
}
