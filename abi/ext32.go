package abi

/*
#include <stdint.h>
*/
import "C"

// MPI_Pack_external and MPI_Unpack_external in "external32" (MPI-4.1
// §13.5.2): every basic element big-endian at its external size, which is
// the native one but for MPI_LONG and MPI_UNSIGNED_LONG (4 bytes, from 8)
// and MPI_WCHAR (2, from 4). Complex types are two reals, each swapped;
// pair types (MPI_DOUBLE_INT …) and the long double kin are not packed.

// ext32 is a basic type's external32 form: width-byte words, native
// size nat each packed to ext bytes; signed says how a narrowed integer
// widens back.
type ext32 struct {
	words, nat, ext int
	signed          bool
}

func ext32Of(h uintptr) (ext32, error) {
	d := dtypes[h]
	switch h {
	case 0x20a: // MPI_LONG
		return ext32{1, 8, 4, true}, nil
	case 0x20e: // MPI_UNSIGNED_LONG
		return ext32{1, 8, 4, false}, nil
	case 0x23c: // MPI_WCHAR
		return ext32{1, 4, 2, false}, nil
	case 0x212, 0x213, 0x216, 0x217, 0x21b, 0x21d, 0x2db, 0x2e3: // complex
		return ext32{2, d.size / 2, d.size / 2, false}, nil
	}
	if d.k == nil || d.mkop == nil {
		return ext32{}, errorf(errType, "%s has no external32 form in the C binding", d.name)
	}
	return ext32{1, d.size, d.size, false}, nil
}

// ext32Size is the external32 bytes of one element of e.
func (e *typeEntry) ext32Size() (int, error) {
	if e.str != nil {
		return 0, errorf(errUnsupported, "external32 of %s (over %d runs of basic elements) is not supported by the C binding", e, maxRuns)
	}
	n := 0
	for _, r := range e.runs {
		x, err := ext32Of(r.h)
		if err != nil {
			return 0, err
		}
		n += r.n * x.words * x.ext
	}
	return n, nil
}

// ext32Move packs (or unpacks) n elements of e at addr to (from) p.
func (e *typeEntry) ext32Move(addr uintptr, n int, p []byte, pack bool) {
	at := 0
	for i := range n {
		base := int(addr) + i*e.extent()
		for _, r := range e.runs {
			x, _ := ext32Of(r.h)
			for k := range r.n * x.words {
				mem := cbytes(uintptr(base+r.off+k*x.nat), x.nat)
				q := p[at : at+x.ext]
				at += x.ext
				if pack {
					for j := range x.ext { // the low ext bytes, most significant first
						q[j] = mem[x.ext-1-j]
					}
					continue
				}
				fill := byte(0)
				if x.signed && q[0]&0x80 != 0 {
					fill = 0xff
				}
				for j := range x.nat {
					if j < x.ext {
						mem[j] = q[x.ext-1-j]
					} else {
						mem[j] = fill
					}
				}
			}
		}
	}
}

func datarep(u uintptr) error {
	if u == 0 || cstring(u) != "external32" {
		return errorf(errArg, "datarep must be \"external32\"")
	}
	return nil
}

func packExternal(call string, rep, in uintptr, n int64, h, out uintptr, outsize int64, pos uintptr, unpack bool) C.int {
	e, err := packArgs(self, h, n, pos, in, out)
	if err == nil {
		err = datarep(rep)
	}
	var size int
	if err == nil {
		size, err = e.ext32Size()
	}
	if err != nil {
		return raise(self, call, err)
	}
	at := *(*int64)(ptr(pos))
	bytes := n * int64(size)
	if at < 0 || at+bytes > outsize {
		return raise(self, call, errorf(errTruncate, "%d external32 bytes at position %d do not fit in %d", bytes, at, outsize))
	}
	if bytes > 0 {
		mem, packed := in, out
		if unpack {
			mem, packed = out, in
		}
		if packed == 0 {
			return raise(self, call, errorf(errBuffer, "the external32 buffer is NULL"))
		}
		if err := nullBuffer(e, mem, int(n)); err != nil {
			return raise(self, call, err)
		}
		if unpack {
			e.ext32Move(out, int(n), cbytes(in+uintptr(at), int(bytes)), false)
		} else {
			e.ext32Move(in, int(n), cbytes(out+uintptr(at), int(bytes)), true)
		}
	}
	*(*int64)(ptr(pos)) = at + bytes
	return errSuccess
}

//export mpiabi_Pack_external
func mpiabi_Pack_external(rep, in uintptr, n int32, h, out uintptr, outsize int64, pos uintptr) C.int {
	return packExternal("MPI_Pack_external", rep, in, int64(n), h, out, outsize, pos, false)
}

//export mpiabi_Pack_external_c
func mpiabi_Pack_external_c(rep, in uintptr, n int64, h, out uintptr, outsize int64, pos uintptr) C.int {
	return packExternal("MPI_Pack_external_c", rep, in, n, h, out, outsize, pos, false)
}

//export mpiabi_Unpack_external
func mpiabi_Unpack_external(rep, in uintptr, insize int64, pos, out uintptr, n int32, h uintptr) C.int {
	return packExternal("MPI_Unpack_external", rep, in, int64(n), h, out, insize, pos, true)
}

//export mpiabi_Unpack_external_c
func mpiabi_Unpack_external_c(rep, in uintptr, insize int64, pos, out uintptr, n int64, h uintptr) C.int {
	return packExternal("MPI_Unpack_external_c", rep, in, n, h, out, insize, pos, true)
}

func packExternalSize(call string, rep uintptr, n int64, h, out uintptr) C.int {
	e, err := typeOf(h)
	if err == nil {
		err = e.flatten()
	}
	if err == nil {
		err = datarep(rep)
	}
	if err == nil && (n < 0 || out == 0) {
		err = errorf(errArg, "count %d is negative or size is NULL", n)
	}
	var size int
	if err == nil {
		size, err = e.ext32Size()
	}
	if err != nil {
		return raise(self, call, err)
	}
	*(*int64)(ptr(out)) = n * int64(size)
	return errSuccess
}

//export mpiabi_Pack_external_size
func mpiabi_Pack_external_size(rep uintptr, n int32, h, out uintptr) C.int {
	return packExternalSize("MPI_Pack_external_size", rep, int64(n), h, out)
}

//export mpiabi_Pack_external_size_c
func mpiabi_Pack_external_size_c(rep uintptr, n int64, h, out uintptr) C.int {
	return packExternalSize("MPI_Pack_external_size_c", rep, n, h, out)
}

// typeclasses of MPI_Type_match_size: size → the Fortran sized type.
var matchSize = map[int32]map[int]uintptr{
	191: {1: 0x2c0, 2: 0x2c8, 4: 0x2d0, 8: 0x2d8, 16: 0x2e0}, // MPIX_TYPECLASS_LOGICAL
	192: {1: 0x2c1, 2: 0x2c9, 4: 0x2d1, 8: 0x2d9, 16: 0x2e1}, // MPI_TYPECLASS_INTEGER
	193: {2: 0x2ca, 4: 0x2d2, 8: 0x2da, 16: 0x2e2},           // MPI_TYPECLASS_REAL
	194: {4: 0x2d3, 8: 0x2db, 16: 0x2e3, 32: 0x2eb},          // MPI_TYPECLASS_COMPLEX
}

//export mpiabi_Type_match_size
func mpiabi_Type_match_size(class, size int32, out uintptr) C.int {
	if out == 0 {
		return raise(self, "MPI_Type_match_size", errorf(errArg, "datatype is NULL"))
	}
	h, ok := matchSize[class][int(size)]
	if !ok {
		return raise(self, "MPI_Type_match_size", errorf(errArg, "no type of class %d and size %d", class, size))
	}
	putHandle(out, h)
	return errSuccess
}
