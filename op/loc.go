package op

import (
	"reflect"
	"unsafe"
)

// LocValue is the set of value types a Loc pair can carry: the integer and
// floating-point types, the ones with an order. MPI's pair types
// (MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_2INT, MPI_SHORT_INT, MPI_LONG_INT) are
// Loc[float32], Loc[float64], Loc[int32], Loc[int16] and Loc[int64].
type LocValue interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 |
		~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr |
		~float32 | ~float64
}

// Loc is a (value, index) pair, the element type of MaxLoc and MinLoc: a
// reduction that must say not only the extreme value but where it came from
// (typically the rank). The index is an int32 as MPI's is a C int.
//
// On the wire a Loc is its Go memory layout, padding included: Loc[int8] is
// 8 bytes and Loc[float64] 16 on every meshmpi target.
type Loc[T LocValue] struct {
	Value T
	Index int32
}

// locBase offsets the pair types away from the base element types, so a
// pair type is locBase + the Type of its value, and both fit in a Type.
const locBase Type = 64

// The pair types, the Type of Loc[T] for each LocValue type T. Each is 64
// (locBase) plus the Type of its value, so the mapping needs no table.
const (
	LocInt8    = locBase + Int8
	LocInt16   = locBase + Int16
	LocInt32   = locBase + Int32
	LocInt64   = locBase + Int64
	LocUint8   = locBase + Uint8
	LocUint16  = locBase + Uint16
	LocUint32  = locBase + Uint32
	LocUint64  = locBase + Uint64
	LocFloat32 = locBase + Float32
	LocFloat64 = locBase + Float64
	LocInt     = locBase + Int
	LocUint    = locBase + Uint
	LocUintptr = locBase + Uintptr
)

// locSizes and locNames are indexed by the value's Type; zero entries
// (Invalid, the complex types) are not pair types.
var locSizes = [numTypes]int{
	Int8:    int(unsafe.Sizeof(Loc[int8]{})),
	Int16:   int(unsafe.Sizeof(Loc[int16]{})),
	Int32:   int(unsafe.Sizeof(Loc[int32]{})),
	Int64:   int(unsafe.Sizeof(Loc[int64]{})),
	Uint8:   int(unsafe.Sizeof(Loc[uint8]{})),
	Uint16:  int(unsafe.Sizeof(Loc[uint16]{})),
	Uint32:  int(unsafe.Sizeof(Loc[uint32]{})),
	Uint64:  int(unsafe.Sizeof(Loc[uint64]{})),
	Float32: int(unsafe.Sizeof(Loc[float32]{})),
	Float64: int(unsafe.Sizeof(Loc[float64]{})),
	Int:     int(unsafe.Sizeof(Loc[int]{})),
	Uint:    int(unsafe.Sizeof(Loc[uint]{})),
	Uintptr: int(unsafe.Sizeof(Loc[uintptr]{})),
}

var locNames = [numTypes]string{
	Int8: "Loc[int8]", Int16: "Loc[int16]", Int32: "Loc[int32]", Int64: "Loc[int64]",
	Uint8: "Loc[uint8]", Uint16: "Loc[uint16]", Uint32: "Loc[uint32]", Uint64: "Loc[uint64]",
	Float32: "Loc[float32]", Float64: "Loc[float64]",
	Int: "Loc[int]", Uint: "Loc[uint]", Uintptr: "Loc[uintptr]",
}

// locTypeInfo describes a pair type: its size in bytes and its name. ok is
// false when t is not a pair type. Type's Size, String and Valid delegate to
// it, so the pair types live in this file only.
func locTypeInfo(t Type) (size int, name string, ok bool) {
	if t < locBase || t >= locBase+numTypes {
		return 0, "", false
	}
	v := t - locBase
	if locSizes[v] == 0 {
		return 0, "", false
	}
	return locSizes[v], locNames[v], true
}

// elemSize is the size of one element of t in bytes, base or pair type, or
// 0 when t is neither. It does not go through Type.Size, so Reduce works
// whether or not Type knows the pair types.
func elemSize(t Type) int {
	if t > Invalid && t < numTypes {
		return typeSizes[t]
	}
	size, _, _ := locTypeInfo(t)
	return size
}

// LocTypeOf returns the pair Type of Loc[T], the Type to pass to Reduce for
// a buffer of Loc[T].
func LocTypeOf[T LocValue]() Type {
	return locBase + kindTypes[reflect.TypeFor[T]().Kind()]
}

// LocBytes returns the memory of s as a byte slice, without copying, as
// Bytes does for the base types. The result aliases s and includes the
// padding inside each pair.
func LocBytes[T LocValue](s []Loc[T]) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(s[0])))
}

// LocView returns b as a slice of Loc[T], without copying: the inverse of
// LocBytes. Trailing bytes that do not fill a whole pair are left out. b
// must be aligned for Loc[T], as every LocBytes view and every Go
// allocation of Loc[T] is.
func LocView[T LocValue](b []byte) []Loc[T] {
	var z Loc[T]
	n := len(b) / int(unsafe.Sizeof(z))
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*Loc[T])(unsafe.Pointer(unsafe.SliceData(b))), n)
}
