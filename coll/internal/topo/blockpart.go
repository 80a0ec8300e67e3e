package topo

// BlockPart returns the elements [lo, hi) of block j when count elements are
// cut into n contiguous blocks whose sizes differ by at most one: block j
// starts at ⌊j·count/n⌋. Blocks are empty when count < n; the blocks tile
// [0, count) in order.
func BlockPart(j, count, n int) (lo, hi int) {
	return j * count / n, (j + 1) * count / n
}
