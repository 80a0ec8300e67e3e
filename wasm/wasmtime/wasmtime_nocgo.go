//go:build !cgo && !js && !wasip1

package wasmtime

import (
	"context"
	"fmt"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/wasm/host"
)

// Program is a rank's module compiled for wasmtime; this build has none
// (wasmtime-go needs cgo).
type Program struct{}

// Compile reports meshmpi.ErrNotSupported: wasmtime-go needs cgo, and
// this program was built without it.
func Compile(ctx context.Context, module []byte, cacheDir string) (*Program, error) {
	return nil, fmt.Errorf("wasmtime host: this program was built without cgo, which wasmtime-go needs: %w", meshmpi.ErrNotSupported)
}

// Close does nothing.
func (p *Program) Close(context.Context) error { return nil }

// Run reports meshmpi.ErrNotSupported.
func (p *Program) Run(ctx context.Context, r host.Rank) (int, error) {
	return 1, fmt.Errorf("wasmtime host: built without cgo: %w", meshmpi.ErrNotSupported)
}
