package main

import "syscall"

// procAttr puts a rank process in a process group of its own and has the
// kernel kill it if meshchurn dies first, so that a soak that is itself
// killed leaves no ranks behind.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
