package topo

import "testing"

func TestDissemination(t *testing.T) {
	for n := 1; n <= 64; n++ {
		rounds := DisseminationRounds(n)
		if n > 1 && (1<<rounds < n || 1<<(rounds-1) >= n) || n == 1 && rounds != 0 {
			t.Fatalf("n=%d: %d rounds", n, rounds)
		}
		// heard[r] is the set of ranks whose arrival r knows of
		heard := make([][]bool, n)
		for r := range heard {
			heard[r] = make([]bool, n)
			heard[r][r] = true
		}
		for k := range rounds {
			next := make([][]bool, n)
			for r := range n {
				to, from := DisseminationPeers(r, k, n)
				if to == r || from == r {
					t.Fatalf("n=%d round %d: rank %d signals itself", n, k, r)
				}
				// partners are symmetric: r hears from the rank that signals r
				if to2, _ := DisseminationPeers(from, k, n); to2 != r {
					t.Fatalf("n=%d round %d: %d hears from %d, which signals %d", n, k, r, from, to2)
				}
				next[r] = append([]bool(nil), heard[r]...)
				for x, h := range heard[from] {
					next[r][x] = next[r][x] || h
				}
				// a rank signals a given peer at most once over all rounds
				for j := range k {
					if t2, _ := DisseminationPeers(r, j, n); t2 == to {
						t.Fatalf("n=%d: rank %d signals %d in rounds %d and %d", n, r, to, j, k)
					}
				}
			}
			heard = next
		}
		for r := range n {
			for x, h := range heard[r] {
				if !h {
					t.Fatalf("n=%d: after %d rounds rank %d has not heard from %d", n, rounds, r, x)
				}
			}
		}
	}
}
