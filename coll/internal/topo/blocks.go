package topo

// Block returns block i of count elements split into n near-equal blocks:
// the first count%n blocks hold one element more than the others, so
// lengths differ by at most one and some are 0 when count < n (MPICH's
// and Open MPI's split for ring and Rabenseifner algorithms).
func Block(count, n, i int) (off, length int) {
	q, r := count/n, count%n
	length = q
	if i < r {
		length++
	}
	return i*q + min(i, r), length
}

// BlockOff returns the offset of block i, for 0 ≤ i ≤ n; BlockOff(count,
// n, n) is count, so blocks [i, j) span [BlockOff(i), BlockOff(j)).
func BlockOff(count, n, i int) int {
	off, _ := Block(count, n, i)
	return off
}

// Pieces returns how many pieces of at most per units make up length
// units: 0 for an empty length, 1 when per ≤ 0 (no bound).
func Pieces(length, per int) int {
	switch {
	case length <= 0:
		return 0
	case per <= 0:
		return 1
	}
	return (length + per - 1) / per
}

// Piece returns piece k of Pieces(length, per): every piece but the last
// is per units long.
func Piece(length, per, k int) (off, n int) {
	if per <= 0 {
		return 0, length
	}
	off = k * per
	return off, min(per, length-off)
}
