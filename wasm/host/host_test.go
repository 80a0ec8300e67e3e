//go:build !js && !wasip1

package host_test

import (
	"testing"

	"github.com/meshmpi/meshmpi/internal/leaktest"
	"github.com/meshmpi/meshmpi/internal/testbin"
	"github.com/meshmpi/meshmpi/wasm/host"
	"github.com/meshmpi/meshmpi/wasm/internal/hosttest"
)

func TestMain(m *testing.M) { testbin.Main(m) }

// TestMixedJob: two wazero guests and two native ranks run the suite.
func TestMixedJob(t *testing.T) {
	leaktest.Check(t)
	hosttest.MixedJob(t, hosttest.Compile(t, "wazero", host.Compile))
}

// TestTrappingGuest: a wazero guest that traps fails its job's receives
// from it with ErrProcFailed.
func TestTrappingGuest(t *testing.T) {
	leaktest.Check(t)
	hosttest.TrappingGuest(t, hosttest.Compile(t, "wazero", host.Compile))
}
