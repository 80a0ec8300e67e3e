// Package abi is meshmpi's C binding of the MPI standard ABI (MPI-5.0,
// ABI version 1.0): a C program compiled against include/mpi.h (or any
// header of the standard ABI) and linked with libmpi_abi.so runs as a rank
// of a meshmpi job, over the same Go API as Go ranks, with no second
// engine.
//
// Build the library with
//
//	go build -buildmode=c-shared -o libmpi_abi.so ./abi/lib
//
// or let cmd/meshcc (the mpicc of meshmpi) build it and compile and link
// a program against it. MPI_Init reads the job from the environment as
// meshmpi.Init does (meshmpi.JobFromEnv), so meshrun -n 4 ./prog runs a
// compiled C program as 4 native ranks; without a launcher MPI_Init makes
// a world of one rank.
//
// The package needs cgo: built without it (CGO_ENABLED=0, js, wasip1) it
// is empty, and meshrun says C WASI ranks need a cgo build.
//
// # How calls cross
//
// calls.txt lists every call of the header in a short notation;
// internal/gen expands it into the prototypes of include/mpi.h and the C
// entry points of calls_gen.c (go generate). A C entry point PMPI_Name
// (MPI_Name is its weak alias) passes its pointers and handles to the Go
// function mpiabi_Name as uintptr_t values: Go never holds a handle
// constant such as MPI_COMM_WORLD ((MPI_Comm)0x101) or MPI_IN_PLACE in a
// pointer-typed variable, where the garbage collector would take it for
// a broken pointer. A call without a Go side is a stub that raises
// MPI_ERR_UNSUPPORTED_OPERATION through the error handler, naming itself.
//
// # Handles
//
// Predefined handles are the standard's constants and map to the Go
// objects without a lookup table at startup. Communicators, requests and
// datatypes that the program creates are small integers above the
// predefined range that index Go-side tables (handles.go, datatypes.go);
// no Go pointer is ever given to C. C buffers are used in place (unsafe.Slice over C memory), so a
// nonblocking operation reads or writes the program's buffer directly,
// and C memory does not move.
//
// # What is there
//
// Environment (MPI_Init, Init_thread: every thread level as asked,
// Finalize, Initialized, Finalized, Abort, Wtime, Wtick,
// Get_processor_name, Get_version, Get_library_version, Query_thread,
// Is_thread_main, Abi_get_version → 1.0); error handlers
// (MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN, MPI_ERRORS_ABORT,
// Error_string, Error_class, Comm_call_errhandler); attributes (MPI_TAG_UB,
// MPI_WTIME_IS_GLOBAL, MPI_UNIVERSE_SIZE, MPI_LASTUSEDCODE and the
// program's keys with their copy and delete functions); point-to-point in
// every mode (ready sends are standard sends; buffered ones blocking,
// nonblocking and persistent (bsendinit.go), with MPI_Buffer_attach,
// detach, flush and iflush), with probes,
// matched probes, Sendrecv and Sendrecv_replace, Isendrecv and
// Isendrecv_replace, persistent requests and
// every Wait/Test form, Request_get_status, Cancel (of receives, and of
// sends the receiver has not matched, buffered ones too: bsend.go), generalized requests (grequest.go: the program's
// query, free and cancel functions, natively) and the status
// accessors; every collective (Alltoallw too; of the neighborhood ones
// Neighbor_allgather, Neighbor_alltoall and Neighbor_alltoallw), on intra- and
// intercommunicators (MPI_ROOT, MPI_PROC_NULL roots),
// blocking, nonblocking and persistent, with MPI_IN_PLACE and the
// large-count (_c) variants, on all predefined operations and
// MPI_Op_create's; communicators (dup, idup, split,
// split_type with MPI_COMM_TYPE_SHARED and the hardware types, create,
// create_group, compare, free, names; Intercomm_create_from_groups over
// groups of MPI_COMM_WORLD's processes),
// groups, Cartesian topologies, info objects.
//
// Datatypes: every predefined one (types.go); those without a Go element
// type of their C size (long double and its complex, the 16-byte Fortran
// types, MPI_REAL2, MPI_2REAL, MPI_2DOUBLE_PRECISION: bytekind.go) move
// as their bytes, aligned in derived types as C aligns them, and are not
// reduced (MPI_ERR_UNSUPPORTED_OPERATION), the pair types
// with MPI's size and typemap (pairs.go: MPI_DOUBLE_INT is 12 bytes of
// extent 16), and derived datatypes (datatypes.go), negative extents too:
// every constructor (contiguous, vector, hvector, indexed, hindexed,
// indexed_block, hindexed_block, struct, subarray, darray, resized, dup,
// and their _c forms) over the Go API's, Type_get_envelope and
// Type_get_contents, commit and free (an operation in flight keeps its
// type), extents, sizes and names, MPI_Pack, Unpack and Pack_size, the
// external32 forms (ext32.go), Get_count and Get_elements, Get_address,
// Type_match_size, the f90 types, and attributes on types (typeattr.go). Every point-to-point call and every collective takes
// derived types (typed.go): point-to-point through the Go API's typed
// calls on the program's buffer in place; the calls without a typed form
// (synchronous nonblocking and persistent sends, matched receives,
// Sendrecv_replace, buffered sends) and the collectives through a packed
// copy in the type's basic element, unpacked when the request completes
// (Wait, Test …) and packed again at each Start. A reduction needs every
// basic element of the type to be of one predefined type, and an
// MPI_Op_create function a derived type without gaps. Alltoallw passes
// its types to the Go API's.
//
// Every other call of the header is a stub: a call is implemented when a
// Go function exports mpiabi_Name (internal/gen looks). Beyond the
// header, the native library keeps the calls MPI-3.0 removed
// (MPI_Errhandler_set and _get, MPI_Address, MPI_Type_extent, _lb, _ub,
// _hvector, _hindexed, _struct) for MPI-1 programs (removed.c); the
// removed constants MPI_LB and MPI_UB are not in the header.
//
// # WASI guests
//
// A C program compiled for wasm32-wasi (meshcc --target wasm32-wasi, or
// meshrun -n 4 prog.c) imports every call from the module "mpi_abi";
// wasm/host serves them from the meshmpi rank it runs natively for its
// guest, through the same mpiabi_ functions (wasi.go, wasi_gen.go, made by
// internal/gen from calls.txt): guest pointers become host addresses
// (range-checked; guest memory is reserved up to its maximum so it never
// moves under a pending operation), handles and MPI_Aint values and arrays
// are widened from wasm32's 32 bits and written back, and the C long
// types map to their 32-bit peers. MPI_Op_create functions and attribute
// copy and delete functions are called back in the guest (wasi_callback.go)
// through helpers mpi_wasi.h defines in it; error-handler, generalized
// request and data-representation callbacks are MPI_ERR_UNSUPPORTED_OPERATION.
// The package keeps one rank's state per process, so each C WASI rank is a
// process of its own.
//
// # Errors
//
// Errors are values of the Go API mapped to MPI error classes; each raised
// error gets an error code of its own whose MPI_Error_string is the Go
// error's message, prefixed by the call (MPI_Error_class gives its class).
// A communicator's error handler is MPI_ERRORS_ARE_FATAL until
// MPI_Comm_set_errhandler changes it; errors not tied to a communicator
// are raised on MPI_COMM_SELF (MPI-4.1 §9.3). A fatal error flushes the
// program's stdio, prints the message and ends the job with status 1.
//
// A bad argument is an error of its MPI-4.1 class and changes nothing:
// no call panics, hangs or takes a message, a request or memory it then
// fails on. TestArgumentSweep holds every implemented call to that
// (sweep_gen_test.go, made from calls.txt, calls each export): a valid
// baseline, then one bad argument at a time by the parameter's role
// (null, wrong-kind, random and freed handles of every kind, uncommitted
// datatypes, negative counts, ranks, roots and tags out of range,
// MPI_IN_PLACE and NULL where not allowed, freed, inactive and active
// requests); testdata/errsweep.c does the same through the C crossing,
// natively and as WASI ranks. A NULL buffer is MPI_BOTTOM: with a count,
// only a derived datatype's absolute displacements make it a buffer.
package abi

//go:generate go run ./internal/gen
