package op

import (
	"fmt"
	"reflect"
	"unsafe"
)

// Numeric is the set of Go element types meshmpi moves and reduces: every
// integer, floating-point and complex type, including named types built on
// them. []byte is []uint8.
type Numeric interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 |
		~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr |
		~float32 | ~float64 | ~complex64 | ~complex128
}

// Element is every element type meshmpi moves: the Numeric types and the
// (value, index) pairs of MaxLoc and MinLoc, MPI's pair types.
type Element interface {
	Numeric |
		Loc[int8] | Loc[int16] | Loc[int32] | Loc[int64] | Loc[int] |
		Loc[uint8] | Loc[uint16] | Loc[uint32] | Loc[uint64] | Loc[uint] | Loc[uintptr] |
		Loc[float32] | Loc[float64]
}

// Type identifies an element type. The zero value is Invalid.
type Type uint8

// The element types. Int, Uint and Uintptr take their size from the target
// (8 bytes on amd64, arm64 and wasm); sized types say on the wire exactly
// what they are.
const (
	Invalid Type = iota
	Int8
	Int16
	Int32
	Int64
	Uint8
	Uint16
	Uint32
	Uint64
	Float32
	Float64
	Complex64
	Complex128
	Int
	Uint
	Uintptr
	numTypes
)

var typeNames = [numTypes]string{
	Invalid: "invalid", Int8: "int8", Int16: "int16", Int32: "int32", Int64: "int64",
	Uint8: "uint8", Uint16: "uint16", Uint32: "uint32", Uint64: "uint64",
	Float32: "float32", Float64: "float64", Complex64: "complex64", Complex128: "complex128",
	Int: "int", Uint: "uint", Uintptr: "uintptr",
}

var typeSizes = [numTypes]int{
	Int8: 1, Int16: 2, Int32: 4, Int64: 8, Uint8: 1, Uint16: 2, Uint32: 4, Uint64: 8,
	Float32: 4, Float64: 8, Complex64: 8, Complex128: 16,
	Int: int(unsafe.Sizeof(int(0))), Uint: int(unsafe.Sizeof(uint(0))), Uintptr: int(unsafe.Sizeof(uintptr(0))),
}

// String returns the Go name of the type.
func (t Type) String() string {
	if t < numTypes {
		return typeNames[t]
	}
	if _, name, ok := locTypeInfo(t); ok {
		return name
	}
	return fmt.Sprintf("Type(%d)", uint8(t))
}

// Size returns the size of one element in bytes, or 0 for an invalid Type.
func (t Type) Size() int {
	if t < numTypes {
		return typeSizes[t]
	}
	if size, _, ok := locTypeInfo(t); ok {
		return size
	}
	return 0
}

// Valid reports whether t names an element type.
func (t Type) Valid() bool {
	_, _, ok := locTypeInfo(t)
	return t > Invalid && t < numTypes || ok
}

var kindTypes = [...]Type{
	reflect.Int: Int, reflect.Int8: Int8, reflect.Int16: Int16, reflect.Int32: Int32, reflect.Int64: Int64,
	reflect.Uint: Uint, reflect.Uint8: Uint8, reflect.Uint16: Uint16, reflect.Uint32: Uint32,
	reflect.Uint64: Uint64, reflect.Uintptr: Uintptr,
	reflect.Float32: Float32, reflect.Float64: Float64,
	reflect.Complex64: Complex64, reflect.Complex128: Complex128,
}

// TypeOf returns the Type of T's underlying type; for a Loc pair, the pair
// Type of its value.
func TypeOf[T Element]() Type {
	t := reflect.TypeFor[T]()
	if t.Kind() == reflect.Struct { // a Loc: its value is the first field
		return locBase + kindTypes[t.Field(0).Type.Kind()]
	}
	return kindTypes[t.Kind()]
}

// SizeOf returns the size of one T in bytes.
func SizeOf[T Element]() int {
	var z T
	return int(unsafe.Sizeof(z))
}

// Bytes returns the memory of s as a byte slice, without copying. The result
// aliases s.
func Bytes[T Element](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(z)))
}

// View returns b as a slice of T, without copying: the inverse of Bytes.
// Trailing bytes that do not fill a whole element are left out. b must be
// aligned for T, as every Bytes view and every Go allocation of T is.
func View[T Element](b []byte) []T {
	var z T
	n := len(b) / int(unsafe.Sizeof(z))
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
}
