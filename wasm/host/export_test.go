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

// SetBeforePull makes every relay call f before it sets its guest's
// queue (nil: nothing), for TestGuestParkedBeforePull.
func SetBeforePull(f func()) { beforePull = f }

// PollSleeps is how many times p's guests went to sleep in poll_oneoff
// waiting for their stream.
func (p *Program) PollSleeps() int64 { return p.poll.sleeps.Load() }

// Budgeted reports whether p's module counts down a loop budget
// (loopbudget.go) instead of wazero's termination checks.
func (p *Program) Budgeted() bool { return p.budgeted }

// StreamLooks is how many syscalls read or peeked the stream socket of
// p's guests once they pulled their messages (poller.streamLooks).
func (p *Program) StreamLooks() int64 { return p.poll.streamLooks.Load() }
