package meshmpi

// Derived datatypes (MPI-4.1 chapter 5).
//
// A *Datatype describes where the elements of a message lie in memory: a
// typemap, the list of (basic element, byte displacement) pairs of one
// element, with a lower and upper bound whose difference, the extent, is
// the distance between consecutive elements. The predefined datatypes
// (Byte, Int8 … Complex128, and DatatypeOf for any Element including the
// Loc pairs) each hold one basic element. The constructors (Contiguous,
// Vector, Hvector, Indexed, Hindexed, IndexedBlock, HindexedBlock, Struct,
// Resized) build new types from old ones; Commit makes a type usable in
// communication; Free releases the handle.
//
// The API other parts of meshmpi build on, which stays small and stable:
//
//	dt.Commit() error, dt.Free() error
//	dt.Size(), dt.Extent(), dt.LowerBound(), dt.TrueLowerBound(), dt.TrueExtent()
//	dt.layout(count) (*op.Layout, error)   committed and not freed, else ErrType
//	typedSide / typedBlock (datatype_blocks.go): per-peer (count, byte
//	displacement, type) resolved into byte blocks of the caller's buffer or
//	of a packed buffer, with pack and unpack around a collective's run
//
// Buffers are raw memory: a typed call takes a []byte (Bytes views any
// typed slice as one) whose first byte is the datatype's origin, the point
// displacements are measured from. Every byte a call would touch must lie
// inside the slice (ErrBuffer otherwise), so a negative lower bound needs a
// byte displacement (Alltoallw) or a slice that starts earlier.
//
// Bounds follow MPI-4.1 §5.1.6–§5.1.7: without explicit markers, lb is the
// lowest displacement and ub the highest end, rounded up so the extent is a
// multiple of the largest alignment of the basic elements (Go's alignment:
// min(size, 8), complex64 4, the Loc pairs their value's); Resized sets
// explicit lb and ub markers, which are sticky through later constructors.
// Displacements of the H-variants and Struct are in bytes, of the others in
// extents of the old type.
//
// Commit compiles the typemap into a flat list of byte segments in typemap
// order, merged where one run continues the previous one (op.Layout).
// Packing is then a loop over segments with no allocation, and a type
// whose data is one run of memory is recognised, so it travels straight
// from and into the caller's buffer with no copy.
//
// A Datatype is safe for concurrent use: ranks of an in-process world may
// share one.

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/meshmpi/meshmpi/op"
)

// Datatype is an MPI datatype (MPI_Datatype): a predefined element type or
// a derived layout of them.
type Datatype struct {
	name string
	kind dtKind
	elem op.Type // predefined: the element type

	// derived: the parameters, displacements in bytes
	old    *Datatype
	count  int   // Contiguous; Vector: blocks
	block  int   // Vector, IndexedBlock: elements of old per block
	stride int   // Vector: bytes between blocks
	blocks []int // Indexed, Struct: elements per block
	disps  []int // Indexed, Struct: byte displacement of each block
	types  []*Datatype

	// the typemap's properties, computed at construction
	size, basics   int // bytes and basic elements of one element
	lb, ub         int
	trueLB, trueUB int
	align          int
	markLB, markUB bool // explicit (sticky) bound markers
	data           bool // holds at least one basic element

	committed, freed atomic.Bool
	once             sync.Once
	flat             op.Layout // compiled on first need
}

type dtKind uint8

const (
	dtPredefined dtKind = iota
	dtContiguous
	dtVector  // Vector and Hvector
	dtIndexed // Indexed, Hindexed, IndexedBlock, HindexedBlock
	dtStruct
	dtResized
)

func predefined(t op.Type) *Datatype {
	d := &Datatype{name: t.String(), kind: dtPredefined, elem: t, size: t.Size(), basics: 1, data: true}
	d.ub, d.trueUB = d.size, d.size
	d.align = min(d.size, 8)
	switch t {
	case op.Complex64:
		d.align = 4
	case op.Complex128:
		d.align = 8
	}
	d.committed.Store(true)
	return d
}

// The predefined datatypes, one per Go numeric type, plus Byte (MPI_BYTE,
// untyped bytes). They are committed and cannot be freed.
var (
	Byte       = predefinedByte()
	Int        = predefined(op.Int)
	Int8       = predefined(op.Int8)
	Int16      = predefined(op.Int16)
	Int32      = predefined(op.Int32)
	Int64      = predefined(op.Int64)
	Uint       = predefined(op.Uint)
	Uint8      = predefined(op.Uint8)
	Uint16     = predefined(op.Uint16)
	Uint32     = predefined(op.Uint32)
	Uint64     = predefined(op.Uint64)
	Uintptr    = predefined(op.Uintptr)
	Float32    = predefined(op.Float32)
	Float64    = predefined(op.Float64)
	Complex64  = predefined(op.Complex64)
	Complex128 = predefined(op.Complex128)
)

func predefinedByte() *Datatype {
	d := predefined(op.Uint8)
	d.name = "byte"
	return d
}

var (
	locTypesMu sync.Mutex
	locTypes   = map[op.Type]*Datatype{}
)

// DatatypeOf returns the predefined datatype of T: Float64 for float64 and
// named types built on it, and so on; for a Loc pair (MPI_DOUBLE_INT and
// its kin), the pair type.
func DatatypeOf[T Element]() *Datatype {
	t := op.TypeOf[T]()
	switch t {
	case op.Int:
		return Int
	case op.Int8:
		return Int8
	case op.Int16:
		return Int16
	case op.Int32:
		return Int32
	case op.Int64:
		return Int64
	case op.Uint:
		return Uint
	case op.Uint8:
		return Uint8
	case op.Uint16:
		return Uint16
	case op.Uint32:
		return Uint32
	case op.Uint64:
		return Uint64
	case op.Uintptr:
		return Uintptr
	case op.Float32:
		return Float32
	case op.Float64:
		return Float64
	case op.Complex64:
		return Complex64
	case op.Complex128:
		return Complex128
	}
	locTypesMu.Lock()
	defer locTypesMu.Unlock()
	d := locTypes[t]
	if d == nil {
		var z T
		d = predefined(t)
		d.align = int(unsafe.Alignof(z)) // a pair aligns as its wider field
		locTypes[t] = d
	}
	return d
}

// Bytes views a typed slice as the raw memory the datatype calls take,
// without copying.
func Bytes[T Element](s []T) []byte { return op.Bytes(s) }

// String describes the type: its constructor and arguments.
func (d *Datatype) String() string {
	if d == nil {
		return "datatype(nil)"
	}
	return d.name
}

// Size returns the bytes of data in one element (MPI_Type_size): the sum
// of its basic elements' sizes, gaps not counted.
func (d *Datatype) Size() int {
	if d == nil {
		return 0
	}
	return d.size
}

// Extent returns ub − lb (MPI_Type_get_extent): the distance between
// consecutive elements of the type.
func (d *Datatype) Extent() int {
	if d == nil {
		return 0
	}
	return d.ub - d.lb
}

// LowerBound returns lb, the displacement the element's extent starts at
// (MPI_Type_get_extent).
func (d *Datatype) LowerBound() int {
	if d == nil {
		return 0
	}
	return d.lb
}

// TrueLowerBound returns the lowest displacement of the element's data,
// ignoring Resized's markers (MPI_Type_get_true_extent).
func (d *Datatype) TrueLowerBound() int {
	if d == nil {
		return 0
	}
	return d.trueLB
}

// TrueExtent returns the span of the element's data, from its lowest byte
// to one past its highest, ignoring Resized's markers
// (MPI_Type_get_true_extent).
func (d *Datatype) TrueExtent() int {
	if d == nil {
		return 0
	}
	return d.trueUB - d.trueLB
}

// Committed reports whether the type may be used in communication.
func (d *Datatype) Committed() bool { return d != nil && d.committed.Load() && !d.freed.Load() }

// Commit makes the type usable in communication (MPI_Type_commit),
// compiling its layout. Committing twice is harmless.
func (d *Datatype) Commit() error {
	if err := d.usable("commit"); err != nil {
		return err
	}
	d.compile()
	d.committed.Store(true)
	return nil
}

// Free releases the handle (MPI_Type_free). Types built from it and
// operations already using it are not affected. Predefined types cannot be
// freed, nor a type twice: ErrType.
func (d *Datatype) Free() error {
	if err := d.usable("free"); err != nil {
		return err
	}
	if d.kind == dtPredefined {
		return fmt.Errorf("free %s: a predefined datatype cannot be freed: %w", d, ErrType)
	}
	if d.freed.Swap(true) {
		return fmt.Errorf("free %s: already freed: %w", d, ErrType)
	}
	return nil
}

// usable checks that d is a live handle.
func (d *Datatype) usable(verb string) error {
	if d == nil {
		return fmt.Errorf("%s: nil datatype: %w", verb, ErrType)
	}
	if d.freed.Load() {
		return fmt.Errorf("%s: datatype %s was freed: %w", verb, d, ErrType)
	}
	return nil
}

// layout returns the compiled layout of a type ready for communication:
// committed and not freed, else ErrType; count must not be negative.
func (d *Datatype) layout(count int) (*op.Layout, error) {
	if err := d.usable("datatype"); err != nil {
		return nil, err
	}
	if !d.committed.Load() {
		return nil, fmt.Errorf("datatype %s is not committed: %w", d, ErrType)
	}
	if count < 0 {
		return nil, fmt.Errorf("count %d of %s: %w", count, d, ErrCount)
	}
	// compile, not d.flat: a predefined type is committed from the start
	// but compiled, like every type, on first need.
	return d.compile(), nil
}

// compile builds the flat layout once. Types under construction compile
// their parts on first need too, so a part shared by several types is
// flattened once.
func (d *Datatype) compile() *op.Layout {
	d.once.Do(func() {
		var segs []op.Segment
		if d.kind == dtPredefined {
			segs = op.AppendSegment(nil, 0, d.size)
		} else {
			d.each(func(disp int, t *Datatype, n int) { segs = t.appendRun(segs, disp, n) })
		}
		d.flat = op.NewLayout(segs, d.Extent())
	})
	return &d.flat
}

// appendRun appends the segments of n consecutive elements of d, the first
// with its origin at at.
func (d *Datatype) appendRun(segs []op.Segment, at, n int) []op.Segment {
	l := d.compile()
	ss, ext := l.Segments(), d.Extent()
	if off, ok := l.Contiguous(n); ok { // n elements are one run
		return op.AppendSegment(segs, at+off, n*d.size)
	}
	for i := range n {
		for _, s := range ss {
			segs = op.AppendSegment(segs, at+i*ext+s.Off, s.Len)
		}
	}
	return segs
}

// each calls fn for every block of a derived type, in typemap order: n
// consecutive elements of t starting at byte displacement disp.
func (d *Datatype) each(fn func(disp int, t *Datatype, n int)) {
	switch d.kind {
	case dtContiguous:
		fn(0, d.old, d.count)
	case dtVector:
		for i := range d.count {
			fn(i*d.stride, d.old, d.block)
		}
	case dtIndexed:
		for i, disp := range d.disps {
			n := d.block
			if d.blocks != nil {
				n = d.blocks[i]
			}
			fn(disp, d.old, n)
		}
	case dtStruct:
		for i, disp := range d.disps {
			fn(disp, d.types[i], d.blocks[i])
		}
	case dtResized:
		fn(0, d.old, 1)
	}
}

// derive finishes a derived type: its typemap's size, bounds and alignment
// from its blocks (MPI-4.1 §5.1.6–§5.1.7).
func derive(d *Datatype, name string) *Datatype {
	d.name = name
	lbMark, ubMark := 0, 0
	d.align = 1
	d.each(func(disp int, t *Datatype, n int) {
		if n == 0 {
			return // an empty block adds nothing to the typemap
		}
		d.size += n * t.size
		d.basics += n * t.basics
		d.align = max(d.align, t.align)
		ext := t.Extent()
		first, last := disp, disp+(n-1)*ext // origins of the block's first and last element
		lo, hi := min(first, last), max(first, last)
		if t.data {
			tl, th := lo+t.trueLB, hi+t.trueUB
			if !d.data {
				d.trueLB, d.trueUB = tl, th
			}
			d.trueLB, d.trueUB, d.data = min(d.trueLB, tl), max(d.trueUB, th), true
		}
		if t.markLB {
			if m := lo + t.lb; !d.markLB || m < lbMark {
				lbMark = m
			}
			d.markLB = true
		}
		if t.markUB {
			if m := hi + t.ub; !d.markUB || m > ubMark {
				ubMark = m
			}
			d.markUB = true
		}
	})
	d.bounds(lbMark, ubMark)
	return d
}

// bounds sets lb and ub from the markers if there are any, else from the
// data, padding ub to the alignment (the ε of MPI-4.1 §5.1.6).
func (d *Datatype) bounds(lbMark, ubMark int) {
	d.lb, d.ub = d.trueLB, d.trueUB
	if d.markLB {
		d.lb = lbMark
	}
	if d.markUB {
		d.ub = ubMark
		return
	}
	if !d.data {
		d.ub = d.lb
		return
	}
	if pad := (d.ub - d.lb) % d.align; pad > 0 {
		d.ub += d.align - pad
	}
}

// checkOld checks a constructor's old type: a live handle (it need not be
// committed).
func checkOld(verb string, old *Datatype) error {
	if err := old.usable(verb); err != nil {
		return err
	}
	return nil
}

func checkCount(verb, what string, n int) error {
	if n < 0 {
		return fmt.Errorf("%s: %s %d: %w", verb, what, n, ErrCount)
	}
	return nil
}

// Contiguous returns a type of count consecutive elements of old
// (MPI_Type_contiguous).
func Contiguous(count int, old *Datatype) (*Datatype, error) {
	const verb = "contiguous"
	if err := checkOld(verb, old); err != nil {
		return nil, err
	}
	if err := checkCount(verb, "count", count); err != nil {
		return nil, err
	}
	return derive(&Datatype{kind: dtContiguous, old: old, count: count}, fmt.Sprintf("contiguous(%d, %s)", count, old)), nil
}

// Vector returns a type of count blocks of blocklen elements of old, the
// blocks stride elements (extents of old) apart; stride may be negative
// (MPI_Type_vector). Vector(rows, 1, cols, Float64) is a column of a
// row-major rows×cols matrix.
func Vector(count, blocklen, stride int, old *Datatype) (*Datatype, error) {
	return vector("vector", count, blocklen, stride, old, true)
}

// Hvector is Vector with the stride in bytes (MPI_Type_create_hvector).
func Hvector(count, blocklen, stride int, old *Datatype) (*Datatype, error) {
	return vector("hvector", count, blocklen, stride, old, false)
}

func vector(verb string, count, blocklen, stride int, old *Datatype, scaled bool) (*Datatype, error) {
	if err := checkOld(verb, old); err != nil {
		return nil, err
	}
	if err := checkCount(verb, "count", count); err != nil {
		return nil, err
	}
	if err := checkCount(verb, "block length", blocklen); err != nil {
		return nil, err
	}
	bytes := stride
	if scaled {
		bytes = stride * old.Extent()
	}
	d := &Datatype{kind: dtVector, old: old, count: count, block: blocklen, stride: bytes}
	return derive(d, fmt.Sprintf("%s(%d, %d, %d, %s)", verb, count, blocklen, stride, old)), nil
}

// Indexed returns a type of blocks of blocklens[i] elements of old at
// displacements displs[i], in extents of old (MPI_Type_indexed).
func Indexed(blocklens, displs []int, old *Datatype) (*Datatype, error) {
	return indexed("indexed", blocklens, 0, displs, old, true)
}

// Hindexed is Indexed with displacements in bytes (MPI_Type_create_hindexed).
func Hindexed(blocklens, displs []int, old *Datatype) (*Datatype, error) {
	return indexed("hindexed", blocklens, 0, displs, old, false)
}

// IndexedBlock is Indexed with every block blocklen elements long
// (MPI_Type_create_indexed_block).
func IndexedBlock(blocklen int, displs []int, old *Datatype) (*Datatype, error) {
	return indexed("indexed_block", nil, blocklen, displs, old, true)
}

// HindexedBlock is IndexedBlock with displacements in bytes
// (MPI_Type_create_hindexed_block).
func HindexedBlock(blocklen int, displs []int, old *Datatype) (*Datatype, error) {
	return indexed("hindexed_block", nil, blocklen, displs, old, false)
}

func indexed(verb string, blocklens []int, blocklen int, displs []int, old *Datatype, scaled bool) (*Datatype, error) {
	if err := checkOld(verb, old); err != nil {
		return nil, err
	}
	if blocklens != nil && len(blocklens) != len(displs) {
		return nil, fmt.Errorf("%s: %d block lengths for %d displacements: %w", verb, len(blocklens), len(displs), ErrArg)
	}
	if err := checkCount(verb, "block length", blocklen); err != nil {
		return nil, err
	}
	for i, n := range blocklens {
		if err := checkCount(verb, fmt.Sprintf("block %d length", i), n); err != nil {
			return nil, err
		}
	}
	d := &Datatype{kind: dtIndexed, old: old, block: blocklen, blocks: clone(blocklens), disps: clone(displs)}
	if scaled {
		for i := range d.disps {
			d.disps[i] *= old.Extent()
		}
	}
	var args string
	if blocklens != nil {
		args = fmt.Sprintf("%v, %v", blocklens, displs)
	} else {
		args = fmt.Sprintf("%d, %v", blocklen, displs)
	}
	return derive(d, fmt.Sprintf("%s(%s, %s)", verb, args, old)), nil
}

// clone copies a slice the caller may change later; nil stays nil.
func clone(s []int) []int {
	if s == nil {
		return nil
	}
	return append(make([]int, 0, len(s)), s...)
}

// Struct returns a type of blocks of blocklens[i] elements of types[i] at
// byte displacements displs[i] (MPI_Type_create_struct): the layout of a
// record of mixed fields, displacements as unsafe.Offsetof gives them.
func Struct(blocklens, displs []int, types []*Datatype) (*Datatype, error) {
	const verb = "struct"
	if len(blocklens) != len(displs) || len(types) != len(displs) {
		return nil, fmt.Errorf("%s: %d block lengths, %d displacements, %d types: %w", verb, len(blocklens), len(displs), len(types), ErrArg)
	}
	names := make([]string, len(types))
	for i, t := range types {
		if err := checkOld(verb, t); err != nil {
			return nil, fmt.Errorf("field %d: %w", i, err)
		}
		if err := checkCount(verb, fmt.Sprintf("block %d length", i), blocklens[i]); err != nil {
			return nil, err
		}
		names[i] = t.String()
	}
	d := &Datatype{kind: dtStruct, blocks: clone(blocklens), disps: clone(displs), types: append([]*Datatype(nil), types...)}
	return derive(d, fmt.Sprintf("struct(%v, %v, [%s])", blocklens, displs, strings.Join(names, " "))), nil
}

// Aligned returns old with its alignment raised to align bytes, a power
// of two: the alignment that pads the extent of a type without explicit
// bounds (MPI-4.1 §5.1.6's ε) and of the types built from it. It is for
// C types whose alignment no Go type has, such as C's long double (16
// bytes on x86-64 and arm64), so that a struct of a long double and an
// int has the C struct's extent, 32.
func Aligned(old *Datatype, align int) (*Datatype, error) {
	const verb = "aligned"
	if err := checkOld(verb, old); err != nil {
		return nil, err
	}
	if align <= 0 || align&(align-1) != 0 {
		return nil, fmt.Errorf("%s: alignment %d is not a power of two: %w", verb, align, ErrArg)
	}
	d := &Datatype{kind: dtContiguous, old: old, count: 1}
	derive(d, fmt.Sprintf("aligned(%s, %d)", old, align))
	d.align = max(d.align, align)
	lbMark, ubMark := d.lb, d.ub
	d.bounds(lbMark, ubMark)
	return d, nil
}

// Resized returns old with its lower bound set to lb and its extent to
// extent (MPI_Type_create_resized): explicit markers replace old's, and
// stay in force in types built from the result. The extent may be zero or
// negative (MPI-4.1 §5.1.7: ub may lie below lb): consecutive elements
// then lie at the same or decreasing addresses, as with a negative stride.
func Resized(old *Datatype, lb, extent int) (*Datatype, error) {
	const verb = "resized"
	if err := checkOld(verb, old); err != nil {
		return nil, err
	}
	d := &Datatype{kind: dtResized, old: old, name: fmt.Sprintf("resized(%s, %d, %d)", old, lb, extent),
		size: old.size, basics: old.basics, align: old.align, data: old.data,
		trueLB: old.trueLB, trueUB: old.trueUB, markLB: true, markUB: true}
	d.bounds(lb, lb+extent)
	return d, nil
}
