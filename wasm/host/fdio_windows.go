package host

import "syscall"

// fdRead and fdWrite are one read or write on the stream's descriptor,
// lent by its syscall.RawConn (stream.go, relay.go's rawWriter): a
// socket handle on Windows.
func fdRead(fd uintptr, b []byte) (int, error) { return syscall.Read(syscall.Handle(fd), b) }

func fdWrite(fd uintptr, b []byte) (int, error) { return syscall.Write(syscall.Handle(fd), b) }
