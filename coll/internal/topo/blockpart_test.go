package topo

import "testing"

func TestBlockPart(t *testing.T) {
	for n := 1; n <= 64; n++ {
		for _, count := range []int{0, 1, 3, n - 1, n, n + 1, 2*n + 3, 1000} {
			if count < 0 {
				continue
			}
			next := 0
			for j := range n {
				lo, hi := BlockPart(j, count, n)
				if lo != next || hi < lo || hi-lo > count/n+1 || hi-lo < count/n {
					t.Fatalf("n=%d count=%d: block %d is [%d, %d) after %d", n, count, j, lo, hi, next)
				}
				next = hi
			}
			if next != count {
				t.Fatalf("n=%d count=%d: blocks end at %d", n, count, next)
			}
		}
	}
}
