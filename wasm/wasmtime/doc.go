// Package wasmtime runs WASI ranks under wasmtime, through its Go
// embedding (github.com/bytecodealliance/wasmtime-go, which needs cgo):
// the same ranks, the same job side (host.Serve) and the same results as
// package wasm/host's wazero Program, over another runtime.
//
// wasmtime-go has no socket pre-opens, so the guest's stream to its host
// is not a socket: the host gives the guest the meshmpi host functions
// (stream_write, stream_read, stream_close; package wasm documents them)
// over an in-memory pipe whose other end host.Serve relays into the job.
// The functions never block; the guest polls them with back-off, so its
// goroutines keep running while a rank waits and an idle rank sleeps in
// poll_oneoff instead of spinning.
//
// A Program compiles a module once for any number of ranks (an Engine
// and a Module shared by all), with the machine code cached on disk
// between runs; each rank is a Store and an Instance of its own. Built
// without cgo, Compile reports meshmpi.ErrNotSupported.
//
// # Differences from the wazero host
//
//   - Stopping a rank (its context ends) takes effect at its next host
//     function call, which a rank waiting for messages makes at least
//     every millisecond; a guest computing in a loop that never yields to
//     its scheduler runs on until it does (wasmtime-go exposes no
//     per-store interruption callback).
//   - Each host function call crosses cgo (about a microsecond), so the
//     guest moves its stream in calls of up to 64 KiB.
package wasmtime
