package abi

/*
#include <stdint.h>
*/
import "C"

import (
	"hash/fnv"
	"os"
	"slices"
	"unsafe"

	"github.com/meshmpi/meshmpi"
)

//export mpiabi_Comm_rank
func mpiabi_Comm_rank(comm, rank uintptr) C.int {
	e, err := lookupComm(comm)
	if err != nil {
		return raise(comm, "MPI_Comm_rank", err)
	}
	if rank == 0 {
		return raise(comm, "MPI_Comm_rank", errorf(errArg, "rank is NULL"))
	}
	putInt(rank, e.c.Rank())
	return errSuccess
}

//export mpiabi_Comm_size
func mpiabi_Comm_size(comm, size uintptr) C.int {
	e, err := lookupComm(comm)
	if err != nil {
		return raise(comm, "MPI_Comm_size", err)
	}
	if size == 0 {
		return raise(comm, "MPI_Comm_size", errorf(errArg, "size is NULL"))
	}
	putInt(size, e.c.Size())
	return errSuccess
}

// addComm gives a new communicator a handle; it inherits the error
// handler of the communicator it came from (MPI-4.1 §9.3).
func addComm(from *commEntry, c *meshmpi.Comm) (uintptr, error) {
	state.mu.Lock()
	defer state.mu.Unlock()
	h, ok := state.comms.add(&commEntry{c: c, eh: from.eh})
	if !ok {
		return 0, errorf(errIntern, "too many communicators")
	}
	return h, nil
}

//export mpiabi_Comm_dup
func mpiabi_Comm_dup(comm, newcomm uintptr) C.int {
	e, err := lookupComm(comm)
	if err != nil {
		return raise(comm, "MPI_Comm_dup", err)
	}
	if newcomm == 0 {
		return raise(comm, "MPI_Comm_dup", errorf(errArg, "newcomm is NULL"))
	}
	attrs, err := copyAttrs(comm, e)
	if err != nil {
		return raise(comm, "MPI_Comm_dup", err)
	}
	n, err := e.c.Dup()
	if err != nil {
		return raise(comm, "MPI_Comm_dup", err)
	}
	h, err := addComm(e, n)
	if err != nil {
		return raise(comm, "MPI_Comm_dup", err)
	}
	state.mu.Lock()
	nc, _ := state.comms.get(h)
	nc.attrs = attrs
	state.mu.Unlock()
	putHandle(newcomm, h)
	return errSuccess
}

//export mpiabi_Comm_split
func mpiabi_Comm_split(comm uintptr, color, key int32, newcomm uintptr) C.int {
	e, err := lookupComm(comm)
	if err != nil {
		return raise(comm, "MPI_Comm_split", err)
	}
	if newcomm == 0 {
		return raise(comm, "MPI_Comm_split", errorf(errArg, "newcomm is NULL"))
	}
	col := int(color)
	if color == undefined {
		col = meshmpi.Undefined
	}
	n, err := e.c.Split(col, int(key))
	if err != nil {
		return raise(comm, "MPI_Comm_split", err)
	}
	if n == nil {
		putHandle(newcomm, commNull)
		return errSuccess
	}
	h, err := addComm(e, n)
	if err != nil {
		return raise(comm, "MPI_Comm_split", err)
	}
	putHandle(newcomm, h)
	return errSuccess
}

//export mpiabi_Comm_free
func mpiabi_Comm_free(pcomm uintptr) C.int {
	if pcomm == 0 {
		return raise(self, "MPI_Comm_free", errorf(errArg, "comm is NULL"))
	}
	h := getHandle(pcomm)
	if h == world || h == self {
		return raise(h, "MPI_Comm_free", errorf(errComm, "MPI_COMM_WORLD and MPI_COMM_SELF cannot be freed"))
	}
	e, err := lookupComm(h)
	if err != nil {
		return raise(h, "MPI_Comm_free", err)
	}
	if err := deleteAttrs(h, e); err != nil {
		return raise(h, "MPI_Comm_free", err)
	}
	if err := e.c.Free(); err != nil {
		return raise(h, "MPI_Comm_free", err)
	}
	state.mu.Lock()
	state.comms.remove(h)
	state.mu.Unlock()
	putHandle(pcomm, commNull)
	return errSuccess
}

//export mpiabi_Comm_compare
func mpiabi_Comm_compare(comm1, comm2, result uintptr) C.int {
	a, err := lookupComm(comm1)
	if err != nil {
		return raise(comm1, "MPI_Comm_compare", err)
	}
	b, err := lookupComm(comm2)
	if err != nil {
		return raise(comm1, "MPI_Comm_compare", err)
	}
	if result == 0 {
		return raise(comm1, "MPI_Comm_compare", errorf(errArg, "result is NULL"))
	}
	r, err := meshmpi.Compare(a.c, b.c)
	if err != nil {
		return raise(comm1, "MPI_Comm_compare", err)
	}
	putInt(result, 201+int(r)) // MPI_IDENT, MPI_CONGRUENT, MPI_SIMILAR, MPI_UNEQUAL
	return errSuccess
}

//export mpiabi_Comm_set_errhandler
func mpiabi_Comm_set_errhandler(comm, eh uintptr) C.int {
	e, err := lookupComm(comm)
	if err != nil {
		return raise(comm, "MPI_Comm_set_errhandler", err)
	}
	switch eh {
	case ehFatal, ehReturn, ehAbort:
	default:
		return raise(comm, "MPI_Comm_set_errhandler", errorf(errArg, "%#x is not an error handler meshmpi knows (MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN, MPI_ERRORS_ABORT)", eh))
	}
	state.mu.Lock()
	e.eh = eh
	state.mu.Unlock()
	return errSuccess
}

//export mpiabi_Comm_get_errhandler
func mpiabi_Comm_get_errhandler(comm, eh uintptr) C.int {
	e, err := lookupComm(comm)
	if err != nil {
		return raise(comm, "MPI_Comm_get_errhandler", err)
	}
	if eh == 0 {
		return raise(comm, "MPI_Comm_get_errhandler", errorf(errArg, "errhandler is NULL"))
	}
	state.mu.Lock()
	putHandle(eh, e.eh)
	state.mu.Unlock()
	return errSuccess
}

// MPI_Comm_get_attr's predefined keys point into C memory that holds
// their values (attrVals): MPI_TAG_UB, MPI_WTIME_IS_GLOBAL,
// MPI_UNIVERSE_SIZE and MPI_LASTUSEDCODE. MPI_HOST, MPI_IO and MPI_APPNUM
// are not set (flag 0).
//
//export mpiabi_Comm_get_attr
func mpiabi_Comm_get_attr(comm uintptr, key int32, val, flag uintptr) C.int {
	return getAttr("MPI_Comm_get_attr", comm, key, val, flag)
}

func getAttr(call string, comm uintptr, key int32, val, flag uintptr) C.int {
	e, err := lookupComm(comm)
	if err != nil {
		return raise(comm, call, err)
	}
	if val == 0 || flag == 0 {
		return raise(comm, call, errorf(errArg, "attribute_val or flag is NULL"))
	}
	var i int
	switch key {
	case keyTagUB:
		i = 0
	case keyWtimeGlobal:
		i = 1
	case keyUniverseSize:
		i = 2
	case keyLastUsedCode:
		i = 3
	case keyHost, keyIO, keyAppnum:
		putInt(flag, 0)
		return errSuccess
	default:
		return getUserAttr(call, comm, e, key, val, flag)
	}
	putInt(flag, 1)
	*(*unsafe.Pointer)(ptr(val)) = unsafe.Pointer(&attrVals[i])
	return errSuccess
}

//export mpiabi_Comm_set_name
func mpiabi_Comm_set_name(comm, name uintptr) C.int {
	e, err := lookupComm(comm)
	if err == nil && name == 0 {
		err = errorf(errArg, "comm_name is NULL")
	}
	if err != nil {
		return raise(comm, "MPI_Comm_set_name", err)
	}
	s := C.GoString((*C.char)(ptr(name)))
	if len(s) > maxObjectName-1 {
		s = s[:maxObjectName-1]
	}
	state.mu.Lock()
	e.name = s
	state.mu.Unlock()
	return errSuccess
}

//export mpiabi_Comm_get_name
func mpiabi_Comm_get_name(comm, name, resultlen uintptr) C.int {
	if comm == commNull && name != 0 && resultlen != 0 {
		// MPICH names the null handle (test/mpi/comm/commname)
		putInt(resultlen, putString(name, "MPI_COMM_NULL", maxObjectName))
		return errSuccess
	}
	e, err := lookupComm(comm)
	if err == nil && (name == 0 || resultlen == 0) {
		err = errorf(errArg, "comm_name or resultlen is NULL")
	}
	if err != nil {
		return raise(comm, "MPI_Comm_get_name", err)
	}
	state.mu.Lock()
	s := e.name
	state.mu.Unlock()
	putInt(resultlen, putString(name, s, maxObjectName))
	return errSuccess
}

// Split types of MPI_Comm_split_type.
const (
	commTypeShared         = 221
	commTypeHWUnguided     = 222
	commTypeHWGuided       = 223
	commTypeResourceGuided = 224
)

// MPI_Comm_split_type with MPI_COMM_TYPE_SHARED groups the ranks of a
// host: each rank's hostname is hashed, the hashes gathered, and the
// lowest rank of each host names its color.
//
//export mpiabi_Comm_split_type
func mpiabi_Comm_split_type(comm uintptr, typ, key int32, info, newcomm uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Comm_split_type", err)
	}
	e, err := lookupComm(comm)
	if err == nil && newcomm == 0 {
		err = errorf(errArg, "newcomm is NULL")
	}
	// the hardware-guided types know one resource, the host's shared
	// memory, named by its reserved value (MPI-4.1 §7.4.2): any other
	// value, or none, and the unguided type, which would need a level
	// below the host, give MPI_COMM_NULL, collectively
	shared := typ == commTypeShared
	switch typ {
	case commTypeShared, undefined, commTypeHWUnguided:
	case commTypeHWGuided, commTypeResourceGuided:
		if i, ierr := lookupInfo(info); ierr == nil && info != infoNull {
			infos.mu.Lock()
			shared = i.vals["mpi_hw_resource_type"] == "mpi_shared_memory"
			infos.mu.Unlock()
		}
	default:
		if err == nil {
			err = errorf(errArg, "split type %d", typ)
		}
	}
	if err != nil {
		return raise(comm, "MPI_Comm_split_type", err)
	}
	h := fnv.New64a()
	host, _ := os.Hostname()
	h.Write([]byte(host))
	mine := []uint64{h.Sum64()}
	if !shared {
		mine[0] = 0
	}
	all := make([]uint64, e.c.Size())
	if err := meshmpi.Allgather(e.c, mine, all); err != nil {
		return raise(comm, "MPI_Comm_split_type", err)
	}
	color := int32(undefined)
	if shared {
		color = int32(slices.Index(all, mine[0]))
	}
	return mpiabi_Comm_split(comm, color, key, newcomm)
}
