package meshmpi

import (
	"errors"
	"fmt"

	"github.com/meshmpi/meshmpi/op"
)

// Op is a reduction operation (MPI_Op). The predefined ones are below;
// NewOp makes user-defined ones.
type Op = op.Op

// The predefined reduction operations (MPI_SUM … MPI_NO_OP). Each is defined
// on the element types MPI defines it on; using it on another type is
// ErrOp. Replace and NoOp are not commutative: they keep one operand.
var (
	Sum     = op.Sum
	Prod    = op.Prod
	Max     = op.Max
	Min     = op.Min
	Land    = op.Land
	Lor     = op.Lor
	Lxor    = op.Lxor
	Band    = op.Band
	Bor     = op.Bor
	Bxor    = op.Bxor
	MaxLoc  = op.MaxLoc
	MinLoc  = op.MinLoc
	Replace = op.Replace
	NoOp    = op.NoOp
)

// NewOp returns a user-defined reduction on T (MPI_Op_create): fn sets
// inout[i] = in[i] ⊕ inout[i], where in holds the lower ranks' data. fn must
// be associative; when commutative is false, meshmpi reduces in rank order.
func NewOp[T Numeric](name string, commutative bool, fn func(in, inout []T)) *Op {
	return op.New(name, commutative, fn)
}

// ReduceLocal computes inout[i] = in[i] ⊕ inout[i] with o (MPI_Reduce_local).
func ReduceLocal[T Element](in, inout []T, o *Op) error {
	if err := op.ReduceSlices(o, in, inout); err != nil {
		return wrapOpErr("reduce local", err)
	}
	return nil
}

func wrapOpErr(what string, err error) error {
	switch {
	case errors.Is(err, op.ErrCount):
		return fmt.Errorf("%s: %w: %w", what, ErrCount, err)
	default:
		return fmt.Errorf("%s: %w: %w", what, ErrOp, err)
	}
}
