package topo

import (
	"slices"
	"testing"
)

func TestBruckRounds(t *testing.T) {
	for n := 1; n <= 64; n++ {
		k := BruckRounds(n)
		if 1<<k < n || k > 0 && 1<<(k-1) >= n {
			t.Fatalf("BruckRounds(%d) = %d", n, k)
		}
	}
}

// TestBruckPeers checks that round k's partners are inverse: the rank a
// rank sends to receives from it.
func TestBruckPeers(t *testing.T) {
	for n := 1; n <= 64; n++ {
		for k := range BruckRounds(n) {
			for r := range n {
				to, from := BruckPeers(r, n, k)
				if _, f := BruckPeers(to, n, k); f != r {
					t.Fatalf("n=%d k=%d: %d sends to %d, which receives from %d", n, k, r, to, f)
				}
				if tt, _ := BruckPeers(from, n, k); tt != r {
					t.Fatalf("n=%d k=%d: %d receives from %d, which sends to %d", n, k, r, from, tt)
				}
			}
		}
	}
}

// TestBruckAllgather runs the allgather on every size with each rank's
// buffer holding block numbers (-1: empty): a rank sends only filled
// positions, fills each position exactly once, finds at position i the
// block BruckGatherBlock names, and ends full.
func TestBruckAllgather(t *testing.T) {
	for n := 1; n <= 64; n++ {
		buf := make([][]int, n)
		for r := range n {
			buf[r] = slices.Repeat([]int{-1}, n)
			buf[r][0] = r
		}
		for k := range BruckRounds(n) {
			next := make([][]int, n)
			for r := range n {
				next[r] = slices.Clone(buf[r])
			}
			for r := range n {
				g := BruckAllgatherRound(r, n, k)
				if g.Off != 1<<k || g.Count < 1 || g.Off+g.Count > n {
					t.Fatalf("n=%d rank %d round %d: %+v", n, r, k, g)
				}
				if s := BruckAllgatherRound(g.From, n, k); s.To != r || s.Count != g.Count {
					t.Fatalf("n=%d rank %d round %d: receives %d blocks from %d, which sends %d to %d", n, r, k, g.Count, g.From, s.Count, s.To)
				}
				for i := range g.Count {
					b := buf[g.From][i]
					if b < 0 {
						t.Fatalf("n=%d round %d: rank %d sends empty position %d", n, k, g.From, i)
					}
					if next[r][g.Off+i] >= 0 {
						t.Fatalf("n=%d round %d: rank %d fills position %d twice", n, k, r, g.Off+i)
					}
					next[r][g.Off+i] = b
				}
			}
			buf = next
		}
		for r := range n {
			for i, b := range buf[r] {
				if b != BruckGatherBlock(r, n, i) {
					t.Fatalf("n=%d rank %d: position %d holds block %d, want %d", n, r, i, b, BruckGatherBlock(r, n, i))
				}
			}
		}
	}
}

// TestBruckAlltoall moves (source, destination) pairs through the rounds
// exactly as the algorithm moves blocks and checks the final layout, the
// first-move rule, and the round sizes.
func TestBruckAlltoall(t *testing.T) {
	type blk struct{ src, dst int }
	for n := 1; n <= 64; n++ {
		pos := make([][]blk, n)
		moved := make([][]bool, n)
		for r := range n {
			pos[r] = make([]blk, n)
			moved[r] = make([]bool, n)
			for i := range n {
				pos[r][i] = blk{r, BruckAlltoallDest(r, n, i)}
			}
		}
		most := 0
		for k := range BruckRounds(n) {
			ps := BruckAlltoallPositions(n, k)
			most = max(most, len(ps))
			if !slices.IsSorted(ps) {
				t.Fatalf("n=%d round %d: positions %v not increasing", n, k, ps)
			}
			next := make([][]blk, n)
			for r := range n {
				next[r] = slices.Clone(pos[r])
			}
			for r := range n {
				to, _ := BruckPeers(r, n, k)
				for _, i := range ps {
					if i <= 0 || i >= n || i&(1<<k) == 0 {
						t.Fatalf("n=%d round %d: position %d", n, k, i)
					}
					if first := BruckAlltoallFirstMove(i) == k; first == moved[r][i] {
						t.Fatalf("n=%d rank %d round %d: position %d first move is round %d", n, r, k, i, BruckAlltoallFirstMove(i))
					}
					moved[r][i] = true
					next[to][i] = pos[r][i]
				}
			}
			pos = next
		}
		if most != BruckAlltoallMaxMoved(n) {
			t.Fatalf("n=%d: BruckAlltoallMaxMoved = %d, want %d", n, BruckAlltoallMaxMoved(n), most)
		}
		for r := range n {
			for i, b := range pos[r] {
				if want := (blk{BruckAlltoallSource(r, n, i), r}); b != want {
					t.Fatalf("n=%d rank %d: position %d holds %+v, want %+v", n, r, i, b, want)
				}
				if moved[r][i] != (i != 0) {
					t.Fatalf("n=%d rank %d: position %d moved=%v", n, r, i, moved[r][i])
				}
			}
		}
	}
}
