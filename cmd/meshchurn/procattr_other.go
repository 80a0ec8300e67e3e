//go:build unix && !linux

package main

import "syscall"

// procAttr puts a rank process in a process group of its own.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
