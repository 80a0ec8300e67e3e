package topo

import "testing"

func TestRootFold(t *testing.T) {
	for n := 1; n <= 64; n++ {
		for root := range n {
			f := NewRootFold(n, root)
			if f.P&(f.P-1) != 0 || f.P > n || 2*f.P <= n || f.R != n-f.P {
				t.Fatalf("n=%d: P=%d R=%d", n, f.P, f.R)
			}
			if f.NewRank(root) < 0 {
				t.Fatalf("n=%d root=%d: the root sits out", n, root)
			}
			seen := make([]bool, f.P)
			for r := range n {
				x, p := f.NewRank(r), f.Partner(r)
				if p >= 0 && (f.Partner(p) != r || (x < 0) == (f.NewRank(p) < 0)) {
					t.Fatalf("n=%d root=%d: pair (%d, %d) does not have exactly one survivor", n, root, r, p)
				}
				if p < 0 && x < 0 {
					t.Fatalf("n=%d root=%d: unpaired %d sits out", n, root, r)
				}
				if x < 0 {
					continue
				}
				if x >= f.P || seen[x] || f.OldRank(x) != r {
					t.Fatalf("n=%d root=%d: rank %d is survivor %d (OldRank %d)", n, root, r, x, f.OldRank(x))
				}
				seen[x] = true
			}
			checkHalvingGather(t, f)
		}
	}
}

// checkHalvingGather simulates the block windows: halving leaves survivor
// x with block x, and the gather brings every block to the root exactly once.
func checkHalvingGather(t *testing.T, f RootFold) {
	t.Helper()
	lo, hi := make([]int, f.P), make([]int, f.P)
	for x := range f.P {
		lo[x], hi[x] = 0, f.P
	}
	for m := f.P / 2; m >= 1; m /= 2 {
		for x := range f.P {
			y, keep, give := f.Halving(x, m)
			if y2, keep2, give2 := f.Halving(y, m); y2 != x || keep2 != give || give2 != keep {
				t.Fatalf("n=%d m=%d: halving of %d and %d do not match", f.N, m, x, y)
			}
			if hi[x]-lo[x] != 2*m || (keep != lo[x] && keep != lo[x]+m) || keep+give != 2*lo[x]+m {
				t.Fatalf("n=%d m=%d: %d holds [%d, %d), keeps %d gives %d", f.N, m, x, lo[x], hi[x], keep, give)
			}
		}
		for x := range f.P {
			_, keep, _ := f.Halving(x, m)
			lo[x], hi[x] = keep, keep+m
		}
	}
	have := make([][]bool, f.P) // have[x][y]: x holds block y
	for x := range f.P {
		if lo[x] != x || hi[x] != x+1 {
			t.Fatalf("n=%d: after halving %d holds [%d, %d)", f.N, x, lo[x], hi[x])
		}
		have[x] = make([]bool, f.P)
		have[x][x] = true
	}
	for m := 1; m < f.P; m *= 2 {
		for x := range f.P {
			y, send, active := f.Gather(x, m)
			if !active {
				continue
			}
			y2, send2, active2 := f.Gather(y, m)
			if !active2 || y2 != x || send2 == send {
				t.Fatalf("n=%d m=%d: gather partners %d and %d do not match", f.N, m, x, y)
			}
			if send {
				if x == f.NewRank(f.Root) {
					t.Fatalf("n=%d: the root sends", f.N)
				}
				continue
			}
			for b := y &^ (m - 1); b < y&^(m-1)+m; b++ {
				if !have[y][b] || have[x][b] {
					t.Fatalf("n=%d m=%d: %d gets block %d from %d (held %v, had %v)", f.N, m, x, b, y, have[y][b], have[x][b])
				}
				have[x][b] = true
			}
		}
	}
	for b, h := range have[f.NewRank(f.Root)] {
		if !h {
			t.Fatalf("n=%d root=%d: block %d never reaches the root", f.N, f.Root, b)
		}
	}
}
