package abi

/*
#include <stdint.h>
*/
import "C"

// MPI_Pack and MPI_Unpack (MPI-4.1 §5.2): the packed form is the native
// one, the typemap's bytes in order, the same stream the binding moves.

// packArgs checks what MPI_Pack and MPI_Unpack share: the communicator
// (its error handler is the call's), the datatype, the count, the
// position, and the buffers, neither of which may be MPI_IN_PLACE.
func packArgs(comm, h uintptr, n int64, pos, in, out uintptr) (*typeEntry, error) {
	if _, err := lookupComm(comm); err != nil {
		return nil, err
	}
	e, err := usable(h)
	switch {
	case err != nil:
		return nil, err
	case in == inPlace || out == inPlace:
		return nil, errorf(errBuffer, "MPI_IN_PLACE is not a buffer to pack from or to")
	case n < 0:
		return nil, errorf(errCount, "count %d is negative", n)
	case pos == 0:
		return nil, errorf(errArg, "position is NULL")
	}
	return e, nil
}

func readPos(u uintptr, large bool) int64 {
	if large {
		return *(*int64)(ptr(u))
	}
	return int64(*(*int32)(ptr(u)))
}

func writePos(u uintptr, v int64, large bool) {
	if large {
		*(*int64)(ptr(u)) = v
	} else {
		*(*int32)(ptr(u)) = int32(v)
	}
}

func pack(call string, in uintptr, n int64, h, out uintptr, outsize int64, pos, comm uintptr, large bool) C.int {
	e, err := packArgs(comm, h, n, pos, in, out)
	if err != nil {
		return raise(comm, call, err)
	}
	at := readPos(pos, large)
	bytes := n * int64(e.size())
	if at < 0 || at+bytes > outsize {
		return raise(comm, call, errorf(errTruncate, "%d packed bytes at position %d do not fit in outsize %d", bytes, at, outsize))
	}
	if bytes > 0 {
		if out == 0 {
			return raise(comm, call, errorf(errBuffer, "outbuf is NULL"))
		}
		if err := nullBuffer(e, in, int(n)); err != nil {
			return raise(comm, call, err)
		}
		mem, origin := span(e, in, int(n))
		e.pack(cbytes(out+uintptr(at), int(bytes)), mem, origin, 0)
	}
	writePos(pos, at+bytes, large)
	return errSuccess
}

//export mpiabi_Pack
func mpiabi_Pack(in uintptr, n int32, h, out uintptr, outsize int32, pos, comm uintptr) C.int {
	return pack("MPI_Pack", in, int64(n), h, out, int64(outsize), pos, comm, false)
}

//export mpiabi_Pack_c
func mpiabi_Pack_c(in uintptr, n int64, h, out uintptr, outsize int64, pos, comm uintptr) C.int {
	return pack("MPI_Pack_c", in, n, h, out, outsize, pos, comm, true)
}

func unpack(call string, in uintptr, insize int64, pos, out uintptr, n int64, h, comm uintptr, large bool) C.int {
	e, err := packArgs(comm, h, n, pos, in, out)
	if err != nil {
		return raise(comm, call, err)
	}
	at := readPos(pos, large)
	bytes := n * int64(e.size())
	if at < 0 || at+bytes > insize {
		return raise(comm, call, errorf(errTruncate, "%d bytes to unpack at position %d are beyond insize %d", bytes, at, insize))
	}
	if bytes > 0 {
		if in == 0 {
			return raise(comm, call, errorf(errBuffer, "inbuf is NULL"))
		}
		if err := nullBuffer(e, out, int(n)); err != nil {
			return raise(comm, call, err)
		}
		mem, origin := span(e, out, int(n))
		e.unpack(mem, origin, 0, cbytes(in+uintptr(at), int(bytes)))
	}
	writePos(pos, at+bytes, large)
	return errSuccess
}

//export mpiabi_Unpack
func mpiabi_Unpack(in uintptr, insize int32, pos, out uintptr, n int32, h, comm uintptr) C.int {
	return unpack("MPI_Unpack", in, int64(insize), pos, out, int64(n), h, comm, false)
}

//export mpiabi_Unpack_c
func mpiabi_Unpack_c(in uintptr, insize int64, pos, out uintptr, n int64, h, comm uintptr) C.int {
	return unpack("MPI_Unpack_c", in, insize, pos, out, n, h, comm, true)
}

func packSize(call string, n int64, h, comm, out uintptr, large bool) C.int {
	var e *typeEntry
	_, err := lookupComm(comm)
	if err == nil {
		e, err = typeOf(h)
	}
	switch {
	case err != nil:
	case n < 0:
		err = errorf(errCount, "count %d is negative", n)
	case out == 0:
		err = errorf(errArg, "size is NULL")
	}
	if err != nil {
		return raise(comm, call, err)
	}
	b := n * int64(e.size())
	if !large && b > 1<<31-1 {
		return raise(comm, call, errorf(errCount, "%d bytes do not fit in an int: call MPI_Pack_size_c", b))
	}
	writePos(out, b, large)
	return errSuccess
}

//export mpiabi_Pack_size
func mpiabi_Pack_size(n int32, h, comm, out uintptr) C.int {
	return packSize("MPI_Pack_size", int64(n), h, comm, out, false)
}

//export mpiabi_Pack_size_c
func mpiabi_Pack_size_c(n int64, h, comm, out uintptr) C.int {
	return packSize("MPI_Pack_size_c", n, h, comm, out, true)
}
