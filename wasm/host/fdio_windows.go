package host

import "syscall"

// fdRead is one read of the stream's descriptor, lent by its
// syscall.RawConn (stream.go): a socket handle on Windows.
func fdRead(fd uintptr, b []byte) (int, error) { return syscall.Read(syscall.Handle(fd), b) }
