package main

import "github.com/meshmpi/meshmpi/peer"

// A C program's MPI calls run on goroutines locked to its threads (cgo
// callbacks): the peer package then waits in ways that do not hand the
// processor between threads (peer.SetLockedCallers).
func init() { peer.SetLockedCallers(true) }
