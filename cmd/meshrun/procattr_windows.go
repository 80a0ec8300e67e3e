//go:build windows

package main

import "syscall"

// rankProcAttr is nothing on Windows: a rank shares meshrun's console
// (and so gets its Ctrl-C too), and nothing ends a rank whose meshrun was
// killed without tearing the job down.
func rankProcAttr() *syscall.SysProcAttr { return nil }
