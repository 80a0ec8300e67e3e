package abi

/*
#include <stdint.h>
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/op"
)

// Derived datatypes (MPI-4.1 chapter 5). A derived type's handle indexes a
// Go-side table, like communicators'. Its entry holds the Go API's
// *meshmpi.Datatype (which moves it in point-to-point and Alltoallw), the
// constructor's arguments (MPI_Type_get_contents) and the binding's own
// flat typemap: the runs of basic elements that packing for collectives,
// MPI_Pack and MPI_Get_elements walk, compiled into an op.Layout; past
// maxRuns runs a repetition keeps a strided typemap instead (strided.go).
// The predefined types get an entry too, made on first need, so every
// type answers the same questions.

const (
	typeNull  uintptr = 0x200
	firstType uintptr = 0x6000000 // the types the program makes
)

// maxRuns is the basic runs past which a typemap is not flattened: a
// repetition's is kept strided (strided.go), any other is an error.
const maxRuns = 1 << 24

// forceStrided keeps every repetition strided, whatever its size: a test
// knob, so small types take the strided paths.
var forceStrided = false

// The combiners of include/mpi.h.
const (
	combNamed        = 101
	combDup          = 102
	combContiguous   = 103
	combVector       = 104
	combHvector      = 105
	combIndexed      = 106
	combHindexed     = 107
	combIndexedBlock = 108
	combHindexedBlk  = 109
	combStruct       = 110
	combSubarray     = 111
	combDarray       = 112
	combResized      = 116
)

// brun is n consecutive basic elements of predefined type h at byte
// offset off of an element's origin.
type brun struct {
	off, n int
	h      uintptr
}

// typeEntry is a datatype's Go side.
type typeEntry struct {
	g        *meshmpi.Datatype
	combiner int32
	// the constructor's arguments, as MPI_Type_get_contents returns them
	ints, aints, counts []int
	olds                []*typeEntry
	name                string
	committed           bool
	predef              bool    // predefined: not to be freed
	self                uintptr // an F90 type's own handle
	attrs               map[int32]attr
	*flat               // shared by the type's duplicates
}

// flat is a type's flat typemap, made on first need (flatten): a type
// only asked for its size and extent, as huge ones often are, is never
// flattened.
type flat struct {
	once   sync.Once
	err    error
	blocks func(yield func(block)) // the typemap in blocks, in order
	runs   []brun
	lay    op.Layout
	basic  dtype // the predefined type of every basic element; k nil if they differ or there is none
	mixed  bool
	basics int // basic elements in one element
	// a repetition's shape (contiguous, vector, hvector, resized), and
	// when the type is past maxRuns, its strided typemap (strided.go)
	// instead of runs and lay
	rep *repeat
	str *strided
}

var types struct {
	mu     sync.Mutex
	t      table[*typeEntry]
	predef map[uintptr]*typeEntry
}

// typeOf returns the entry of a datatype handle, predefined or derived.
func typeOf(h uintptr) (*typeEntry, error) {
	if h == typeNull {
		return nil, errorf(errType, "MPI_DATATYPE_NULL is not a datatype to use")
	}
	types.mu.Lock()
	defer types.mu.Unlock()
	if d, ok := dtypes[h]; ok {
		if e := types.predef[h]; e != nil {
			return e, nil
		}
		if types.predef == nil {
			types.predef = map[uintptr]*typeEntry{}
		}
		g := d.k.datatype() // every predefined type has a kind (types.go)
		f := &flat{runs: []brun{{0, 1, h}}, basic: d, basics: 1,
			lay: op.NewLayout(op.AppendSegment(nil, 0, d.size), d.size)}
		if d.pair != nil {
			f = pairFlat(d)
		}
		f.once.Do(func() {})
		e := &typeEntry{g: g, combiner: combNamed, name: d.name, committed: true, predef: true, flat: f}
		types.predef[h] = e
		return e, nil
	}
	e, ok := types.t.get(h)
	if !ok {
		return nil, errorf(errType, "%#x is not a datatype", h)
	}
	return e, nil
}

// derivedType returns the entry of a derived type's handle; ok is false
// for every other handle (predefined ones take the binding's direct path).
func derivedType(h uintptr) (*typeEntry, bool) {
	if h < firstType {
		return nil, false
	}
	types.mu.Lock()
	defer types.mu.Unlock()
	return types.t.get(h)
}

func addType(e *typeEntry, out uintptr) error {
	types.mu.Lock()
	if types.t.base == 0 {
		types.t.base = firstType
	}
	h, ok := types.t.add(e)
	types.mu.Unlock()
	if !ok {
		return errorf(errIntern, "too many datatypes")
	}
	putHandle(out, h)
	return nil
}

func (e *typeEntry) size() int   { return e.g.Size() }
func (e *typeEntry) extent() int { return e.g.Extent() }

// block is n consecutive elements of old whose first origin is at byte
// disp: a constructor's typemap is a list of them.
type block struct {
	disp int
	old  *typeEntry
	n    int
}

// flatten makes the flat typemap of e once: the runs of basic
// elements, the layout, and the basic element type.
func (e *typeEntry) flatten() error {
	f := e.flat
	f.once.Do(func() { f.err = e.build() })
	return f.err
}

func (e *typeEntry) build() error {
	f := e.flat
	if r := f.rep; r != nil {
		if err := r.old.flatten(); err != nil {
			return err
		}
		if r.old.str != nil || r.runs() > maxRuns || forceStrided {
			return e.buildStrided()
		}
	}
	total := 0
	var err error
	f.blocks(func(b block) {
		if err != nil || b.n <= 0 {
			return
		}
		if err = b.old.flatten(); err != nil {
			return
		}
		if b.old.str != nil {
			err = errorf(errArg, "%s holds %s, whose typemap of over %d runs of basic elements the C binding keeps strided only under contiguous, vector, hvector and resized types", e.g, b.old.g, maxRuns)
			return
		}
		if b.old.dense() {
			total++
		} else {
			total += b.n * len(b.old.runs)
		}
		if total > maxRuns {
			err = errorf(errArg, "the typemap of %s has over %d runs of basic elements, more than the C binding flattens", e.g, maxRuns)
		}
	})
	if err != nil {
		return err
	}
	var runs []brun
	first := true
	f.blocks(func(b block) {
		if b.n <= 0 {
			return
		}
		o := b.old
		f.basics += b.n * o.basics
		// the basic element type is the old types' (not the runs': a
		// pair type's runs are its parts, but it reduces as a pair)
		switch {
		case o.basics == 0:
		case first:
			f.basic, f.mixed, first = o.basic, o.mixed, false
		case o.mixed || o.basic.k != f.basic.k:
			f.mixed = true
		}
		if o.dense() {
			runs = appendBrun(runs, b.disp, b.n*o.runs[0].n, o.runs[0].h) // one run
			return
		}
		for i := range b.n {
			at := b.disp + i*o.extent()
			for _, r := range o.runs {
				runs = appendBrun(runs, at+r.off, r.n, r.h)
			}
		}
	})
	f.runs = runs
	var segs []op.Segment
	for _, r := range runs {
		segs = op.AppendSegment(segs, r.off, r.n*dtypes[r.h].size)
	}
	if f.mixed {
		f.basic = dtype{}
	}
	f.lay = op.NewLayout(segs, e.extent())
	return e.g.Commit()
}

// blocksOf yields the blocks of a slice.
func blocksOf(bs []block) func(func(block)) {
	return func(yield func(block)) {
		for _, b := range bs {
			yield(b)
		}
	}
}

// dense reports whether e is one run of basic elements from its origin
// that fills its extent: consecutive elements of it are one run too.
func (e *typeEntry) dense() bool {
	return len(e.runs) == 1 && e.runs[0].off == 0 && e.runs[0].n*dtypes[e.runs[0].h].size == e.extent()
}

func appendBrun(runs []brun, off, n int, h uintptr) []brun {
	if k := len(runs) - 1; k >= 0 && runs[k].h == h && runs[k].off+runs[k].n*dtypes[h].size == off {
		runs[k].n += n
		return runs
	}
	return append(runs, brun{off, n, h})
}

// construct makes and registers a derived type: g is the Go API's type,
// blocks its typemap in the binding's terms.
func construct(g *meshmpi.Datatype, err error, comb int32, ints, aints, counts []int, olds []*typeEntry, blocks func(func(block)), out uintptr) error {
	return constructRep(g, err, comb, ints, aints, counts, olds, blocks, nil, out)
}

// constructRep is construct for a repetition, whose shape rep keeps the
// typemap strided past maxRuns.
func constructRep(g *meshmpi.Datatype, err error, comb int32, ints, aints, counts []int, olds []*typeEntry, blocks func(func(block)), rep *repeat, out uintptr) error {
	if err != nil {
		return err
	}
	if out == 0 {
		return errorf(errArg, "newtype is NULL")
	}
	e := &typeEntry{g: g, combiner: comb, ints: ints, aints: aints, counts: counts, olds: olds, flat: &flat{blocks: blocks, rep: rep}}
	return addType(e, out)
}

// olds looks up the old types of a constructor.
func oldTypes(hs ...uintptr) ([]*typeEntry, error) {
	es := make([]*typeEntry, len(hs))
	for i, h := range hs {
		e, err := typeOf(h)
		if err != nil {
			return nil, err
		}
		es[i] = e
	}
	return es, nil
}

func gos(es []*typeEntry) []*meshmpi.Datatype {
	gs := make([]*meshmpi.Datatype, len(es))
	for i, e := range es {
		gs[i] = e.g
	}
	return gs
}

func contiguous(call string, n int64, oldh, out uintptr, large bool) C.int {
	olds, err := oldTypes(oldh)
	if err == nil && n < 0 {
		err = errorf(errCount, "count %d is negative", n)
	}
	if err == nil {
		g, gerr := meshmpi.Contiguous(int(n), olds[0].g)
		ints, counts := []int{int(n)}, []int(nil)
		if large {
			ints, counts = nil, ints
		}
		err = constructRep(g, gerr, combContiguous, ints, nil, counts, olds, blocksOf([]block{{0, olds[0], int(n)}}), &repeat{1, int(n), 0, olds[0]}, out)
	}
	return raise(self, call, err)
}

//export mpiabi_Type_contiguous
func mpiabi_Type_contiguous(n int32, old, out uintptr) C.int {
	return contiguous("MPI_Type_contiguous", int64(n), old, out, false)
}

//export mpiabi_Type_contiguous_c
func mpiabi_Type_contiguous_c(n int64, old, out uintptr) C.int {
	return contiguous("MPI_Type_contiguous_c", n, old, out, true)
}

func vector(call string, n, bl, stride int64, oldh, out uintptr, bytes, large bool) C.int {
	olds, err := oldTypes(oldh)
	if err == nil && (n < 0 || bl < 0) {
		err = errorf(errCount, "count %d or blocklength %d is negative", n, bl)
	}
	if err != nil {
		return raise(self, call, err)
	}
	o := olds[0]
	var g *meshmpi.Datatype
	var comb int32 = combVector
	step := int(stride) * o.extent()
	ints, aints, counts := []int{int(n), int(bl), int(stride)}, []int(nil), []int(nil)
	if bytes {
		comb, step = combHvector, int(stride)
		g, err = meshmpi.Hvector(int(n), int(bl), int(stride), o.g)
		ints, aints = ints[:2], []int{int(stride)}
	} else {
		g, err = meshmpi.Vector(int(n), int(bl), int(stride), o.g)
	}
	if large {
		ints, aints, counts = nil, nil, []int{int(n), int(bl), int(stride)}
	}
	blocks := func(yield func(block)) {
		for i := range int(n) {
			yield(block{i * step, o, int(bl)})
		}
	}
	return raise(self, call, constructRep(g, err, comb, ints, aints, counts, olds, blocks, &repeat{int(n), int(bl), step, o}, out))
}

//export mpiabi_Type_vector
func mpiabi_Type_vector(n, bl, stride int32, old, out uintptr) C.int {
	return vector("MPI_Type_vector", int64(n), int64(bl), int64(stride), old, out, false, false)
}

//export mpiabi_Type_vector_c
func mpiabi_Type_vector_c(n, bl, stride int64, old, out uintptr) C.int {
	return vector("MPI_Type_vector_c", n, bl, stride, old, out, false, true)
}

//export mpiabi_Type_create_hvector
func mpiabi_Type_create_hvector(n, bl int32, stride int64, old, out uintptr) C.int {
	return vector("MPI_Type_create_hvector", int64(n), int64(bl), stride, old, out, true, false)
}

//export mpiabi_Type_create_hvector_c
func mpiabi_Type_create_hvector_c(n, bl, stride int64, old, out uintptr) C.int {
	return vector("MPI_Type_create_hvector_c", n, bl, stride, old, out, true, true)
}

// indexedArgs reads the arrays of an indexed constructor: n block lengths
// (bls == 0: every block bl long) and n displacements, 32- or 64-bit.
func indexedArgs(n int64, bls uintptr, bl int64, displs uintptr, bl64, d64 bool) ([]int, []int, error) {
	switch {
	case n < 0:
		return nil, nil, errorf(errCount, "count %d is negative", n)
	case n > 0 && displs == 0:
		return nil, nil, errorf(errArg, "array_of_displacements is NULL")
	case n > 0 && bls == 0 && bl < 0:
		return nil, nil, errorf(errCount, "blocklength %d is negative", bl)
	}
	rd := func(u uintptr, wide bool) []int {
		if wide {
			return cints64(u, int(n))
		}
		return cints(u, int(n))
	}
	ds := rd(displs, d64)
	var ls []int
	if bls != 0 {
		ls = rd(bls, bl64)
	} else if n > 0 {
		return nil, ds, nil
	}
	if n > 0 && ls == nil {
		return nil, nil, errorf(errArg, "array_of_blocklengths is NULL")
	}
	for i, l := range ls {
		if l < 0 {
			return nil, nil, errorf(errCount, "block %d length %d is negative", i, l)
		}
	}
	return ls, ds, nil
}

// indexed builds the four indexed constructors: bls == 0 is a _block
// form with every block bl long; bytes says displacements are in bytes.
// blocklengths checks the array of the indexed forms that have one:
// indexed() reads NULL as the block forms' single blocklength, which
// made MPI_Type_indexed(n, NULL, …) an empty type.
func blocklengths(n int64, bls uintptr) error {
	if n > 0 && bls == 0 {
		return errorf(errArg, "array_of_blocklengths is NULL")
	}
	return nil
}

func indexed(call string, n int64, bls uintptr, bl int64, displs, oldh, out uintptr, bytes, large, d64 bool) C.int {
	olds, err := oldTypes(oldh)
	if err != nil {
		return raise(self, call, err)
	}
	o := olds[0]
	ls, ds, err := indexedArgs(n, bls, bl, displs, large, d64 || large)
	if err != nil {
		return raise(self, call, err)
	}
	if ls == nil && ds == nil {
		ds = []int{}
	}
	var g *meshmpi.Datatype
	blockForm := bls == 0
	switch {
	case blockForm && bytes:
		g, err = meshmpi.HindexedBlock(int(bl), ds, o.g)
	case blockForm:
		g, err = meshmpi.IndexedBlock(int(bl), ds, o.g)
	case bytes:
		g, err = meshmpi.Hindexed(ls, ds, o.g)
	default:
		g, err = meshmpi.Indexed(ls, ds, o.g)
	}
	blocks := make([]block, len(ds))
	for i, d := range ds {
		l := int(bl)
		if !blockForm {
			l = ls[i]
		}
		if !bytes {
			d *= o.extent()
		}
		blocks[i] = block{d, o, l}
	}
	// the contents, MPI-4.1 Table 5.1
	var comb int32
	var ints, aints, counts []int
	head := []int{int(n)}
	if blockForm {
		head = append(head, int(bl))
	} else {
		head = append(head, ls...)
	}
	switch {
	case large:
		counts = append(head, ds...)
	case bytes:
		ints, aints = head, ds
	default:
		ints = append(head, ds...)
	}
	switch {
	case blockForm && bytes:
		comb = combHindexedBlk
	case blockForm:
		comb = combIndexedBlock
	case bytes:
		comb = combHindexed
	default:
		comb = combIndexed
	}
	return raise(self, call, construct(g, err, comb, ints, aints, counts, olds, blocksOf(blocks), out))
}

//export mpiabi_Type_indexed
func mpiabi_Type_indexed(n int32, bls, displs, old, out uintptr) C.int {
	if err := blocklengths(int64(n), bls); err != nil {
		return raise(self, "MPI_Type_indexed", err)
	}
	return indexed("MPI_Type_indexed", int64(n), bls, 0, displs, old, out, false, false, false)
}

//export mpiabi_Type_indexed_c
func mpiabi_Type_indexed_c(n int64, bls, displs, old, out uintptr) C.int {
	if err := blocklengths(int64(n), bls); err != nil {
		return raise(self, "MPI_Type_indexed_c", err)
	}
	return indexed("MPI_Type_indexed_c", n, bls, 0, displs, old, out, false, true, true)
}

//export mpiabi_Type_create_hindexed
func mpiabi_Type_create_hindexed(n int32, bls, displs, old, out uintptr) C.int {
	if err := blocklengths(int64(n), bls); err != nil {
		return raise(self, "MPI_Type_create_hindexed", err)
	}
	return indexed("MPI_Type_create_hindexed", int64(n), bls, 0, displs, old, out, true, false, true)
}

//export mpiabi_Type_create_hindexed_c
func mpiabi_Type_create_hindexed_c(n int64, bls, displs, old, out uintptr) C.int {
	if err := blocklengths(int64(n), bls); err != nil {
		return raise(self, "MPI_Type_create_hindexed_c", err)
	}
	return indexed("MPI_Type_create_hindexed_c", n, bls, 0, displs, old, out, true, true, true)
}

//export mpiabi_Type_create_indexed_block
func mpiabi_Type_create_indexed_block(n, bl int32, displs, old, out uintptr) C.int {
	return indexed("MPI_Type_create_indexed_block", int64(n), 0, int64(bl), displs, old, out, false, false, false)
}

//export mpiabi_Type_create_indexed_block_c
func mpiabi_Type_create_indexed_block_c(n, bl int64, displs, old, out uintptr) C.int {
	return indexed("MPI_Type_create_indexed_block_c", n, 0, bl, displs, old, out, false, true, true)
}

//export mpiabi_Type_create_hindexed_block
func mpiabi_Type_create_hindexed_block(n, bl int32, displs, old, out uintptr) C.int {
	return indexed("MPI_Type_create_hindexed_block", int64(n), 0, int64(bl), displs, old, out, true, false, true)
}

//export mpiabi_Type_create_hindexed_block_c
func mpiabi_Type_create_hindexed_block_c(n, bl int64, displs, old, out uintptr) C.int {
	return indexed("MPI_Type_create_hindexed_block_c", n, 0, bl, displs, old, out, true, true, true)
}

func createStruct(call string, n int64, bls, displs, ths, out uintptr, large bool) C.int {
	if err := blocklengths(n, bls); err != nil {
		return raise(self, call, err) // indexedArgs would read NULL as the block forms' blocklength
	}
	ls, ds, err := indexedArgs(n, bls, 0, displs, large, true)
	if err == nil && n > 0 && ths == 0 {
		err = errorf(errArg, "array_of_types is NULL")
	}
	if err != nil {
		return raise(self, call, err)
	}
	hs := make([]uintptr, n)
	if n > 0 {
		copy(hs, unsafeHandles(ths, int(n)))
	}
	olds, err := oldTypes(hs...)
	if err != nil {
		return raise(self, call, err)
	}
	if ls == nil {
		ls, ds = []int{}, []int{}
	}
	g, err := meshmpi.Struct(ls, ds, gos(olds))
	blocks := make([]block, n)
	for i := range blocks {
		blocks[i] = block{ds[i], olds[i], ls[i]}
	}
	head := append([]int{int(n)}, ls...)
	ints, aints, counts := head, ds, []int(nil)
	if large {
		ints, aints, counts = nil, nil, append(head, ds...)
	}
	return raise(self, call, construct(g, err, combStruct, ints, aints, counts, olds, blocksOf(blocks), out))
}

//export mpiabi_Type_create_struct
func mpiabi_Type_create_struct(n int32, bls, displs, ths, out uintptr) C.int {
	return createStruct("MPI_Type_create_struct", int64(n), bls, displs, ths, out, false)
}

//export mpiabi_Type_create_struct_c
func mpiabi_Type_create_struct_c(n int64, bls, displs, ths, out uintptr) C.int {
	return createStruct("MPI_Type_create_struct_c", n, bls, displs, ths, out, true)
}

func resized(call string, oldh uintptr, lb, extent int64, out uintptr, large bool) C.int {
	olds, err := oldTypes(oldh)
	if err != nil {
		return raise(self, call, err)
	}
	g, err := meshmpi.Resized(olds[0].g, int(lb), int(extent))
	aints, counts := []int{int(lb), int(extent)}, []int(nil)
	if large {
		aints, counts = nil, aints
	}
	return raise(self, call, constructRep(g, err, combResized, nil, aints, counts, olds, blocksOf([]block{{0, olds[0], 1}}), &repeat{1, 1, 0, olds[0]}, out))
}

//export mpiabi_Type_create_resized
func mpiabi_Type_create_resized(old uintptr, lb, extent int64, out uintptr) C.int {
	return resized("MPI_Type_create_resized", old, lb, extent, out, false)
}

//export mpiabi_Type_create_resized_c
func mpiabi_Type_create_resized_c(old uintptr, lb, extent int64, out uintptr) C.int {
	return resized("MPI_Type_create_resized_c", old, lb, extent, out, true)
}

//export mpiabi_Type_dup
func mpiabi_Type_dup(oldh, out uintptr) C.int {
	olds, err := oldTypes(oldh)
	if err == nil && out == 0 {
		err = errorf(errArg, "newtype is NULL")
	}
	if err != nil {
		return raise(self, "MPI_Type_dup", err)
	}
	o := olds[0]
	attrs, err := copyTypeAttrs(oldh, o)
	if err != nil {
		return raise(self, "MPI_Type_dup", err)
	}
	e := *o
	e.combiner, e.ints, e.aints, e.counts, e.olds, e.name, e.predef, e.self = combDup, nil, nil, nil, olds, "", false, 0
	e.attrs = attrs
	return raise(self, "MPI_Type_dup", addType(&e, out))
}

//export mpiabi_Type_commit
func mpiabi_Type_commit(p uintptr) C.int {
	if p == 0 {
		return raise(self, "MPI_Type_commit", errorf(errArg, "datatype is NULL"))
	}
	e, err := typeOf(getHandle(p))
	if err != nil {
		return raise(self, "MPI_Type_commit", err)
	}
	if e.predef {
		return errSuccess
	}
	// The Go type is committed (compiled) when the type is first used,
	// by flatten: a huge type only asked for its size never is.
	types.mu.Lock()
	e.committed = true
	types.mu.Unlock()
	return errSuccess
}

// MPI_Type_free releases the handle only: an operation in flight holds the
// Go type and its layout, so it completes (MPI-4.1 §5.1.10), and types
// built from this one keep it too.
//
//export mpiabi_Type_free
func mpiabi_Type_free(p uintptr) C.int {
	if p == 0 {
		return raise(self, "MPI_Type_free", errorf(errArg, "datatype is NULL"))
	}
	h := getHandle(p)
	e, err := typeOf(h)
	if err != nil {
		return raise(self, "MPI_Type_free", err)
	}
	if e.predef {
		return raise(self, "MPI_Type_free", errorf(errType, "%s is predefined and cannot be freed", e.name))
	}
	if err := deleteTypeAttrs(h, e); err != nil {
		return raise(self, "MPI_Type_free", err)
	}
	types.mu.Lock()
	types.t.remove(h)
	types.mu.Unlock()
	putHandle(p, typeNull)
	return errSuccess
}

// usable returns the entry of a type to communicate with: committed.
func usable(h uintptr) (*typeEntry, error) {
	e, err := typeOf(h)
	if err != nil {
		return nil, err
	}
	types.mu.Lock()
	ok := e.committed
	types.mu.Unlock()
	if !ok {
		return nil, errorf(errType, "datatype %#x is not committed (MPI_Type_commit)", h)
	}
	return e, e.flatten()
}

//export mpiabi_Type_size
func mpiabi_Type_size(h, size uintptr) C.int {
	e, err := typeOf(h)
	if err == nil && size == 0 {
		err = errorf(errArg, "size is NULL")
	}
	if err != nil {
		return raise(self, "MPI_Type_size", err)
	}
	n := e.size()
	if n > 1<<31-1 {
		n = undefined
	}
	putInt(size, n)
	return errSuccess
}

//export mpiabi_Type_size_c
func mpiabi_Type_size_c(h, size uintptr) C.int {
	e, err := typeOf(h)
	if err == nil && size == 0 {
		err = errorf(errArg, "size is NULL")
	}
	if err != nil {
		return raise(self, "MPI_Type_size_c", err)
	}
	*(*int64)(ptr(size)) = int64(e.size())
	return errSuccess
}

//export mpiabi_Type_size_x
func mpiabi_Type_size_x(h, size uintptr) C.int { return mpiabi_Type_size_c(h, size) }

func extentOf(call string, h, lb, extent uintptr, isTrue bool) C.int {
	e, err := typeOf(h)
	if err == nil && (lb == 0 || extent == 0) {
		err = errorf(errArg, "lb or extent is NULL")
	}
	if err != nil {
		return raise(self, call, err)
	}
	l, x := e.g.LowerBound(), e.g.Extent()
	if isTrue {
		l, x = e.g.TrueLowerBound(), e.g.TrueExtent()
	}
	*(*int64)(ptr(lb)) = int64(l)
	*(*int64)(ptr(extent)) = int64(x)
	return errSuccess
}

//export mpiabi_Type_get_extent
func mpiabi_Type_get_extent(h, lb, extent uintptr) C.int {
	return extentOf("MPI_Type_get_extent", h, lb, extent, false)
}

//export mpiabi_Type_get_extent_c
func mpiabi_Type_get_extent_c(h, lb, extent uintptr) C.int {
	return extentOf("MPI_Type_get_extent_c", h, lb, extent, false)
}

//export mpiabi_Type_get_extent_x
func mpiabi_Type_get_extent_x(h, lb, extent uintptr) C.int {
	return extentOf("MPI_Type_get_extent_x", h, lb, extent, false)
}

//export mpiabi_Type_get_true_extent
func mpiabi_Type_get_true_extent(h, lb, extent uintptr) C.int {
	return extentOf("MPI_Type_get_true_extent", h, lb, extent, true)
}

//export mpiabi_Type_get_true_extent_c
func mpiabi_Type_get_true_extent_c(h, lb, extent uintptr) C.int {
	return extentOf("MPI_Type_get_true_extent_c", h, lb, extent, true)
}

//export mpiabi_Type_get_true_extent_x
func mpiabi_Type_get_true_extent_x(h, lb, extent uintptr) C.int {
	return extentOf("MPI_Type_get_true_extent_x", h, lb, extent, true)
}

//export mpiabi_Type_get_name
func mpiabi_Type_get_name(h, name, resultlen uintptr) C.int {
	e, err := typeOf(h)
	if err == nil && (name == 0 || resultlen == 0) {
		err = errorf(errArg, "type_name or resultlen is NULL")
	}
	if err != nil {
		return raise(self, "MPI_Type_get_name", err)
	}
	types.mu.Lock()
	s := e.name
	types.mu.Unlock()
	putInt(resultlen, putString(name, s, maxObjectName))
	return errSuccess
}

//export mpiabi_Type_set_name
func mpiabi_Type_set_name(h, name uintptr) C.int {
	e, err := typeOf(h)
	if err == nil && name == 0 {
		err = errorf(errArg, "type_name is NULL")
	}
	if err == nil && e.predef {
		err = errorf(errType, "%s is predefined: its name is fixed", e.name)
	}
	if err != nil {
		return raise(self, "MPI_Type_set_name", err)
	}
	s := cstring(name)
	if len(s) > maxObjectName-1 {
		s = s[:maxObjectName-1]
	}
	types.mu.Lock()
	e.name = s
	types.mu.Unlock()
	return errSuccess
}

func envelope(call string, h uintptr, large bool) (*typeEntry, error) {
	e, err := typeOf(h)
	if err != nil {
		return nil, err
	}
	if !large && len(e.counts) > 0 {
		return nil, errorf(errType, "the type was made by a large-count constructor: ask MPI_Type_get_envelope_c")
	}
	return e, nil
}

// dtypeCount is how many types get_contents returns (the predefined
// types answer MPI_COMBINER_NAMED and have no contents).
func (e *typeEntry) nTypes() int {
	if e.combiner == combNamed {
		return 0
	}
	return len(e.olds)
}

//export mpiabi_Type_get_envelope
func mpiabi_Type_get_envelope(h, ni, na, nd, comb uintptr) C.int {
	e, err := envelope("MPI_Type_get_envelope", h, false)
	if err == nil && (ni == 0 || na == 0 || nd == 0 || comb == 0) {
		err = errorf(errArg, "an output argument is NULL")
	}
	if err != nil {
		return raise(self, "MPI_Type_get_envelope", err)
	}
	putInt(ni, len(e.ints))
	putInt(na, len(e.aints))
	putInt(nd, e.nTypes())
	putInt(comb, int(e.combiner))
	return errSuccess
}

//export mpiabi_Type_get_envelope_c
func mpiabi_Type_get_envelope_c(h, ni, na, nc, nd, comb uintptr) C.int {
	e, err := envelope("MPI_Type_get_envelope_c", h, true)
	if err == nil && (ni == 0 || na == 0 || nc == 0 || nd == 0 || comb == 0) {
		err = errorf(errArg, "an output argument is NULL")
	}
	if err != nil {
		return raise(self, "MPI_Type_get_envelope_c", err)
	}
	*(*int64)(ptr(ni)) = int64(len(e.ints))
	*(*int64)(ptr(na)) = int64(len(e.aints))
	*(*int64)(ptr(nc)) = int64(len(e.counts))
	*(*int64)(ptr(nd)) = int64(e.nTypes())
	putInt(comb, int(e.combiner))
	return errSuccess
}

// contents writes a type's constructor arguments. The derived types among
// them come back as new handles the program frees (MPI-4.1 §5.1.13).
func contents(call string, h uintptr, mi, ma, mc, md int64, ai, aa, ac, ad uintptr, large bool) C.int {
	e, err := envelope(call, h, large)
	if err != nil {
		return raise(self, call, err)
	}
	if e.combiner == combNamed {
		return raise(self, call, errorf(errArg, "%s is a named predefined type: it has no contents", e.name))
	}
	if mi < int64(len(e.ints)) || ma < int64(len(e.aints)) || mc < int64(len(e.counts)) || md < int64(e.nTypes()) {
		return raise(self, call, errorf(errArg, "the arrays hold %d integers, %d addresses, %d counts, %d types; the type has %d, %d, %d, %d",
			mi, ma, mc, md, len(e.ints), len(e.aints), len(e.counts), e.nTypes()))
	}
	if (len(e.ints) > 0 && ai == 0) || (len(e.aints) > 0 && aa == 0) || (len(e.counts) > 0 && ac == 0) || (e.nTypes() > 0 && ad == 0) {
		return raise(self, call, errorf(errArg, "an output array is NULL"))
	}
	for i, v := range e.ints {
		putInt(ai+uintptr(4*i), v)
	}
	for i, v := range e.aints {
		*(*int64)(ptr(aa + uintptr(8*i))) = int64(v)
	}
	for i, v := range e.counts {
		*(*int64)(ptr(ac + uintptr(8*i))) = int64(v)
	}
	for i, o := range e.olds {
		out := ad + uintptr(8*i)
		if o.predef {
			putHandle(out, predefHandle(o))
			continue
		}
		c := *o
		c.attrs, c.self = nil, 0
		if err := addType(&c, out); err != nil {
			return raise(self, call, err)
		}
	}
	return errSuccess
}

// predefHandle is the handle of a predefined type's entry.
func predefHandle(e *typeEntry) uintptr {
	if e.self != 0 {
		return e.self
	}
	return e.runs[0].h
}

//export mpiabi_Type_get_contents
func mpiabi_Type_get_contents(h uintptr, mi, ma, md int32, ai, aa, ad uintptr) C.int {
	return contents("MPI_Type_get_contents", h, int64(mi), int64(ma), 0, int64(md), ai, aa, 0, ad, false)
}

//export mpiabi_Type_get_contents_c
func mpiabi_Type_get_contents_c(h uintptr, mi, ma, mc, md int64, ai, aa, ac, ad uintptr) C.int {
	return contents("MPI_Type_get_contents_c", h, mi, ma, mc, md, ai, aa, ac, ad, true)
}

//export mpiabi_Get_address
func mpiabi_Get_address(loc, out uintptr) C.int {
	if out == 0 {
		return raise(self, "MPI_Get_address", errorf(errArg, "address is NULL"))
	}
	*(*int64)(ptr(out)) = int64(loc)
	return errSuccess
}

// elements is MPI_Get_elements' answer: the basic elements in b bytes of
// a stream of e's elements, MPI_UNDEFINED if b ends inside one.
func (e *typeEntry) elements(b int64) int64 {
	size := int64(e.size())
	if size == 0 {
		return 0
	}
	whole, rest := b/size, b%size
	n := whole * int64(e.basics)
	if s := e.str; s != nil {
		rest, n = s.descend(rest, n, true)
		return elementsIn(s.in.runs, rest, n)
	}
	return elementsIn(e.runs, rest, n)
}

func (e *typeEntry) String() string { return fmt.Sprint(e.g) }

// unsafeHandles is the n handles of a C array.
func unsafeHandles(u uintptr, n int) []uintptr { return unsafe.Slice((*uintptr)(ptr(u)), n) }

// bytesOf is the bytes of n basic elements of e's typemap
// (MPI_Status_set_elements), whole elements first.
func (e *typeEntry) bytesOf(n int64) int64 {
	if e.basics == 0 {
		return 0
	}
	whole, rest := n/int64(e.basics), n%int64(e.basics)
	b := whole * int64(e.size())
	if s := e.str; s != nil {
		rest, b = s.descend(rest, b, false)
		return bytesIn(s.in.runs, rest, b)
	}
	return bytesIn(e.runs, rest, b)
}

// sizeOr is e's size, or the predefined type h's when e is nil.
func (e *typeEntry) sizeOr(h uintptr) int {
	if e != nil {
		return e.size()
	}
	return dtypes[h].size
}

// opaque is the Go layout of a predefined type meshmpi cannot reduce
// (long double and its kin, MPI_REAL2, the Fortran pairs): its bytes, in
// words of its alignment (d.align, else the largest power of two up to 8
// that divides its size), aligned as C aligns it, so derived types of it
// lay out as C lays them out and move as bytes (its direct calls move
// bytes too: bk, bytekind.go).
func opaque(d dtype) *meshmpi.Datatype {
	align := d.align
	if align == 0 {
		align = 1
		for align < 8 && d.size%(2*align) == 0 {
			align *= 2
		}
	}
	w := meshmpi.Uint8
	switch min(align, 8) {
	case 8:
		w = meshmpi.Uint64
	case 4:
		w = meshmpi.Uint32
	case 2:
		w = meshmpi.Uint16
	}
	g, _ := meshmpi.Contiguous(d.size/w.Size(), w)
	if align > 8 {
		g, _ = meshmpi.Aligned(g, align)
	}
	_ = g.Commit()
	return g
}

// The MPI_Type_create_f90_* types: the sized Fortran type that holds the
// asked precision and range, under a handle of its own that answers the
// F90 combiner and its parameters and cannot be freed (MPI-4.1 §19.1.9).
var f90 struct {
	mu    sync.Mutex
	types map[[3]int32]uintptr
}

const (
	combF90Integer = 113
	combF90Real    = 114
	combF90Complex = 115
)

func f90Type(call string, comb, p, r int32, out uintptr) C.int {
	if out == 0 {
		return raise(self, call, errorf(errArg, "newtype is NULL"))
	}
	var named uintptr
	within := func(v, max int32) bool { return v == undefined || (v >= 0 && v <= max) }
	switch {
	case comb == combF90Integer && within(r, 2):
		named = 0x2c1
	case comb == combF90Integer && within(r, 4):
		named = 0x2c9
	case comb == combF90Integer && within(r, 9):
		named = 0x2d1
	case comb == combF90Integer && within(r, 18):
		named = 0x2d9
	case comb == combF90Real && within(p, 6) && within(r, 37):
		named = 0x2d2
	case comb == combF90Real && within(p, 15) && within(r, 307):
		named = 0x2da
	case comb == combF90Complex && within(p, 6) && within(r, 37):
		named = 0x2db
	case comb == combF90Complex && within(p, 15) && within(r, 307):
		named = 0x2e3
	default:
		return raise(self, call, errorf(errArg, "no type of precision %d and range %d", p, r))
	}
	key := [3]int32{comb, p, r}
	f90.mu.Lock()
	defer f90.mu.Unlock()
	if h, ok := f90.types[key]; ok {
		putHandle(out, h)
		return errSuccess
	}
	o, err := typeOf(named)
	if err != nil {
		return raise(self, call, err)
	}
	e := *o
	e.combiner, e.name, e.attrs = comb, "", nil
	e.ints = []int{int(p), int(r)}
	if comb == combF90Integer {
		e.ints = []int{int(r)}
	}
	if err := addType(&e, out); err != nil {
		return raise(self, call, err)
	}
	e.self = getHandle(out)
	if f90.types == nil {
		f90.types = map[[3]int32]uintptr{}
	}
	f90.types[key] = e.self
	return errSuccess
}

//export mpiabi_Type_create_f90_integer
func mpiabi_Type_create_f90_integer(r int32, out uintptr) C.int {
	return f90Type("MPI_Type_create_f90_integer", combF90Integer, undefined, r, out)
}

//export mpiabi_Type_create_f90_real
func mpiabi_Type_create_f90_real(p, r int32, out uintptr) C.int {
	return f90Type("MPI_Type_create_f90_real", combF90Real, p, r, out)
}

//export mpiabi_Type_create_f90_complex
func mpiabi_Type_create_f90_complex(p, r int32, out uintptr) C.int {
	return f90Type("MPI_Type_create_f90_complex", combF90Complex, p, r, out)
}
