// Package meshmpi gives Go programs MPI semantics on machines no cluster
// owns: browser tabs, WASI runtimes and native processes joined into one
// job.
//
// This package is the API users import. A rank gets its world communicator
// from Init (a process meshrun launched into a job, a browser page or WASI
// host that started it, or a world of one), from Join (a Session: one rank
// of a job, several per process allowed), or from Run (n ranks as
// goroutines over in-process memory links, or WithJob over a real job's
// mesh). Main picks Init or Run for a program's main function, so the same
// program runs natively, in a browser tab (GOOS=js) and under a WASI
// runtime (GOOS=wasip1). Communicators (Comm), intra- and
// intercommunicators, with Cartesian, graph and distributed-graph
// topologies, carry point-to-point operations over typed Go slices — Send,
// Recv, Isend, Irecv, the persistent SendInit and RecvInit, probes and
// matched probes, the accumulating RecvAccumulate — or over raw memory
// described by derived datatypes (SendTyped, RecvTyped), and every
// collective, neighborhood collectives included, in blocking, nonblocking
// (I…) and persistent (…Init) form. Every nonblocking or persistent
// operation is a Request, completed with Wait, Test and their …all, …any
// and …some forms.
//
// # Architecture
//
// The root package stands on peer, the point-to-point layer (matching,
// frames, the eager and rendezvous protocols, and the links: memory, pion
// WebRTC natively, the page's RTCPeerConnection in a browser), on
// signaling's client (a
// job's rendezvous: join, ranks, settings, the relay of connection set-up
// messages; package mesh turns it into peer's Dialer, so links connect on a
// pair's first message), on coll, the collective schedule engine
// (plans, runs, algorithms, selection), and on op, the leaf that holds
// element types and reductions. Arrows point down only: peer and coll know
// nothing of each other, of communicators or of requests; this package
// translates ranks, validates arguments, gives coll a Transport over a
// communicator's collective context (colltransport.go), and owns the
// request state machine (MPI-4.1 §3.7–3.9). Under GOOS=wasip1 a rank has
// no network: package wasm's guest link carries its frames to the host
// that runs it (wasm/host, on wazero), which joins the mesh for it.
//
// # Errors
//
// Every error wraps one of the MPI error classes declared here (ErrRank,
// ErrTag, ErrTruncate, ErrProcFailed, …), so callers test them with
// errors.Is. Nothing panics across the API: a panic inside a rank started
// by Run becomes that rank's error and aborts the world.
//
// # Byte order
//
// Buffers travel in the machine's byte order; every meshmpi target (amd64,
// arm64, wasm) is little-endian and 64-bit, so a []int means the same on
// every rank of a mixed job.
package meshmpi
