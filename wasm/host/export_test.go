//go:build !js && !wasip1

package host

import "context"

// CompileStockPoll compiles module like Compile but keeps wazero's own
// poll_oneoff, which spins while the guest waits (poll.go), for
// BenchmarkRelay's comparison.
func CompileStockPoll(ctx context.Context, module []byte, cacheDir string) (*Program, error) {
	return compile(ctx, module, cacheDir, true)
}

// PollCalls is how many poll_oneoff calls p's guests have made: the
// benchmarks report it per operation (hosttest.Poller).
func (p *Program) PollCalls() int64 { return p.poll.calls.Load() }
