//go:build cgo && !js && !wasip1

package wasmtime

import (
	"testing"

	"github.com/meshmpi/meshmpi/wasm/internal/hosttest"
)

// BenchmarkRelay compares what hosting a rank costs on each runtime:
// rank 0 a wasmtime guest, a wazero guest, or a native rank, driven by a
// native rank 1 over a WebRTC mesh on loopback (hosttest.BenchPair:
// 8-byte ping-pong, 1 MiB one-way; the job forces WebRTC, as the
// README's figure was measured).
func BenchmarkRelay(b *testing.B) {
	for i, rt := range runtimes {
		b.Run(rt.name, func(b *testing.B) { hosttest.BenchPair(b, compile(b, i), hosttest.LinkWebRTC) })
	}
	b.Run("native", func(b *testing.B) { hosttest.BenchPair(b, nil, hosttest.LinkWebRTC) })
}
