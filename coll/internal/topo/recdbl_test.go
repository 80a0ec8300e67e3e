package topo

import "testing"

const recdblMaxSize = 64

// rankSpan is a range [lo, hi) of original ranks.
type rankSpan struct{ lo, hi int }

func TestRecDblFold(t *testing.T) {
	for n := 1; n <= recdblMaxSize; n++ {
		f := NewRecDbl(n)
		if f.Pof2&(f.Pof2-1) != 0 || f.Pof2 > n || 2*f.Pof2 <= n || f.Rem != n-f.Pof2 || 1<<f.Rounds != f.Pof2 {
			t.Fatalf("n=%d: bad fold %+v", n, f)
		}
		seen := make([]int, f.Pof2)
		for r := range n {
			v := f.NewRank(r)
			switch f.Role(r) {
			case Extra:
				if v != -1 || r == 0 || f.Role(r-1) != Host || r >= 2*f.Rem {
					t.Fatalf("n=%d rank %d: extra with newrank %d, rank-1 %v", n, r, v, f.Role(r-1))
				}
				continue
			case Host:
				if r+1 >= n || f.Role(r+1) != Extra {
					t.Fatalf("n=%d rank %d: host without an extra", n, r)
				}
			}
			if v < 0 || v >= f.Pof2 || f.OrigRank(v) != r {
				t.Fatalf("n=%d rank %d: newrank %d maps back to %d", n, r, v, f.OrigRank(v))
			}
			seen[v]++
		}
		for v, c := range seen {
			if c != 1 {
				t.Fatalf("n=%d: newrank %d taken %d times", n, v, c)
			}
		}
		// participants stand for consecutive, increasing rank ranges that
		// cover every rank once: the fold keeps rank order
		if f.OrigRank(0) != 0 || f.OrigRank(f.Pof2) != n {
			t.Fatalf("n=%d: ranges span [%d, %d)", n, f.OrigRank(0), f.OrigRank(f.Pof2))
		}
		for v := range f.Pof2 {
			lo, hi := f.OrigRank(v), f.OrigRank(v+1)
			want := 1
			if f.Role(lo) == Host {
				want = 2
			}
			if hi-lo != want {
				t.Fatalf("n=%d: newrank %d stands for ranks [%d, %d)", n, v, lo, hi)
			}
		}
	}
}

func TestRecDblDoublingKeepsOrder(t *testing.T) {
	for n := 1; n <= recdblMaxSize; n++ {
		f := NewRecDbl(n)
		held := make([]rankSpan, f.Pof2)
		for v := range held {
			held[v] = rankSpan{f.OrigRank(v), f.OrigRank(v + 1)}
		}
		for i := range f.Rounds {
			next := make([]rankSpan, f.Pof2)
			for v := range held {
				q := f.Partner(v, i)
				if q < 0 || q >= f.Pof2 || q == v || f.Partner(q, i) != v {
					t.Fatalf("n=%d round %d: partner of %d is %d, whose partner is %d", n, i, v, q, f.Partner(q, i))
				}
				// the lower side's data is the left operand: the two
				// ranges must be adjacent in that order
				left, right := held[q], held[v]
				if q > v {
					left, right = right, left
				}
				if left.hi != right.lo {
					t.Fatalf("n=%d round %d: %d and %d hold %v and %v, not adjacent", n, i, v, q, left, right)
				}
				next[v] = rankSpan{left.lo, right.hi}
			}
			held = next
		}
		for v, h := range held {
			if h != (rankSpan{0, n}) {
				t.Fatalf("n=%d: newrank %d ends with ranks %v", n, v, h)
			}
		}
	}
}

func TestRecDblHalving(t *testing.T) {
	for n := 1; n <= recdblMaxSize; n++ {
		f := NewRecDbl(n)
		p := f.Pof2
		// has[v][b][w]: v's copy of block b includes w's contribution
		has := make([][][]bool, p)
		for v := range p {
			if lo, hi := f.HalvingRange(v, -1); lo != 0 || hi != p {
				t.Fatalf("n=%d: newrank %d starts with [%d, %d)", n, v, lo, hi)
			}
			has[v] = make([][]bool, p)
			for b := range p {
				has[v][b] = make([]bool, p)
				has[v][b][v] = true
			}
		}
		for i := range f.Rounds {
			next := make([][][]bool, p)
			for v := range p {
				q := f.HalvingPartner(v, i)
				if q < 0 || q >= p || q == v || f.HalvingPartner(q, i) != v {
					t.Fatalf("n=%d round %d: halving partner of %d is %d", n, i, v, q)
				}
				plo, phi := f.HalvingRange(v, i-1)
				if qlo, qhi := f.HalvingRange(q, i-1); qlo != plo || qhi != phi {
					t.Fatalf("n=%d round %d: %d and %d split different ranges", n, i, v, q)
				}
				klo, khi := f.HalvingRange(v, i)
				glo, ghi := f.HalvingRange(q, i)
				if v < klo || v >= khi || khi-klo != (phi-plo)/2 || min(klo, glo) != plo || max(khi, ghi) != phi || khi != glo && ghi != klo {
					t.Fatalf("n=%d round %d: %d splits [%d, %d) into keep [%d, %d) and give [%d, %d)", n, i, v, plo, phi, klo, khi, glo, ghi)
				}
				next[v] = make([][]bool, p)
				for b := klo; b < khi; b++ {
					next[v][b] = make([]bool, p)
					for w := range p {
						next[v][b][w] = has[v][b][w] || has[q][b][w]
						if has[v][b][w] && has[q][b][w] {
							t.Fatalf("n=%d round %d: block %d has %d's contribution twice", n, i, b, w)
						}
					}
				}
			}
			has = next
		}
		for v := range p {
			if lo, hi := f.HalvingRange(v, f.Rounds-1); lo != v || hi != v+1 {
				t.Fatalf("n=%d: newrank %d ends with [%d, %d)", n, v, lo, hi)
			}
			for w := range p {
				if !has[v][v][w] {
					t.Fatalf("n=%d: block %d misses %d's contribution", n, v, w)
				}
			}
		}
	}
}

func TestXorPartnerScan(t *testing.T) {
	for n := 1; n <= recdblMaxSize; n++ {
		rounds := XorRounds(n)
		if 1<<rounds < n || rounds > 0 && 1<<(rounds-1) >= n {
			t.Fatalf("n=%d: %d rounds", n, rounds)
		}
		// partial: the group's contributions a rank passes on; incl, excl:
		// its scan and exscan results, as MPICH's algorithms build them
		partial := make([]rankSpan, n)
		incl := make([]rankSpan, n)
		excl := make([]rankSpan, n)
		for r := range n {
			partial[r], incl[r], excl[r] = rankSpan{r, r + 1}, rankSpan{r, r + 1}, rankSpan{r, r}
		}
		for i := range rounds {
			next := append([]rankSpan(nil), partial...)
			for r := range n {
				q := XorPartner(r, n, i)
				if q == -1 {
					if r^1<<i < n {
						t.Fatalf("n=%d round %d: rank %d lacks partner %d", n, i, r, r^1<<i)
					}
					continue
				}
				if XorPartner(q, n, i) != r {
					t.Fatalf("n=%d round %d: partners %d, %d not symmetric", n, i, r, q)
				}
				left, right := partial[q], partial[r]
				if q > r {
					left, right = right, left
				}
				if left.hi != right.lo {
					t.Fatalf("n=%d round %d: partials %v %v not adjacent", n, i, left, right)
				}
				next[r] = rankSpan{left.lo, right.hi}
				if q < r {
					if partial[q].hi != incl[r].lo || partial[q].hi != excl[r].lo {
						t.Fatalf("n=%d round %d: rank %d prepends %v to %v", n, i, r, partial[q], incl[r])
					}
					incl[r].lo, excl[r].lo = partial[q].lo, partial[q].lo
				}
			}
			partial = next
		}
		for r := range n {
			if incl[r] != (rankSpan{0, r + 1}) || excl[r] != (rankSpan{0, r}) {
				t.Fatalf("n=%d: rank %d scans %v and exscans %v", n, r, incl[r], excl[r])
			}
		}
	}
}
