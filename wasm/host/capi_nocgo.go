//go:build !cgo && !js && !wasip1

package host

import (
	"context"
	"errors"
	"io"
)

// ErrNoCgo is RunC's error in a host built without cgo: the C binding
// that serves a C rank's calls (package abi) needs it.
var ErrNoCgo = errors.New("wasm host: C ranks need a host built with cgo (package abi's binding); this one was built with CGO_ENABLED=0")

// RunC needs cgo; without it, it fails with ErrNoCgo.
func RunC(ctx context.Context, module []byte, r CRank) (status int, err error) {
	return 1, ErrNoCgo
}

// CRank is how RunC runs a C rank's module (capi.go).
type CRank struct {
	Name           string
	Args           []string
	Env            []string
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Root           string
}
