//go:build unix

package main

import "syscall"

// raiseFileLimit lifts the soft limit on open files to the hard one:
// every connection is a descriptor, in the generator and in a server it
// starts (which inherits the limit).
func raiseFileLimit() {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) == nil && l.Cur < l.Max {
		l.Cur = l.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	}
}
