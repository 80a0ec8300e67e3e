//go:build unix && cgo

package main

import "testing"

// The WASI jobs of TestRunWASI under wasmtime.
func TestRunWasmtime(t *testing.T) { runWASI(t, runtimeWasmtime) }
