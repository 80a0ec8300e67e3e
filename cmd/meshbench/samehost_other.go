//go:build js || wasip1

package main

import (
	"errors"
	"io"
)

// sameHostChild: a wasm build is never a same-host child.
func sameHostChild() bool { return false }

// runSameHost needs native processes (samehost.go).
func runSameHost(io.Writer, config, string, bool) error {
	return errors.New("-link samehost runs native processes: not in this build")
}

// runCollReference runs the MPI reference's processes (coll_reference.go).
func runCollReference(io.Writer, *links, collConfig, int, string, []string) error {
	return errors.New("-mode coll with -mpich runs the MPI reference's processes: not in this build")
}
