package topo

import "testing"

// TestAllgatherFoldRanks checks that participant numbers are a bijection
// onto [0, p), that partners are mutual, and that the participants' rank
// runs tile [0, n) in order.
func TestAllgatherFoldRanks(t *testing.T) {
	for n := 1; n <= 64; n++ {
		f := NewAllgatherFold(n)
		if f.P > n || 2*f.P <= n || f.P&(f.P-1) != 0 || 1<<f.Rounds() != f.P {
			t.Fatalf("n=%d: %+v, %d rounds", n, f, f.Rounds())
		}
		seen := map[int]bool{}
		for r := range n {
			j := f.NewRank(r)
			if f.Extra(r) != (j < 0) {
				t.Fatalf("n=%d rank %d: extra=%v but participant %d", n, r, f.Extra(r), j)
			}
			if p := f.Partner(r); p >= 0 && f.Partner(p) != r {
				t.Fatalf("n=%d: %d folds with %d, which folds with %d", n, r, p, f.Partner(p))
			} else if p >= 0 && f.Extra(r) == f.Extra(p) {
				t.Fatalf("n=%d: %d and its partner %d are both extras or both not", n, r, p)
			} else if f.Extra(r) && p < 0 {
				t.Fatalf("n=%d: extra %d has no partner", n, r)
			}
			if j < 0 {
				continue
			}
			if j >= f.P || seen[j] || f.Rank(j) != r {
				t.Fatalf("n=%d rank %d: participant %d (rank %d)", n, r, j, f.Rank(j))
			}
			seen[j] = true
			// rank stands for itself and, if it folds, its extra
			lo, hi := r, r+1
			if p := f.Partner(r); p >= 0 {
				lo = p
			}
			if f.Lo(j) != lo || f.Lo(j+1) != hi {
				t.Fatalf("n=%d participant %d: ranks [%d, %d), want [%d, %d)", n, j, f.Lo(j), f.Lo(j+1), lo, hi)
			}
		}
		if len(seen) != f.P || f.Lo(0) != 0 || f.Lo(f.P) != n {
			t.Fatalf("n=%d: %d participants, Lo(0)=%d, Lo(p)=%d", n, len(seen), f.Lo(0), f.Lo(f.P))
		}
	}
}

// TestAllgatherFoldRounds runs the folded allgather on block sets: the
// participants send only what they hold, receive only what they lack, the
// exchanges are mutual, and every rank ends with every block.
func TestAllgatherFoldRounds(t *testing.T) {
	for n := 1; n <= 64; n++ {
		f := NewAllgatherFold(n)
		have := make([][]bool, n)
		for r := range n {
			have[r] = make([]bool, n)
			have[r][r] = true
		}
		for r := range n { // fold
			if f.Extra(r) {
				have[f.Partner(r)][r] = true
			}
		}
		for k := range f.Rounds() {
			next := make([][]bool, n)
			for r := range n {
				next[r] = append([]bool(nil), have[r]...)
			}
			for r := range n {
				if f.Extra(r) {
					continue
				}
				d := f.Round(r, k)
				e := f.Round(d.Peer, k)
				if e.Peer != r || e.SendLo != d.RecvLo || e.SendHi != d.RecvHi || e.RecvLo != d.SendLo || e.RecvHi != d.SendHi {
					t.Fatalf("n=%d round %d: %d has %+v, its peer %+v", n, k, r, d, e)
				}
				for b := range n {
					sends := b >= d.SendLo && b < d.SendHi
					recvs := b >= d.RecvLo && b < d.RecvHi
					if sends && !have[r][b] {
						t.Fatalf("n=%d round %d: %d sends block %d it lacks", n, k, r, b)
					}
					if recvs && have[r][b] {
						t.Fatalf("n=%d round %d: %d receives block %d it has", n, k, r, b)
					}
					if recvs {
						next[r][b] = true
					}
				}
			}
			have = next
		}
		for r := range n { // unfold
			for b := range n {
				if f.Extra(r) {
					have[r][b] = have[f.Partner(r)][b]
				}
				if !have[r][b] {
					t.Fatalf("n=%d: rank %d ends without block %d", n, r, b)
				}
			}
		}
	}
}
