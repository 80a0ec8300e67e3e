package topo

import "math/bits"

// RecDbl is the rank math of recursive doubling and recursive halving over
// N ranks, with the non-power-of-two fold of MPICH's recexch algorithms
// (recexchalgo.c, radix 2). The first 2·Rem ranks pair up: odd rank 2i+1
// is an Extra, which hands its data to its Host 2i before the exchange
// rounds and gets the result back after them; every other rank
// participates under a new rank in [0, Pof2):
//
//	rank    0  1  2  3  4  5  6        N = 7, Pof2 = 4, Rem = 3
//	role    H  E  H  E  H  E  P        H host, E extra, P plain
//	newrank 0  -  1  -  2  -  3
//
// The fold keeps rank order: newrank v stands for the original ranks
// [OrigRank(v), OrigRank(v+1)), consecutive and increasing in v, so a
// group of consecutive newranks stands for consecutive original ranks and
// an exchange that puts the lower side's data on the left reduces in rank
// order.
type RecDbl struct {
	N      int // group size
	Pof2   int // largest power of two ≤ N
	Rem    int // N - Pof2: the number of extras (and of hosts)
	Rounds int // log2 Pof2: exchange rounds among the participants
}

// NewRecDbl returns the fold of n ≥ 1 ranks.
func NewRecDbl(n int) RecDbl {
	k := bits.Len(uint(n)) - 1
	return RecDbl{N: n, Pof2: 1 << k, Rem: n - 1<<k, Rounds: k}
}

// FoldRole is what a rank does in the fold.
type FoldRole uint8

// Fold roles.
const (
	Plain FoldRole = iota // participates alone
	Host                  // participates for itself and the extra rank+1
	Extra                 // sends to rank-1 first, receives the result last
)

// Role returns rank's part in the fold.
func (f RecDbl) Role(rank int) FoldRole {
	switch {
	case rank >= 2*f.Rem:
		return Plain
	case rank%2 == 0:
		return Host
	}
	return Extra
}

// NewRank returns rank's index among the Pof2 participants, or -1 for an
// extra.
func (f RecDbl) NewRank(rank int) int {
	if rank < 2*f.Rem {
		if rank%2 == 1 {
			return -1
		}
		return rank / 2
	}
	return rank - f.Rem
}

// OrigRank returns the rank of participant v. OrigRank(Pof2) is N, so v
// stands for the ranks [OrigRank(v), OrigRank(v+1)).
func (f RecDbl) OrigRank(v int) int {
	if v < f.Rem {
		return 2 * v
	}
	return v + f.Rem
}

// Partner returns the participant v exchanges with in round i of
// recursive doubling, at distance 2^i. After round i, v holds the
// contributions of the aligned group of 2^(i+1) participants around it.
func (f RecDbl) Partner(v, i int) int { return v ^ 1<<i }

// HalvingPartner returns the participant v exchanges with in round i of
// recursive halving, at distance Pof2/2^(i+1) (the reverse of doubling).
func (f RecDbl) HalvingPartner(v, i int) int { return v ^ f.Pof2>>(i+1) }

// HalvingRange returns the participants [lo, hi) whose blocks v is
// responsible for after round i of recursive halving; round -1 is before
// the first, all of them. v keeps the half of its range that holds v and
// gives the other half, HalvingRange(HalvingPartner(v, i), i), to its
// partner, so after the last round v keeps only its own block.
func (f RecDbl) HalvingRange(v, i int) (lo, hi int) {
	g := f.Pof2 >> (i + 1)
	lo = v &^ (g - 1)
	return lo, lo + g
}

// XorPartner returns rank^2^i, the partner of round i of MPICH's scan and
// exscan recursive doubling over n ranks, or -1 when that rank does not
// exist. Such rounds need no fold: the rank lacking a partner sits the
// round out.
func XorPartner(rank, n, i int) int {
	if p := rank ^ 1<<i; p < n {
		return p
	}
	return -1
}

// XorRounds returns the rounds of XorPartner over n ranks, ⌈log2 n⌉.
func XorRounds(n int) int { return bits.Len(uint(n - 1)) }
