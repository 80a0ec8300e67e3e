//go:build unix && !linux

package main

import "syscall"

// rankProcAttr puts a rank in a process group of its own, so the signals
// meshrun gets are for meshrun to pass on. Outside Linux nothing ends a
// rank whose meshrun was killed without tearing the job down.
func rankProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
