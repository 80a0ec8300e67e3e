//go:build !js && !wasip1

package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// Messages larger than a data-channel message cross the raw pair in
// several writes and arrive intact.
func TestRawChunks(t *testing.T) {
	p, err := newRawPair(context.Background())
	require.NoError(t, err)
	defer p.close()
	const size = 2*rawMaxMessage + 100
	for _, b := range []bench{benches["latency"], benches["bw"]} {
		rb := newRawBench(p, b, []int{size}, 10)
		for i := range rb.bufs[0] {
			rb.bufs[0][i] = byte(i*7 + i>>10)
		}
		var f float64
		if b.name == "latency" {
			f, err = p.rawLatency(rb.bufs, size, plan{iters: 2, skip: 1, window: 1})
			require.NoError(t, err)
			require.Equal(t, rb.bufs[0][:size], rb.bufs[1][:size], "echo side's copy")
		} else {
			f, err = p.rawBandwidth(rb.bufs, size, plan{iters: 2, skip: 1, window: 3})
			require.NoError(t, err)
			require.Equal(t, rb.bufs[0][:size], rb.bufs[1][size:2*size], "receive buffer")
		}
		require.Positive(t, f)
	}
}
