package topo

import "testing"

// TestRingAllgather checks, for every size and rank, that the ring's
// neighbours are inverse, that what rank sends at step s is what its right
// neighbour receives at step s, that it only forwards blocks it has, and
// that it ends with every block exactly once.
func TestRingAllgather(t *testing.T) {
	for n := 1; n <= 64; n++ {
		for r := range n {
			g := Ring{r, n}
			right, left := Ring{g.Right(), n}, Ring{g.Left(), n}
			if right.Left() != r || left.Right() != r {
				t.Fatalf("n=%d rank %d: left %d and right %d are not inverse", n, r, g.Left(), g.Right())
			}
			if g.Steps() != n-1 {
				t.Fatalf("n=%d: %d steps", n, g.Steps())
			}
			have := map[int]bool{r: true}
			for s := range g.Steps() {
				if b := g.SendBlock(s); !have[b] {
					t.Fatalf("n=%d rank %d step %d: sends block %d it does not have", n, r, s, b)
				}
				if g.SendBlock(s) != right.RecvBlock(s) {
					t.Fatalf("n=%d rank %d step %d: sends block %d, right receives %d", n, r, s, g.SendBlock(s), right.RecvBlock(s))
				}
				b := g.RecvBlock(s)
				if have[b] {
					t.Fatalf("n=%d rank %d step %d: receives block %d twice", n, r, s, b)
				}
				have[b] = true
			}
			if len(have) != n {
				t.Fatalf("n=%d rank %d: ends with %d of %d blocks", n, r, len(have), n)
			}
		}
	}
}

func TestRingMod(t *testing.T) {
	for n := 1; n <= 64; n++ {
		for a := -3 * n; a <= 3*n; a++ {
			m := ringMod(a, n)
			if m < 0 || m >= n || (a-m)%n != 0 {
				t.Fatalf("ringMod(%d, %d) = %d", a, n, m)
			}
		}
	}
}
