//go:build !js && !wasip1 && !windows

package host

import "syscall"

// fdRead is one read of the stream's descriptor, lent by its
// syscall.RawConn (stream.go).
func fdRead(fd uintptr, b []byte) (int, error) { return syscall.Read(int(fd), b) }
