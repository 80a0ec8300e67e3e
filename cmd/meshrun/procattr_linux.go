package main

import "syscall"

// rankProcAttr puts a rank in a process group of its own, so the signals
// meshrun gets are for meshrun to pass on, and asks the kernel to send it
// SIGTERM if meshrun dies without tearing the job down (SIGKILL, OOM).
func rankProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
