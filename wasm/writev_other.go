//go:build !wasip1

package wasm

import "io"

// vecWriterOf returns nil: only a wasip1 guest writes its stream with
// two iovecs (writev_wasip1.go); elsewhere (the package's tests) data
// messages are copied whole into the write buffer.
func vecWriterOf(io.ReadWriteCloser) vecWriter { return nil }
