package topo

import "testing"

func TestBinomial(t *testing.T) {
	for n := 1; n <= 64; n++ {
		for root := range n {
			tr := Binomial{N: n, Root: root}
			reached := make([]int, n) // times each rank is someone's child
			for r := range n {
				if tr.Abs(tr.Rel(r)) != r {
					t.Fatalf("n=%d root=%d: Abs(Rel(%d)) = %d", n, root, r, tr.Abs(tr.Rel(r)))
				}
				p := tr.Parent(r)
				if (p < 0) != (r == root) {
					t.Fatalf("n=%d root=%d: parent of %d is %d", n, root, r, p)
				}
				cs := tr.Children(r)
				v, sub := tr.Rel(r), 1 // r's subtree is itself plus its children's
				for i, c := range cs {
					reached[c]++
					if tr.Parent(c) != r {
						t.Fatalf("n=%d root=%d: child %d of %d has parent %d", n, root, c, r, tr.Parent(c))
					}
					// children's subtrees tile [v+1, v+Subtree(r)) in order
					if tr.Rel(c) != v+sub {
						t.Fatalf("n=%d root=%d: child %d of %d starts at %d, want %d", n, root, c, r, tr.Rel(c), v+sub)
					}
					if s := tr.Subtree(c); s > 1<<i || s < 1 || (i < len(cs)-1 && s != 1<<i) {
						t.Fatalf("n=%d root=%d: child %d (#%d) of %d has a subtree of %d", n, root, c, i, r, s)
					}
					sub += tr.Subtree(c)
				}
				if sub != tr.Subtree(r) {
					t.Fatalf("n=%d root=%d: subtree of %d is %d, children cover %d", n, root, r, tr.Subtree(r), sub)
				}
				// the path to the root is at most ⌈log2 n⌉ long and ends at the root
				hops := 0
				for x := r; x != root; x = tr.Parent(x) {
					if hops++; hops > 6 {
						t.Fatalf("n=%d root=%d: %d does not reach the root", n, root, r)
					}
				}
			}
			if tr.Subtree(root) != n {
				t.Fatalf("n=%d root=%d: root's subtree is %d", n, root, tr.Subtree(root))
			}
			for r, k := range reached {
				if r == root && k != 0 || r != root && k != 1 {
					t.Fatalf("n=%d root=%d: rank %d is a child %d times", n, root, r, k)
				}
			}
		}
	}
}
