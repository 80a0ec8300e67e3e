package mesh

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/wasm"
)

// TestWASIFrame: a same-host link with a WASI host at either end carries
// the frames of the guest/host stream, no larger (the guest would refuse
// them) and no smaller (a 1 MiB message would take more hops).
func TestWASIFrame(t *testing.T) {
	require.Equal(t, wasm.MaxFrame, wasiFrame)
}
