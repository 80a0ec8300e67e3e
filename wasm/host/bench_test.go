//go:build !js && !wasip1

package host_test

import (
	"testing"

	"github.com/meshmpi/meshmpi/wasm/host"
	"github.com/meshmpi/meshmpi/wasm/internal/hosttest"
)

// BenchmarkRelay measures what the host's relay costs: rank 1 (native)
// drives rank 0, a wazero guest or, for comparison, a native rank, over
// a link of each kind (hosttest.BenchPair): a data channel on loopback
// (webrtc: the README's relay figure, wasi against native) and a memory
// link (memory: both ranks in this process, so wasi against native is
// the guest↔host hop alone): 8-byte ping-pong round trips and 1 MiB
// one-way messages. wasi-stockpoll runs the guest with wazero's own
// poll_oneoff, which spins while the guest waits (poll.go); polls/op
// shows it.
func BenchmarkRelay(b *testing.B) {
	for _, link := range []string{hosttest.LinkWebRTC, hosttest.LinkMemory} {
		b.Run(link, func(b *testing.B) {
			b.Run("wasi", func(b *testing.B) { hosttest.BenchPair(b, hosttest.Compile(b, "wazero", host.Compile), link) })
			b.Run("wasi-stockpoll", func(b *testing.B) {
				hosttest.BenchPair(b, hosttest.Compile(b, "wazero", host.CompileStockPoll), link)
			})
			b.Run("native", func(b *testing.B) { hosttest.BenchPair(b, nil, link) })
		})
	}
}
