package topo

import "math/bits"

// AllgatherFold maps n ranks onto p = 2^⌊log2 n⌋ participants so that
// recursive doubling runs on any n (the fold of libnbc's and MPICH's
// recursive-doubling allreduce, applied to blocks). With rem = n - p, the
// first 2·rem ranks pair up: even rank 2j hands its block to odd rank 2j+1
// and sits out; odd rank 2j+1 is participant j; rank r ≥ 2·rem is
// participant r - rem. Participant j stands for the ranks [Lo(j), Lo(j+1)),
// so any run of participants stands for a run of ranks, and the blocks a
// participant holds stay contiguous in the receive buffer.
type AllgatherFold struct {
	N, P, Rem int
}

// NewAllgatherFold returns the fold of n ≥ 1 ranks.
func NewAllgatherFold(n int) AllgatherFold {
	p := 1 << (bits.Len(uint(n)) - 1)
	return AllgatherFold{N: n, P: p, Rem: n - p}
}

// Rounds is log2 p, the doubling rounds.
func (f AllgatherFold) Rounds() int { return bits.Len(uint(f.P)) - 1 }

// Extra reports whether rank sits out the doubling.
func (f AllgatherFold) Extra(rank int) bool { return rank < 2*f.Rem && rank%2 == 0 }

// Partner is the rank rank folds with: rank+1 for an extra, rank-1 for the
// participant that takes an extra's block, -1 for the others.
func (f AllgatherFold) Partner(rank int) int {
	switch {
	case rank >= 2*f.Rem:
		return -1
	case rank%2 == 0:
		return rank + 1
	}
	return rank - 1
}

// NewRank is rank's participant number, or -1 for an extra.
func (f AllgatherFold) NewRank(rank int) int {
	switch {
	case rank >= 2*f.Rem:
		return rank - f.Rem
	case rank%2 == 1:
		return rank / 2
	}
	return -1
}

// Rank is the rank of participant j.
func (f AllgatherFold) Rank(j int) int {
	if j < f.Rem {
		return 2*j + 1
	}
	return j + f.Rem
}

// Lo is the first rank participant j stands for; Lo(p) = n.
func (f AllgatherFold) Lo(j int) int {
	if j < f.Rem {
		return 2 * j
	}
	return j + f.Rem
}

// Doubling is one round of recursive doubling at a participant: it sends
// the blocks of ranks [SendLo, SendHi) to Peer and receives those of
// [RecvLo, RecvHi).
type Doubling struct {
	Peer           int
	SendLo, SendHi int
	RecvLo, RecvHi int
}

// Round returns round k at rank, which must be a participant: it pairs with
// participant j ^ 2^k, and each holds its aligned group of 2^k
// participants.
func (f AllgatherFold) Round(rank, k int) Doubling {
	j := f.NewRank(rank)
	m := 1 << k
	peer := j ^ m
	mine, theirs := j&^(m-1), peer&^(m-1)
	return Doubling{Peer: f.Rank(peer),
		SendLo: f.Lo(mine), SendHi: f.Lo(mine + m),
		RecvLo: f.Lo(theirs), RecvHi: f.Lo(theirs + m)}
}
