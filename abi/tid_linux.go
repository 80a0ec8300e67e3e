//go:build cgo && linux

package abi

import "syscall"

func gettid() int { return syscall.Gettid() }
