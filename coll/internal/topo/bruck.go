package topo

import "math/bits"

// Bruck's patterns (Bruck, Ho, Kipnis, Upfal, Weathersby, "Efficient
// algorithms for all-to-all communications in multiport message-passing
// systems", IEEE TPDS 8(11), 1997). Both run ⌈log2 n⌉ rounds for any n;
// in round k every rank sends to rank - 2^k and receives from rank + 2^k.
// Blocks are numbered by position in a per-rank rotated buffer.

// BruckRounds is ⌈log2 n⌉, the rounds of both Bruck algorithms.
func BruckRounds(n int) int { return bits.Len(uint(n - 1)) }

// BruckPeers returns round k's partners: rank sends to rank - 2^k and
// receives from rank + 2^k (mod n).
func BruckPeers(rank, n, k int) (to, from int) {
	d := 1 << k
	return ringMod(rank-d, n), ringMod(rank+d, n)
}

// BruckGather is one round of Bruck's allgather in rank's rotated buffer,
// where position i holds the block of rank (rank+i) mod n: rank sends
// positions [0, Count) and receives the sender's [0, Count) at [Off,
// Off+Count). After round k positions [0, min(2^(k+1), n)) are filled.
type BruckGather struct {
	To, From   int
	Off, Count int
}

// BruckAllgatherRound returns round k of Bruck's allgather at rank.
func BruckAllgatherRound(rank, n, k int) BruckGather {
	d := 1 << k
	to, from := BruckPeers(rank, n, k)
	return BruckGather{To: to, From: from, Off: d, Count: min(d, n-d)}
}

// BruckGatherBlock is the rank whose block sits at position i of rank's
// rotated allgather buffer.
func BruckGatherBlock(rank, n, i int) int { return (rank + i) % n }

// Bruck's alltoall keeps n positions per rank. At the start position i
// holds the block rank sends to (rank - i) mod n (BruckAlltoallDest); in
// round k every position with bit k set moves, unchanged in number, to
// rank - 2^k. A block thus travels i ranks down in the rounds of i's set
// bits, and at the end position i holds the block rank + i sent to rank
// (BruckAlltoallSource): the receive layout is a plain rotation.

// BruckAlltoallPositions returns the positions moved in round k of an
// n-rank alltoall, in increasing order: those in [1, n) with bit k set.
func BruckAlltoallPositions(n, k int) []int {
	var ps []int
	for i := 1 << k; i < n; i++ {
		if i&(1<<k) != 0 {
			ps = append(ps, i)
		}
	}
	return ps
}

// BruckAlltoallMaxMoved is the most positions any round moves.
func BruckAlltoallMaxMoved(n int) int {
	m := 0
	for k := range BruckRounds(n) {
		m = max(m, len(BruckAlltoallPositions(n, k)))
	}
	return m
}

// BruckAlltoallDest is the rank the block at position i of rank starts
// out for.
func BruckAlltoallDest(rank, n, i int) int { return ringMod(rank-i, n) }

// BruckAlltoallSource is the rank whose block position i of rank holds
// after the last round.
func BruckAlltoallSource(rank, n, i int) int { return (rank + i) % n }

// BruckAlltoallFirstMove is the round in which position i first moves
// (its lowest set bit); until then it still holds the rank's own input.
func BruckAlltoallFirstMove(i int) int { return bits.TrailingZeros(uint(i)) }
