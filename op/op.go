package op

import "fmt"

// Op is a reduction operation, the MPI_Op of meshmpi. Ops are used through
// pointers: the predefined ones are package variables, user ops come from
// New, and an Op is immutable once made, so one Op may be shared by any
// number of goroutines and collectives.
type Op struct {
	name        string
	commutative bool
	predefined  bool
	// kernels holds one loop per element type the op is defined on, nil
	// elsewhere: Defined and Reduce are a single index. nil for the zero Op.
	kernels *[numSlots]kernel
}

// kernel reduces in into inout; both hold the same whole number of
// elements of the type the kernel is registered for.
type kernel func(in, inout []byte)

// numSlots covers every Type a kernel can be registered for: the base
// element types and the pair types.
const numSlots = int(locBase + numTypes)

// The predefined operations (MPI-4.1 §6.9.2), each defined on the element
// types MPI defines it on. Integer arithmetic wraps around as Go's does.
// Logical operations treat a nonzero element as true and produce 1 or 0.
// For floats, Max and Min follow Go's max and min builtins: a NaN operand
// gives NaN, and max(-0, +0) is +0.
var (
	Sum  = predefined("Sum", true)  // MPI_SUM: integers, floats, complex
	Prod = predefined("Prod", true) // MPI_PROD: integers, floats, complex
	Max  = predefined("Max", true)  // MPI_MAX: integers, floats
	Min  = predefined("Min", true)  // MPI_MIN: integers, floats
	Land = predefined("Land", true) // MPI_LAND: integers
	Lor  = predefined("Lor", true)  // MPI_LOR: integers
	Lxor = predefined("Lxor", true) // MPI_LXOR: integers
	Band = predefined("Band", true) // MPI_BAND: integers
	Bor  = predefined("Bor", true)  // MPI_BOR: integers
	Bxor = predefined("Bxor", true) // MPI_BXOR: integers

	// MaxLoc (MPI_MAXLOC) and MinLoc (MPI_MINLOC) are defined on the pair
	// types only (Loc, LocTypeOf): the larger (smaller) value wins, and on
	// equal values the smaller index. A NaN value wins over every number,
	// so the value found agrees with Max (Min).
	MaxLoc = predefined("MaxLoc", true)
	MinLoc = predefined("MinLoc", true)

	// Replace (MPI_REPLACE) sets inout to in, and NoOp (MPI_NO_OP) leaves
	// inout as it is. They serve the accumulating receive (Replace makes
	// it an ordinary receive), are defined on every element and pair type,
	// and are not commutative: the result is one operand, not a combination
	// of both.
	Replace = predefined("Replace", false)
	NoOp    = predefined("NoOp", false)
)

func predefined(name string, commutative bool) *Op {
	return &Op{name: name, commutative: commutative, predefined: true, kernels: new([numSlots]kernel)}
}

// The registration below is MPI's table of which op applies to which type
// class, written once per class; init instantiates it for every type.

func defineInteger[T integer]() {
	t := TypeOf[T]()
	defineNumeric(t, sum[T], prod[T])
	defineOrdered(t, maximum[T], minimum[T])
	Land.kernels[t] = typed(land[T])
	Lor.kernels[t] = typed(lor[T])
	Lxor.kernels[t] = typed(lxor[T])
	Band.kernels[t] = band
	Bor.kernels[t] = bor
	Bxor.kernels[t] = bxor
}

func defineFloat[T ~float32 | ~float64]() {
	t := TypeOf[T]()
	defineNumeric(t, sum[T], prod[T])
	defineOrdered(t, maximum[T], minimum[T])
}

func defineComplex[T ~complex64 | ~complex128]() {
	defineNumeric(TypeOf[T](), sum[T], prod[T])
}

func defineNumeric[T Numeric](t Type, add, mul func(in, inout []T)) {
	Sum.kernels[t] = typed(add)
	Prod.kernels[t] = typed(mul)
	Replace.kernels[t] = replace
	NoOp.kernels[t] = noOp
}

func defineOrdered[T ordered](t Type, hi, lo func(in, inout []T)) {
	Max.kernels[t] = typed(hi)
	Min.kernels[t] = typed(lo)
}

func defineLoc[T LocValue]() {
	t := LocTypeOf[T]()
	MaxLoc.kernels[t] = paired(maxLoc[T])
	MinLoc.kernels[t] = paired(minLoc[T])
	Replace.kernels[t] = replace
	NoOp.kernels[t] = noOp
}

func init() {
	defineInteger[int8]()
	defineInteger[int16]()
	defineInteger[int32]()
	defineInteger[int64]()
	defineInteger[int]()
	defineInteger[uint8]()
	defineInteger[uint16]()
	defineInteger[uint32]()
	defineInteger[uint64]()
	defineInteger[uint]()
	defineInteger[uintptr]()
	defineFloat[float32]()
	defineFloat[float64]()
	defineComplex[complex64]()
	defineComplex[complex128]()
	defineVector() // vector loops where the build and the CPU have them

	defineLoc[int8]()
	defineLoc[int16]()
	defineLoc[int32]()
	defineLoc[int64]()
	defineLoc[int]()
	defineLoc[uint8]()
	defineLoc[uint16]()
	defineLoc[uint32]()
	defineLoc[uint64]()
	defineLoc[uint]()
	defineLoc[uintptr]()
	defineLoc[float32]()
	defineLoc[float64]()
}

// typed adapts a loop over []T to the byte buffers Reduce receives. View
// sizes T by its Go type, so Int, Uint and Uintptr take the target's width.
func typed[T Numeric](f func(in, inout []T)) kernel {
	return func(in, inout []byte) { f(View[T](in), View[T](inout)) }
}

// paired is typed for the pair types.
func paired[T LocValue](f func(in, inout []Loc[T])) kernel {
	return func(in, inout []byte) { f(LocView[T](in), LocView[T](inout)) }
}

// replace and noOp work on bytes: copying or keeping an element does not
// depend on its type.
func replace(in, inout []byte) { copy(inout, in) }
func noOp(in, inout []byte)    {}

// New returns a user-defined operation (MPI_Op_create) on the element type
// of T only. fn must set inout[i] = in[i] ⊕ inout[i] for every i; in and
// inout have the same length and in is the left operand. Declare the op
// commutative only if ⊕ is: a non-commutative op is applied in rank order,
// the lower rank's data as in, which constrains the algorithms the
// collectives may use. A nil fn gives an op that Reduce rejects with ErrOp.
func New[T Numeric](name string, commutative bool, fn func(in, inout []T)) *Op {
	o := &Op{name: name, commutative: commutative}
	if fn != nil {
		o.kernels = new([numSlots]kernel)
		o.kernels[TypeOf[T]()] = typed(fn)
	}
	return o
}

// Name returns the op's name: the Go name of a predefined op ("Sum",
// "MaxLoc"), the name given to New for a user op.
func (o *Op) Name() string {
	if o == nil {
		return "<nil>"
	}
	return o.name
}

// String returns Name, so ops print by name in errors and logs.
func (o *Op) String() string { return o.Name() }

// Commutative reports whether the op's operands may be swapped. When they
// may not, collectives combine contributions in rank order.
func (o *Op) Commutative() bool { return o != nil && o.commutative }

// Predefined reports whether o is one of the package's operations rather
// than one made by New: every rank knows a predefined op by name, a user op
// only by the code each rank runs.
func (o *Op) Predefined() bool { return o != nil && o.predefined }

// Defined reports whether the op applies to elements of type t, so a
// caller can reject a bad pairing when an operation starts rather than at
// its first reduction.
func (o *Op) Defined(t Type) bool {
	return o != nil && o.kernels != nil && int(t) < numSlots && o.kernels[t] != nil
}

// Reduce combines in into inout element-wise, inout[i] = in[i] ⊕ inout[i],
// as MPI_Reduce_local(in, inout, count, t, o) does: in is the left operand,
// so for a non-commutative op it must hold the lower ranks' data. Both
// buffers hold elements of type t and must have the same length, a whole
// number of elements, aligned as View requires; the views from Bytes and
// LocBytes qualify. in and inout may be the same buffer but must not
// otherwise overlap.
//
// Reduce allocates nothing unless it fails, and never panics (a user op's
// function aside).
func (o *Op) Reduce(t Type, in, inout []byte) error {
	if o == nil || o.kernels == nil {
		return fmt.Errorf("op: reduce %q on %v: %w", o.Name(), t, ErrOp)
	}
	if int(t) >= numSlots || o.kernels[t] == nil {
		return fmt.Errorf("op: %s on %v: %w", o.name, t, ErrType)
	}
	size := elemSize(t)
	if len(in) != len(inout) {
		return fmt.Errorf("op: %s on %v: in has %d bytes, inout %d: %w", o.name, t, len(in), len(inout), ErrCount)
	}
	if len(in)%size != 0 {
		return fmt.Errorf("op: %s on %v: %d bytes are not whole %d-byte elements: %w", o.name, t, len(in), size, ErrCount)
	}
	if len(in) > 0 {
		o.kernels[t](in, inout)
	}
	return nil
}

// ReduceSlices is Reduce on typed slices: inout[i] = in[i] ⊕ inout[i], with
// the element type taken from T.
func ReduceSlices[T Element](o *Op, in, inout []T) error {
	return o.Reduce(TypeOf[T](), Bytes(in), Bytes(inout))
}
