//go:build !js && !wasip1

package host_test

import (
	"testing"

	"github.com/meshmpi/meshmpi/wasm/host"
	"github.com/meshmpi/meshmpi/wasm/internal/hosttest"
)

// BenchmarkRelay measures what the host's relay costs: rank 1 (native)
// drives rank 0, a wazero guest or, for comparison, a native rank, over
// the same WebRTC mesh on loopback: 8-byte ping-pong round trips and
// 1 MiB one-way messages (hosttest.BenchPair). wasi-stockpoll runs the
// guest with wazero's own poll_oneoff, which spins while the guest waits
// (poll.go); polls/op shows it.
func BenchmarkRelay(b *testing.B) {
	b.Run("wasi", func(b *testing.B) { hosttest.BenchPair(b, hosttest.Compile(b, "wazero", host.Compile)) })
	b.Run("wasi-stockpoll", func(b *testing.B) {
		hosttest.BenchPair(b, hosttest.Compile(b, "wazero", host.CompileStockPoll))
	})
	b.Run("native", func(b *testing.B) { hosttest.BenchPair(b, nil) })
}
