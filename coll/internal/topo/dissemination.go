package topo

import "math/bits"

// DisseminationRounds is the number of rounds of the dissemination barrier
// (Hensgen, Finkel and Manber 1988) on n ranks: ⌈log2 n⌉, 0 for n = 1.
func DisseminationRounds(n int) int { return bits.Len(uint(n - 1)) }

// DisseminationPeers returns whom rank signals in round k (rank + 2^k) and
// whom it hears from (rank - 2^k), mod n. After rounds 0..k every rank has
// heard, directly or through others, from the 2^(k+1) - 1 ranks before it,
// so after ⌈log2 n⌉ rounds from all of them.
func DisseminationPeers(rank, k, n int) (to, from int) {
	d := (1 << k) % n
	return (rank + d) % n, (rank - d + n) % n
}
