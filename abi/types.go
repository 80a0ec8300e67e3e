package abi

/*
#include <stdint.h>
*/
import "C"

import (
	"unsafe"

	"github.com/meshmpi/meshmpi"
)

// dtype is a predefined datatype: its name, its size in C on this target
// (for a pair type, its C struct's: the extent, padding included) and the
// Go element type that moves and reduces it.
type dtype struct {
	name string
	size int
	k    kind
	// pair is the typemap of a pair type (MPI_DOUBLE_INT …), nil for the
	// others
	pair *pairMap
	// align is the C alignment of a type with no Go element type (bk,
	// bytekind.go) when its size does not give it: long double's 16 bytes on x86-64
	// and arm64, and the parts' of the Fortran pairs and complexes
	align int
	// mkop makes the Go operation of an MPI_Op_create function on this
	// type; nil for the pair types
	mkop func(name string, fn, dth uintptr, commute, large bool, e *typeEntry) *meshmpi.Op
}

// dt is a type of Go element type T.
func dt[T meshmpi.Element](name string) dtype {
	var z T
	return dtype{name: name, size: int(unsafe.Sizeof(z)), k: tk[T]{}}
}

// dn is a numeric type.
func dn[T meshmpi.Numeric](name string) dtype {
	d := dt[T](name)
	d.mkop = newUserOp[T]
	return d
}

// dtypes are the predefined datatypes, by handle (include/mpi.h). C's
// long is 8 bytes and wchar_t 4 on the 64-bit Unix targets this builds
// for (LP64).
var dtypes = map[uintptr]dtype{
	0x201: dn[int]("MPI_AINT"),
	0x202: dn[int64]("MPI_COUNT"),
	0x203: dn[int64]("MPI_OFFSET"),
	0x207: dn[uint8]("MPI_PACKED"),
	0x208: dn[int16]("MPI_SHORT"),
	0x209: dn[int32]("MPI_INT"),
	0x20a: dn[int64]("MPI_LONG"),
	0x20b: dn[int64]("MPI_LONG_LONG_INT"), // and MPI_LONG_LONG, one handle: named as MPICH names it
	0x20c: dn[uint16]("MPI_UNSIGNED_SHORT"),
	0x20d: dn[uint32]("MPI_UNSIGNED"),
	0x20e: dn[uint64]("MPI_UNSIGNED_LONG"),
	0x20f: dn[uint64]("MPI_UNSIGNED_LONG_LONG"),
	0x210: dn[float32]("MPI_FLOAT"),
	0x212: dn[complex64]("MPI_C_COMPLEX"), // and MPI_C_FLOAT_COMPLEX, one handle: named as MPICH names it
	0x213: dn[complex64]("MPI_CXX_FLOAT_COMPLEX"),
	0x214: dn[float64]("MPI_DOUBLE"),
	0x216: dn[complex128]("MPI_C_DOUBLE_COMPLEX"),
	0x217: dn[complex128]("MPI_CXX_DOUBLE_COMPLEX"),
	0x218: dn[int32]("MPI_LOGICAL"),
	0x219: dn[int32]("MPI_INTEGER"),
	0x21a: dn[float32]("MPI_REAL"),
	0x21b: dn[complex64]("MPI_COMPLEX"),
	0x21c: dn[float64]("MPI_DOUBLE_PRECISION"),
	0x21d: dn[complex128]("MPI_DOUBLE_COMPLEX"),
	0x220: dbytes("MPI_LONG_DOUBLE", 16, 16),
	0x224: dbytes("MPI_C_LONG_DOUBLE_COMPLEX", 32, 16),
	0x225: dbytes("MPI_CXX_LONG_DOUBLE_COMPLEX", 32, 16),
	0x228: dpair[meshmpi.Loc[float32], float32]("MPI_FLOAT_INT", 0x210, 0x209),
	0x229: dpair[meshmpi.Loc[float64], float64]("MPI_DOUBLE_INT", 0x214, 0x209),
	0x22a: dpair[meshmpi.Loc[int64], int64]("MPI_LONG_INT", 0x20a, 0x209),
	0x22b: dpair[meshmpi.Loc[int32], int32]("MPI_2INT", 0x209, 0x209),
	0x22c: dpair[meshmpi.Loc[int16], int16]("MPI_SHORT_INT", 0x208, 0x209),
	0x22d: dpairLongDouble(),
	0x230: dbytes("MPI_2REAL", 8, 4),
	0x231: dbytes("MPI_2DOUBLE_PRECISION", 16, 0),
	0x232: dpair[meshmpi.Loc[int32], int32]("MPI_2INTEGER", 0x219, 0x219),
	0x238: dn[uint8]("MPI_C_BOOL"),
	0x239: dn[uint8]("MPI_CXX_BOOL"),
	0x23c: dn[int32]("MPI_WCHAR"),
	0x240: dn[int8]("MPI_INT8_T"),
	0x241: dn[uint8]("MPI_UINT8_T"),
	0x243: dn[int8]("MPI_CHAR"),
	0x244: dn[int8]("MPI_SIGNED_CHAR"),
	0x245: dn[uint8]("MPI_UNSIGNED_CHAR"),
	0x247: dn[uint8]("MPI_BYTE"),
	0x248: dn[int16]("MPI_INT16_T"),
	0x249: dn[uint16]("MPI_UINT16_T"),
	0x250: dn[int32]("MPI_INT32_T"),
	0x251: dn[uint32]("MPI_UINT32_T"),
	0x258: dn[int64]("MPI_INT64_T"),
	0x259: dn[uint64]("MPI_UINT64_T"),
	0x2c0: dn[int8]("MPI_LOGICAL1"),
	0x2c1: dn[int8]("MPI_INTEGER1"),
	0x2c3: dn[uint8]("MPI_CHARACTER"),
	0x2c8: dn[int16]("MPI_LOGICAL2"),
	0x2c9: dn[int16]("MPI_INTEGER2"),
	0x2ca: dbytes("MPI_REAL2", 2, 0),
	0x2d0: dn[int32]("MPI_LOGICAL4"),
	0x2d1: dn[int32]("MPI_INTEGER4"),
	0x2d2: dn[float32]("MPI_REAL4"),
	0x2d3: dbytes("MPI_COMPLEX4", 4, 2),
	0x2d8: dn[int64]("MPI_LOGICAL8"),
	0x2d9: dn[int64]("MPI_INTEGER8"),
	0x2da: dn[float64]("MPI_REAL8"),
	0x2db: dn[complex64]("MPI_COMPLEX8"),
	0x2e0: dbytes("MPI_LOGICAL16", 16, 16),
	0x2e1: dbytes("MPI_INTEGER16", 16, 16),
	0x2e2: dbytes("MPI_REAL16", 16, 16),
	0x2e3: dn[complex128]("MPI_COMPLEX16"),
	0x2eb: dbytes("MPI_COMPLEX32", 32, 16),
}

// lookupType returns the predefined datatype of a handle (every one has
// a kind: those with no Go element type move as bytes, bytekind.go).
func lookupType(h uintptr) (dtype, error) {
	d, ok := dtypes[h]
	switch {
	case h == 0x200:
		return d, errorf(errType, "MPI_DATATYPE_NULL is not a datatype to use")
	case !ok:
		return d, errorf(errType, "%#x is not a datatype", h)
	}
	return d, nil
}

// sameType checks that a send and a receive type move the same Go type.
func sameType(a, b dtype) error {
	if a.k != b.k {
		return errorf(errType, "send type %s and receive type %s differ (the C binding reduces and moves one element type per call)", a.name, b.name)
	}
	return nil
}

// ops are the predefined reduction operations, by handle (user-defined
// ones are in ops.go).
var ops = map[uintptr]*meshmpi.Op{
	0x21: meshmpi.Sum, 0x22: meshmpi.Min, 0x23: meshmpi.Max, 0x24: meshmpi.Prod,
	0x28: meshmpi.Band, 0x29: meshmpi.Bor, 0x2a: meshmpi.Bxor,
	0x30: meshmpi.Land, 0x31: meshmpi.Lor, 0x32: meshmpi.Lxor,
	0x38: meshmpi.MinLoc, 0x39: meshmpi.MaxLoc, 0x3c: meshmpi.Replace, 0x3d: meshmpi.NoOp,
}
