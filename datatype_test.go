package meshmpi

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// The reference for datatypes is MPI's definition, written out naively: a
// typemap is a list of entries (a basic element or an lb/ub marker at a
// byte displacement), each constructor replicates its old types' typemaps,
// and bounds, extent and packing are computed from the list entry by
// entry. It shares nothing with the layout compiler.

type tmEntry struct {
	mark  byte // 0: data; 'l', 'u': bound markers
	disp  int
	size  int
	align int
}

func shift(tm []tmEntry, d int) []tmEntry {
	out := make([]tmEntry, len(tm))
	for i, e := range tm {
		e.disp += d
		out[i] = e
	}
	return out
}

// naiveBounds applies MPI-4.1 §5.1.7's definition of lb, ub, and the true
// bounds of a typemap.
func naiveBounds(tm []tmEntry) (lb, ub, tlb, tub, size int) {
	var haveL, haveU, haveD bool
	var markL, markU, align = 0, 0, 1
	for _, e := range tm {
		switch e.mark {
		case 'l':
			if !haveL || e.disp < markL {
				markL = e.disp
			}
			haveL = true
		case 'u':
			if !haveU || e.disp > markU {
				markU = e.disp
			}
			haveU = true
		default:
			if !haveD || e.disp < tlb {
				tlb = e.disp
			}
			if !haveD || e.disp+e.size > tub {
				tub = e.disp + e.size
			}
			haveD = true
			size += e.size
			align = max(align, e.align)
		}
	}
	lb = tlb
	if haveL {
		lb = markL
	}
	if haveU {
		return lb, markU, tlb, tub, size
	}
	ub = tub
	if !haveD {
		ub = lb
	}
	for (ub-lb)%align != 0 {
		ub++
	}
	return lb, ub, tlb, tub, size
}

func naiveExtent(tm []tmEntry) int {
	lb, ub, _, _, _ := naiveBounds(tm)
	return ub - lb
}

// spec describes a datatype; it builds both the real one and the naive
// typemap.
type spec struct {
	kind           string
	pre            *Datatype
	count, bl, str int
	bls, displs    []int
	kids           []*spec
	lb, extent     int
}

func (s *spec) String() string {
	if s.kind == "pre" {
		return s.pre.String()
	}
	kids := ""
	for _, k := range s.kids {
		kids += " " + k.String()
	}
	return fmt.Sprintf("%s(%d,%d,%d,%v,%v,%d,%d%s)", s.kind, s.count, s.bl, s.str, s.bls, s.displs, s.lb, s.extent, kids)
}

func (s *spec) typemap() []tmEntry {
	if s.kind == "pre" {
		return []tmEntry{{disp: 0, size: s.pre.Size(), align: min(8, s.pre.Size())}}
	}
	var kid []tmEntry
	var ext int
	if len(s.kids) > 0 {
		kid = s.kids[0].typemap()
		ext = naiveExtent(kid)
	}
	var tm []tmEntry
	switch s.kind {
	case "contiguous":
		for i := range s.count {
			tm = append(tm, shift(kid, i*ext)...)
		}
	case "vector", "hvector":
		for i := range s.count {
			for j := range s.bl {
				d := (i*s.str + j) * ext
				if s.kind == "hvector" {
					d = i*s.str + j*ext
				}
				tm = append(tm, shift(kid, d)...)
			}
		}
	case "indexed", "hindexed", "indexed_block", "hindexed_block":
		for i, disp := range s.displs {
			n := s.bl
			if s.kind == "indexed" || s.kind == "hindexed" {
				n = s.bls[i]
			}
			for j := range n {
				d := (disp + j) * ext
				if s.kind[0] == 'h' {
					d = disp + j*ext
				}
				tm = append(tm, shift(kid, d)...)
			}
		}
	case "struct":
		for i, disp := range s.displs {
			k := s.kids[i].typemap()
			e := naiveExtent(k)
			for j := range s.bls[i] {
				tm = append(tm, shift(k, disp+j*e)...)
			}
		}
	case "resized":
		tm = append(tm, tmEntry{mark: 'l', disp: s.lb})
		for _, e := range kid {
			if e.mark == 0 {
				tm = append(tm, e)
			}
		}
		tm = append(tm, tmEntry{mark: 'u', disp: s.lb + s.extent})
	}
	return tm
}

func (s *spec) build() (*Datatype, error) {
	if s.kind == "pre" {
		return s.pre, nil
	}
	kids := make([]*Datatype, len(s.kids))
	for i, k := range s.kids {
		d, err := k.build()
		if err != nil {
			return nil, err
		}
		kids[i] = d
	}
	switch s.kind {
	case "contiguous":
		return Contiguous(s.count, kids[0])
	case "vector":
		return Vector(s.count, s.bl, s.str, kids[0])
	case "hvector":
		return Hvector(s.count, s.bl, s.str, kids[0])
	case "indexed":
		return Indexed(s.bls, s.displs, kids[0])
	case "hindexed":
		return Hindexed(s.bls, s.displs, kids[0])
	case "indexed_block":
		return IndexedBlock(s.bl, s.displs, kids[0])
	case "hindexed_block":
		return HindexedBlock(s.bl, s.displs, kids[0])
	case "struct":
		return Struct(s.bls, s.displs, kids)
	case "resized":
		return Resized(kids[0], s.lb, s.extent)
	}
	return nil, fmt.Errorf("no kind %q", s.kind)
}

// naiveOffsets lists the buffer offset of every packed byte of count
// elements whose first origin is at origin.
func naiveOffsets(tm []tmEntry, origin, count int) []int {
	ext := naiveExtent(tm)
	var offs []int
	for i := range count {
		for _, e := range tm {
			if e.mark == 0 {
				for b := range e.size {
					offs = append(offs, origin+i*ext+e.disp+b)
				}
			}
		}
	}
	return offs
}

func pre(d *Datatype) *spec { return &spec{kind: "pre", pre: d} }

var specTable = []*spec{
	pre(Float64),
	pre(Byte),
	{kind: "contiguous", count: 5, kids: []*spec{pre(Int32)}},
	{kind: "contiguous", count: 0, kids: []*spec{pre(Int32)}},
	{kind: "vector", count: 4, bl: 1, str: 3, kids: []*spec{pre(Float64)}},
	{kind: "vector", count: 3, bl: 2, str: 5, kids: []*spec{pre(Int16)}},
	{kind: "vector", count: 3, bl: 2, str: -4, kids: []*spec{pre(Int32)}},
	{kind: "vector", count: 3, bl: 2, str: 2, kids: []*spec{pre(Int8)}}, // one run
	{kind: "hvector", count: 3, bl: 1, str: 13, kids: []*spec{pre(Int32)}},
	{kind: "indexed", bls: []int{2, 0, 1, 3}, displs: []int{5, 1, 0, 9}, kids: []*spec{pre(Uint16)}},
	{kind: "hindexed", bls: []int{1, 2}, displs: []int{24, 3}, kids: []*spec{pre(Float32)}},
	{kind: "indexed_block", bl: 2, displs: []int{4, 0, 8}, kids: []*spec{pre(Complex64)}},
	{kind: "hindexed_block", bl: 1, displs: []int{-8, 16}, kids: []*spec{pre(Int64)}},
	{kind: "struct", bls: []int{1, 1, 3}, displs: []int{0, 8, 16}, kids: []*spec{pre(Int32), pre(Float64), pre(Int16)}},
	{kind: "struct", bls: []int{1, 2}, displs: []int{0, 4}, kids: []*spec{pre(Int32), pre(Int8)}}, // padded to 8
	{kind: "resized", lb: 0, extent: 8, kids: []*spec{{kind: "vector", count: 2, bl: 1, str: 2, kids: []*spec{pre(Float64)}}}},
	{kind: "resized", lb: -4, extent: 20, kids: []*spec{pre(Int32)}},
	{kind: "resized", lb: 2, extent: 0, kids: []*spec{pre(Int16)}},
	{kind: "contiguous", count: 3, kids: []*spec{{kind: "resized", lb: 8, extent: -8, kids: []*spec{pre(Float64)}}}}, // negative extent: elements at decreasing addresses
	// nested: markers are sticky through later constructors
	{kind: "contiguous", count: 3, kids: []*spec{{kind: "resized", lb: 0, extent: 12, kids: []*spec{pre(Int64)}}}},
	{kind: "vector", count: 2, bl: 2, str: 3, kids: []*spec{
		{kind: "struct", bls: []int{1, 1}, displs: []int{4, 0}, kids: []*spec{pre(Int8), pre(Int32)}}}},
	{kind: "struct", bls: []int{2, 1}, displs: []int{0, 40}, kids: []*spec{
		{kind: "resized", lb: 0, extent: 16, kids: []*spec{pre(Float64)}},
		{kind: "indexed", bls: []int{1, 1}, displs: []int{2, 0}, kids: []*spec{pre(Int16)}}}},
	{kind: "hvector", count: 2, bl: 1, str: 100, kids: []*spec{
		{kind: "vector", count: 3, bl: 1, str: 2, kids: []*spec{
			{kind: "contiguous", count: 2, kids: []*spec{pre(Uint8)}}}}}},
}

// checkSpec compares a built datatype with the naive typemap: size,
// bounds, and pack and unpack of several counts, byte for byte.
func checkSpec(t *testing.T, s *spec) {
	t.Helper()
	d, err := s.build()
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	if err := d.Commit(); err != nil {
		t.Fatalf("%s: commit: %v", s, err)
	}
	tm := s.typemap()
	lb, ub, tlb, tub, size := naiveBounds(tm)
	got := [5]int{d.LowerBound(), d.Extent(), d.TrueLowerBound(), d.TrueExtent(), d.Size()}
	want := [5]int{lb, ub - lb, tlb, tub - tlb, size}
	if got != want {
		t.Fatalf("%s: (lb, extent, true lb, true extent, size) = %v, want %v", s, got, want)
	}
	for _, count := range []int{0, 1, 3} {
		offs := naiveOffsets(tm, 0, count)
		lo, hi := 0, 0
		for i, o := range offs {
			if i == 0 || o < lo {
				lo = o
			}
			hi = max(hi, o+1)
		}
		origin := -lo + 3 // a margin before and after
		buf := make([]byte, hi-lo+6)
		for i := range buf {
			buf[i] = byte(i*31 + 7)
		}
		var tb typedBuf
		if err := tb.check(buf, origin, count, d); err != nil {
			t.Fatalf("%s count %d: %v", s, count, err)
		}
		packed := make([]byte, tb.bytes)
		tb.pack(packed)
		want := make([]byte, len(offs))
		for i, o := range offs {
			want[i] = buf[origin+o]
		}
		if !bytes.Equal(packed, want) {
			t.Fatalf("%s count %d: pack %v, want %v", s, count, packed, want)
		}
		if tb.contig && !bytes.Equal(tb.direct(), want) {
			t.Fatalf("%s count %d: reported contiguous but the run is %v, want %v", s, count, tb.direct(), want)
		}
		dst := make([]byte, len(buf))
		ref := make([]byte, len(buf))
		tb.buf = dst
		tb.unpack(want)
		for i, o := range offs {
			ref[origin+o] = want[i]
		}
		if !bytes.Equal(dst, ref) {
			t.Fatalf("%s count %d: unpack wrote %v, want %v", s, count, dst, ref)
		}
	}
}

func TestDatatypeConstructors(t *testing.T) {
	for i, s := range specTable {
		t.Run(fmt.Sprintf("%d/%s", i, s), func(t *testing.T) { checkSpec(t, s) })
	}
}

// randomSpec builds a random nested type, depth at most depth.
func randomSpec(rng *rand.Rand, depth int) *spec {
	pres := []*Datatype{Byte, Int16, Int32, Float64, Complex128}
	if depth == 0 || rng.IntN(4) == 0 {
		return pre(pres[rng.IntN(len(pres))])
	}
	kid := randomSpec(rng, depth-1)
	ints := func(n, lo, hi int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = lo + rng.IntN(hi-lo+1)
		}
		return s
	}
	switch rng.IntN(8) {
	case 0:
		return &spec{kind: "contiguous", count: rng.IntN(4), kids: []*spec{kid}}
	case 1:
		return &spec{kind: "vector", count: rng.IntN(4), bl: rng.IntN(3), str: rng.IntN(9) - 4, kids: []*spec{kid}}
	case 2:
		return &spec{kind: "hvector", count: rng.IntN(4), bl: rng.IntN(3), str: rng.IntN(80) - 40, kids: []*spec{kid}}
	case 3:
		n := rng.IntN(4)
		return &spec{kind: "indexed", bls: ints(n, 0, 3), displs: ints(n, -3, 6), kids: []*spec{kid}}
	case 4:
		n := rng.IntN(4)
		return &spec{kind: "hindexed_block", bl: rng.IntN(3), displs: ints(n, -30, 60), kids: []*spec{kid}}
	case 5:
		n := 1 + rng.IntN(3)
		kids := []*spec{kid}
		for len(kids) < n {
			kids = append(kids, randomSpec(rng, depth-1))
		}
		return &spec{kind: "struct", bls: ints(n, 0, 2), displs: ints(n, -20, 60), kids: kids}
	case 6:
		return &spec{kind: "resized", lb: rng.IntN(17) - 8, extent: rng.IntN(48) - 8, kids: []*spec{kid}}
	}
	return &spec{kind: "indexed_block", bl: 1 + rng.IntN(2), displs: ints(rng.IntN(4), 0, 5), kids: []*spec{kid}}
}

// Property test of the layout compiler: random nested types against the
// naive typemap.
func TestDatatypeRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 1500 {
		checkSpec(t, randomSpec(rng, 3))
	}
}

func FuzzDatatype(f *testing.F) {
	f.Add(uint64(1), uint64(1))
	f.Fuzz(func(t *testing.T, a, b uint64) {
		checkSpec(t, randomSpec(rand.New(rand.NewPCG(a, b)), 3))
	})
}

// A Go struct's layout described with Struct and unsafe.Offsetof has the
// Go struct's size as its extent (the alignment padding of MPI's ε).
func TestDatatypeGoStruct(t *testing.T) {
	type rec struct {
		A int32
		B float64
		C [3]int16
	}
	var r rec
	d, err := Struct([]int{1, 1, 3}, []int{int(unsafe.Offsetof(r.A)), int(unsafe.Offsetof(r.B)), int(unsafe.Offsetof(r.C))},
		[]*Datatype{Int32, Float64, Int16})
	if err != nil {
		t.Fatal(err)
	}
	if d.Extent() != int(unsafe.Sizeof(r)) || d.Size() != 4+8+6 {
		t.Fatalf("extent %d size %d, want %d and 18", d.Extent(), d.Size(), unsafe.Sizeof(r))
	}
	if got := DatatypeOf[Loc[float64]](); got.Size() != 16 || got.Extent() != 16 {
		t.Fatalf("Loc[float64]: size %d extent %d", got.Size(), got.Extent())
	}
	if DatatypeOf[float64]() != Float64 || DatatypeOf[uint8]() != Uint8 {
		t.Fatal("DatatypeOf does not return the predefined types")
	}
}

// The compiled layout merges what is one run of memory: a contiguous type
// of contiguous types, a vector whose blocks touch, a resized type whose
// extent equals its size.
func TestDatatypeContiguousRecognised(t *testing.T) {
	mk := committed(t)
	row := mk(Contiguous(10, Float64))
	cases := []struct {
		d      *Datatype
		count  int
		contig bool
	}{
		{Float64, 100, true},
		{row, 7, true},
		{mk(Contiguous(3, row)), 2, true},
		{mk(Vector(4, 3, 3, Int32)), 5, true},
		{mk(Vector(4, 2, 3, Int32)), 1, false},
		{mk(Resized(mk(Vector(2, 1, 2, Float64)), 0, 8)), 1, false},
		{mk(Struct([]int{1, 1}, []int{0, 4}, []*Datatype{Int32, Float32})), 9, true},
		{mk(Struct([]int{1, 1}, []int{4, 0}, []*Datatype{Int32, Float32})), 1, false}, // typemap order differs from memory order
		{mk(Hvector(2, 1, 16, Float64)), 1, false},
		{mk(Hvector(1, 1, 16, Float64)), 1, true},
	}
	for i, c := range cases {
		lay, err := c.d.layout(c.count)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := lay.Contiguous(c.count); ok != c.contig {
			t.Errorf("%d: %d × %s contiguous = %v, want %v (segments %v)", i, c.count, c.d, ok, c.contig, lay.Segments())
		}
	}
}

func TestDatatypeMisuse(t *testing.T) {
	vec, err := Vector(2, 1, 2, Float64)
	if err != nil {
		t.Fatal(err)
	}
	freed, _ := Contiguous(2, Int32)
	if err := freed.Free(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		err  error
		want error
	}{
		{"negative count", second(Contiguous(-1, Int32)), ErrCount},
		{"negative vector count", second(Vector(-2, 1, 1, Int32)), ErrCount},
		{"negative block length", second(Vector(2, -1, 1, Int32)), ErrCount},
		{"negative indexed block", second(Indexed([]int{1, -1}, []int{0, 2}, Int32)), ErrCount},
		{"negative indexed_block length", second(IndexedBlock(-1, []int{0}, Int32)), ErrCount},
		{"negative struct block", second(Struct([]int{-1}, []int{0}, []*Datatype{Int32})), ErrCount},
		{"indexed lengths differ", second(Indexed([]int{1}, []int{0, 2}, Int32)), ErrArg},
		{"struct lengths differ", second(Struct([]int{1, 1}, []int{0, 4}, []*Datatype{Int32})), ErrArg},
		{"nil old type", second(Contiguous(1, nil)), ErrType},
		{"freed old type", second(Vector(1, 1, 1, freed)), ErrType},
		{"nil struct field", second(Struct([]int{1}, []int{0}, []*Datatype{nil})), ErrType},
		{"free predefined", Float64.Free(), ErrType},
		{"free twice", freed.Free(), ErrType},
		{"commit freed", freed.Commit(), ErrType},
		{"uncommitted in use", second(vec.layout(1)), ErrType},
		{"freed in use", second(freed.layout(1)), ErrType},
		{"negative use count", second(Float64.layout(-1)), ErrCount},
	}
	for _, c := range cases {
		if !errors.Is(c.err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, c.err, c.want)
		}
	}
	// negative strides, displacements and extents are MPI's, not errors
	if _, err := Resized(Int32, 0, -4); err != nil {
		t.Errorf("negative extent: %v", err)
	}
	if _, err := Vector(3, 1, -2, Float64); err != nil {
		t.Errorf("negative stride: %v", err)
	}
	if _, err := Hindexed([]int{1}, []int{-16}, Float64); err != nil {
		t.Errorf("negative displacement: %v", err)
	}
	// freeing a type leaves the types built from it usable
	base, _ := Contiguous(2, Int32)
	derived, _ := Vector(2, 1, 3, base)
	if err := base.Free(); err != nil {
		t.Fatal(err)
	}
	if err := derived.Commit(); err != nil {
		t.Fatalf("commit of a type built from a freed one: %v", err)
	}
	if derived.Size() != 16 {
		t.Fatalf("size %d, want 16", derived.Size())
	}
	// a layout reaching outside the buffer
	var tb typedBuf
	if err := tb.check(make([]byte, 15), 0, 2, Float64); !errors.Is(err, ErrBuffer) {
		t.Errorf("layout past the end: %v", err)
	}
	neg, _ := Hindexed([]int{1}, []int{-8}, Float64)
	_ = neg.Commit()
	if err := tb.check(make([]byte, 64), 0, 1, neg); !errors.Is(err, ErrBuffer) {
		t.Errorf("layout before the start: %v", err)
	}
	if err := tb.check(make([]byte, 64), 8, 1, neg); err != nil {
		t.Errorf("negative lower bound with a displacement: %v", err)
	}
}

func second[T any](_ T, err error) error { return err }

// TestDatatypeAligned: a type aligned beyond Go's 8 bytes (C's long
// double) pads the structs built from it as C pads them.
func TestDatatypeAligned(t *testing.T) {
	words, err := Contiguous(2, Uint64)
	if err != nil {
		t.Fatal(err)
	}
	ld, err := Aligned(words, 16)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name               string
		dt                 *Datatype
		size, lb, extent   int
		trueLB, trueExtent int
	}{
		{"long double", ld, 16, 0, 16, 0, 16},
		{"struct {long double; int}", second2(Struct([]int{1, 1}, []int{0, 16}, []*Datatype{ld, Int32})), 20, 0, 32, 0, 20},
		{"struct {int; long double} from -16", second2(Struct([]int{1, 1}, []int{-16, 0}, []*Datatype{Int32, ld})), 20, -16, 32, -16, 32},
		{"aligned below its own", second2(Aligned(Float64, 4)), 8, 0, 8, 0, 8},
		{"aligned with markers", second2(Aligned(second2(Resized(Int32, 0, 6)), 16)), 4, 0, 6, 0, 4},
		{"contiguous(0) aligned", second2(Aligned(second2(Contiguous(0, Int32)), 16)), 0, 0, 0, 0, 0},
	}
	for _, c := range cases {
		d := c.dt
		if d.Size() != c.size || d.LowerBound() != c.lb || d.Extent() != c.extent || d.TrueLowerBound() != c.trueLB || d.TrueExtent() != c.trueExtent {
			t.Errorf("%s: size %d lb %d extent %d true %d %d, want %d %d %d true %d %d", c.name,
				d.Size(), d.LowerBound(), d.Extent(), d.TrueLowerBound(), d.TrueExtent(), c.size, c.lb, c.extent, c.trueLB, c.trueExtent)
		}
	}
	for _, a := range []int{0, -16, 3, 24} {
		if _, err := Aligned(Int32, a); !errors.Is(err, ErrArg) {
			t.Errorf("Aligned(Int32, %d): %v, want ErrArg", a, err)
		}
	}
	if _, err := Aligned(nil, 16); !errors.Is(err, ErrType) {
		t.Errorf("Aligned(nil, 16): %v, want ErrType", err)
	}
}

func second2(d *Datatype, err error) *Datatype {
	if err != nil {
		panic(err)
	}
	return d
}
