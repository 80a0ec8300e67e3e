package op

import "errors"

// Errors returned by Reduce and ReduceSlices, always wrapped with the
// operation and element type as context: test for them with errors.Is.
var (
	// ErrOp reports a nil or empty Op (the zero Op, or New given a nil
	// function), so a missing operation fails the call instead of panicking.
	ErrOp = errors.New("nil or empty operation")

	// ErrType reports an element type that is invalid or that the operation
	// is not defined on (for example Band on float64, as in MPI). Buffers of
	// the wrong type would otherwise be reduced as garbage.
	ErrType = errors.New("element type invalid or not defined for the operation")

	// ErrCount reports buffers of different lengths, or a length that is not
	// a whole number of elements: the two operands must hold the same count.
	ErrCount = errors.New("buffer lengths differ or are not whole elements")
)
