//go:build !js && !wasip1 && !windows

package host

import "syscall"

// fdRead and fdWrite are one read or write on the stream's descriptor,
// lent by its syscall.RawConn (stream.go, relay.go's rawWriter).
func fdRead(fd uintptr, b []byte) (int, error) { return syscall.Read(int(fd), b) }

func fdWrite(fd uintptr, b []byte) (int, error) { return syscall.Write(int(fd), b) }
