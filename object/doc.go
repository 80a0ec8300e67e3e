// Package object sends Go values of any type between ranks, as mpi4py's
// lowercase calls do: a config struct can be broadcast, a map gathered, a
// result of any shape reduced with a Go function. A rank never agrees on
// a length beforehand; each value travels as one message with a size
// prefix.
//
//	cfg, err := object.Bcast(world, cfg, 0)          // comm.bcast(cfg, root=0)
//	err = object.Send(world, job, 1, 7)              // comm.send(job, dest=1, tag=7)
//	job, st, err := object.Recv[Job](world, 0, 7)    // job = comm.recv(source=0, tag=7)
//	all, err := object.Gather(world, part, 0)        // comm.gather(part, root=0)
//	best, err := object.Allreduce(world, mine, better) // comm.allreduce(mine, op=better)
//
// # Place in the architecture
//
// object sits above the root package and uses only its public API:
// point-to-point calls with a matched probe (Mprobe/Mrecv) for
// send/receive, and the byte collectives for the rest. It adds no engine
// of its own. The typed numeric calls of the root package stay the
// zero-copy path; this package is for values that are not slices of
// numbers.
//
// # Encoding
//
// A value whose type is a fixed-size, pointer-free layout of numbers
// (arrays and structs of them; not booleans, whose bytes a peer could
// make invalid) travels as its memory, with a
// hash of the layout so that a receiver expecting another layout gets
// ErrDecode instead of reinterpreted bytes. Every other value is encoded
// with CBOR (RFC 8949, github.com/fxamacker/cbor): RATIONALE.md says why.
// Struct fields are matched by name, so sender and receiver may be
// different programs (a browser rank and a native one) as long as their
// types agree on the fields they share. Only exported fields travel.
//
// Every meshmpi target is little-endian with 64-bit int, so memory
// layouts agree between native, WASI and browser ranks.
//
// # Wire format
//
// A message is a 16-byte header, then the payload:
//
//	 0       8    9      12       16
//	+-------+----+------+--------+---------...
//	|  len  |fmt | zero | layout | payload (len bytes)
//	+-------+----+------+--------+---------...
//
// len is the payload's length (little-endian uint64), fmt 1 for memory
// and 2 for CBOR, layout the layout hash of a memory payload (zero for
// CBOR). Bcast sends the header and the first bytes of the payload in
// one fixed-size first message (bcastInline), and the rest only when the
// value is larger. Gather, Scatter, Allgather and Alltoall exchange the
// lengths first, then the payloads in one v-collective, as mpi4py does.
//
// Intercommunicators are not supported (ErrNotSupported).
package object
