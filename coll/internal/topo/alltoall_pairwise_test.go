package topo

import "testing"

// TestAlltoallPairwise checks on every size that the partners of a step
// are mutual (the rank I send to receives from me) and that over the steps
// each rank sends to and receives from every other rank exactly once.
func TestAlltoallPairwise(t *testing.T) {
	for n := 1; n <= 64; n++ {
		for r := range n {
			sent, got := map[int]bool{}, map[int]bool{}
			for k := 1; k <= AlltoallPairwiseSteps(n); k++ {
				to, from := AlltoallPairwise(r, n, k)
				if _, f := AlltoallPairwise(to, n, k); f != r {
					t.Fatalf("n=%d step %d: %d sends to %d, which receives from %d", n, k, r, to, f)
				}
				if tt, _ := AlltoallPairwise(from, n, k); tt != r {
					t.Fatalf("n=%d step %d: %d receives from %d, which sends to %d", n, k, r, from, tt)
				}
				if to == r || from == r || sent[to] || got[from] || to < 0 || to >= n || from < 0 || from >= n {
					t.Fatalf("n=%d rank %d step %d: to %d from %d again or out of range", n, r, k, to, from)
				}
				sent[to], got[from] = true, true
			}
			if len(sent) != n-1 || len(got) != n-1 {
				t.Fatalf("n=%d rank %d: sends to %d ranks, receives from %d", n, r, len(sent), len(got))
			}
		}
	}
}

// TestAlltoallInPlace checks that in-place swaps are mutual and sided (my
// right partner's left partner is me, or, with no left partners, my partner
// is XOR-symmetric) and cover every other rank exactly once.
func TestAlltoallInPlace(t *testing.T) {
	for n := 1; n <= 64; n++ {
		for r := range n {
			seen := map[int]bool{}
			for k := 1; k <= AlltoallInPlaceSteps(n); k++ {
				right, left := AlltoallInPlace(r, n, k)
				rr, rl := AlltoallInPlace(right, n, k)
				if rl != r && !(rl == -1 && rr == r) {
					t.Fatalf("n=%d step %d: %d's right partner %d has partners %d and %d", n, k, r, right, rr, rl)
				}
				if left >= 0 {
					if lr, _ := AlltoallInPlace(left, n, k); lr != r {
						t.Fatalf("n=%d step %d: %d's left partner %d has right partner %d", n, k, r, left, lr)
					}
				}
				for _, p := range []int{right, left} {
					if p == -1 && p == left {
						continue
					}
					if p < 0 || p >= n || p == r || seen[p] {
						t.Fatalf("n=%d rank %d step %d: partner %d out of range or again", n, r, k, p)
					}
					seen[p] = true
				}
			}
			if len(seen) != n-1 {
				t.Fatalf("n=%d rank %d: swaps with %d ranks", n, r, len(seen))
			}
		}
	}
}
