package topo

import "testing"

func TestBlock(t *testing.T) {
	for n := 1; n <= recdblMaxSize; n++ {
		for count := range 3*recdblMaxSize + 2 {
			off := 0
			first, _ := Block(count, n, 0)
			if first != 0 {
				t.Fatalf("count=%d n=%d: block 0 at %d", count, n, first)
			}
			prev := count + 1
			for i := range n {
				o, l := Block(count, n, i)
				if o != off || o != BlockOff(count, n, i) {
					t.Fatalf("count=%d n=%d: block %d at %d, want %d", count, n, i, o, off)
				}
				if l > prev || l < count/n || l > count/n+1 {
					t.Fatalf("count=%d n=%d: block %d has %d elements after %d", count, n, i, l, prev)
				}
				prev = l
				off += l
			}
			if off != count || BlockOff(count, n, n) != count {
				t.Fatalf("count=%d n=%d: blocks cover %d, end at %d", count, n, off, BlockOff(count, n, n))
			}
		}
	}
}

func TestPieces(t *testing.T) {
	for length := range 100 {
		for per := -1; per <= 24; per++ {
			k := Pieces(length, per)
			want := 0
			switch {
			case length == 0:
			case per <= 0:
				want = 1
			default:
				want = (length + per - 1) / per
			}
			if k != want {
				t.Fatalf("length=%d per=%d: %d pieces, want %d", length, per, k, want)
			}
			off := 0
			for j := range k {
				o, n := Piece(length, per, j)
				if o != off || n <= 0 || per > 0 && n > per || per > 0 && j < k-1 && n != per {
					t.Fatalf("length=%d per=%d: piece %d is [%d, +%d) after %d", length, per, j, o, n, off)
				}
				off += n
			}
			if off != length {
				t.Fatalf("length=%d per=%d: pieces cover %d", length, per, off)
			}
		}
	}
}
