package op

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// naiveOffsets is the reference for a layout: the buffer offset of every
// packed byte of count elements, one byte at a time, from the raw runs
// (before any merging).
func naiveOffsets(runs [][2]int, extent, origin, count int) []int {
	var offs []int
	for e := range count {
		for _, r := range runs {
			for b := range r[1] {
				offs = append(offs, origin+e*extent+r[0]+b)
			}
		}
	}
	return offs
}

func layoutOf(runs [][2]int, extent int) Layout {
	var segs []Segment
	for _, r := range runs {
		segs = AppendSegment(segs, r[0], r[1])
	}
	return NewLayout(segs, extent)
}

// checkLayout packs and unpacks every range [pos, pos+n) of the stream and
// compares byte for byte with the naive offsets.
func checkLayout(t *testing.T, runs [][2]int, extent, count int) {
	t.Helper()
	l := layoutOf(runs, extent)
	lo, hi := l.Span(count)
	origin := -lo
	offs := naiveOffsets(runs, extent, origin, count)
	if len(offs) != count*l.Size() {
		t.Fatalf("%v extent %d: size %d, naive %d bytes per element", runs, extent, l.Size(), len(offs)/max(count, 1))
	}
	nlo, nhi := 0, 0 // the tight span of the naive offsets
	for i, o := range offs {
		if i == 0 || o < nlo {
			nlo = o
		}
		if i == 0 || o+1 > nhi {
			nhi = o + 1
		}
	}
	if len(offs) > 0 && (nlo != origin+lo || nhi != origin+hi) {
		t.Fatalf("%v extent %d count %d: span [%d,%d), naive [%d,%d)", runs, extent, count, lo, hi, nlo-origin, nhi-origin)
	}
	buf := make([]byte, hi-lo)
	for i := range buf {
		buf[i] = byte(i*7 + 3)
	}
	total := len(offs)
	for _, pos := range []int{0, 1, total / 3, total - 1} {
		if pos < 0 || pos > total {
			continue
		}
		for _, n := range []int{total - pos, 1, (total - pos) / 2} {
			if n < 0 || pos+n > total {
				continue
			}
			got := make([]byte, n)
			l.Pack(got, buf, origin, pos)
			want := make([]byte, n)
			for i := range want {
				want[i] = buf[offs[pos+i]]
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%v extent %d count %d pack [%d,+%d): got %v want %v", runs, extent, count, pos, n, got, want)
			}
			// unpack into a blank buffer: exactly the described bytes change
			dst := make([]byte, len(buf))
			ref := make([]byte, len(buf))
			src := make([]byte, n)
			for i := range src {
				src[i] = byte(200 + i)
			}
			l.Unpack(dst, origin, pos, src)
			for i := range src { // typemap order: a later byte to the same place wins
				ref[offs[pos+i]] = src[i]
			}
			if !bytes.Equal(dst, ref) {
				t.Fatalf("%v extent %d count %d unpack [%d,+%d): got %v want %v", runs, extent, count, pos, n, dst, ref)
			}
		}
	}
}

func TestLayoutTable(t *testing.T) {
	cases := []struct {
		name   string
		runs   [][2]int
		extent int
	}{
		{"empty", nil, 0},
		{"one run", [][2]int{{0, 8}}, 8},
		{"run with gap after", [][2]int{{0, 8}}, 24},
		{"two adjacent runs merge", [][2]int{{0, 4}, {4, 4}}, 8},
		{"reversed runs", [][2]int{{4, 4}, {0, 4}}, 8},
		{"holes", [][2]int{{0, 1}, {3, 2}, {9, 4}}, 16},
		{"negative offset", [][2]int{{-8, 8}, {8, 8}}, 32},
		{"negative extent", [][2]int{{0, 3}}, -5},
		{"interleaved elements", [][2]int{{0, 8}, {16, 8}}, 8},
		{"zero-length runs", [][2]int{{0, 0}, {2, 2}, {4, 0}}, 6},
	}
	for _, c := range cases {
		for _, count := range []int{0, 1, 2, 5} {
			t.Run(fmt.Sprintf("%s/count=%d", c.name, count), func(t *testing.T) {
				checkLayout(t, c.runs, c.extent, count)
			})
		}
	}
}

func TestLayoutMerges(t *testing.T) {
	l := layoutOf([][2]int{{0, 4}, {4, 4}, {8, 8}, {32, 8}, {40, 8}}, 48)
	if got := len(l.Segments()); got != 2 {
		t.Fatalf("segments %v: want 2 after merging", l.Segments())
	}
	if off, ok := l.Contiguous(1); ok {
		t.Fatalf("two segments reported contiguous at %d", off)
	}
	one := layoutOf([][2]int{{8, 4}, {12, 4}}, 8)
	if off, ok := one.Contiguous(3); !ok || off != 8 {
		t.Fatalf("dense layout: Contiguous(3) = %d, %v; want 8, true", off, ok)
	}
	gap := layoutOf([][2]int{{0, 4}}, 8)
	if _, ok := gap.Contiguous(2); ok {
		t.Fatal("elements with gaps between them reported contiguous")
	}
	if _, ok := gap.Contiguous(1); !ok {
		t.Fatal("one element of one run not contiguous")
	}
}

func randomRuns(rng *rand.Rand) ([][2]int, int, int) {
	runs := make([][2]int, rng.IntN(6))
	for i := range runs {
		runs[i] = [2]int{rng.IntN(40) - 10, rng.IntN(6)}
	}
	return runs, rng.IntN(50) - 10, rng.IntN(5)
}

func TestLayoutRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		runs, extent, count := randomRuns(rng)
		checkLayout(t, runs, extent, count)
	}
}

func FuzzLayout(f *testing.F) {
	f.Add(uint64(1), uint64(2))
	f.Add(uint64(7), uint64(99))
	f.Fuzz(func(t *testing.T, a, b uint64) {
		runs, extent, count := randomRuns(rand.New(rand.NewPCG(a, b)))
		checkLayout(t, runs, extent, count)
	})
}

func TestLayoutNoAllocs(t *testing.T) {
	l := layoutOf([][2]int{{0, 8}, {32, 8}}, 64)
	buf := make([]byte, 64*100)
	dst := make([]byte, 100*l.Size())
	if n := testing.AllocsPerRun(100, func() {
		l.Pack(dst, buf, 0, 0)
		l.Unpack(buf, 0, 0, dst)
	}); n != 0 {
		t.Fatalf("pack+unpack allocate %v times", n)
	}
}
