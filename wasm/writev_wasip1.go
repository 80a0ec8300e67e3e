//go:build wasip1

package wasm

import (
	"io"
	"runtime"
	"syscall"
	"unsafe"
)

// fdWrite is WASI's fd_write, which Go's syscall package calls with one
// buffer only: a data message's head and its payload go to the host in
// one call, two iovecs, and a host that reads the guest's writes in
// place (the wazero host's relay) forwards the payload from the guest's
// memory, with no copy of it into the write buffer first.
//
//go:wasmimport wasi_snapshot_preview1 fd_write
//go:noescape
func fdWrite(fd int32, iovs unsafe.Pointer, n uint32, written unsafe.Pointer) uint32

// iovec is WASI's ciovec: a buffer's address in linear memory and its
// length.
type iovec struct{ buf, len uint32 }

// socketVecWriter writes two buffers as one write to a socket the Go
// runtime polls.
type socketVecWriter struct{ rc syscall.RawConn }

// vecWriterOf returns the two-buffer writer of the guest's stream rw, or
// nil when rw is not a socket (the host-calls stream of runtimes
// without socket pre-opens).
func vecWriterOf(rw io.ReadWriteCloser) vecWriter {
	sc, ok := rw.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return socketVecWriter{rc}
}

func (w socketVecWriter) writeVec(a, b []byte) error {
	var werr error
	err := w.rc.Write(func(fd uintptr) bool {
		for len(a)+len(b) > 0 {
			iov := [2]iovec{{addr(a), uint32(len(a))}, {addr(b), uint32(len(b))}}
			var n uint32
			errno := fdWrite(int32(fd), unsafe.Pointer(&iov[0]), 2, unsafe.Pointer(&n))
			runtime.KeepAlive(a)
			runtime.KeepAlive(b)
			switch syscall.Errno(errno) {
			case 0:
			case syscall.EAGAIN:
				return false // the runtime waits until the socket takes more
			default:
				werr = syscall.Errno(errno)
				return true
			}
			k := min(int(n), len(a))
			a, b = a[k:], b[int(n)-k:]
		}
		return true
	})
	if err != nil {
		return err
	}
	return werr
}

// addr is b's address in linear memory (0 when b is empty).
func addr(b []byte) uint32 {
	if len(b) == 0 {
		return 0
	}
	return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
}
