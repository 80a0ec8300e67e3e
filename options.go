package meshmpi

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/meshmpi/meshmpi/coll"
)

// Option configures a world. Every rank of a world gets the same options.
type Option func(*config) error

type config struct {
	eagerLimit int   // bytes; 0 = peer.DefaultEagerLimit, -1 = always rendezvous
	frameSize  int   // memory-link frame size; 0 = peer.DefaultMemoryFrame
	unexpected int64 // bytes of unexpected eager messages a rank holds; 0 = peer.DefaultUnexpectedLimit
	collAlgs   [coll.NumColls]string
	job        *JobSpec // Run's ranks join this job instead of using memory links
	timeout    time.Duration
	keepGoing  bool
	telemetry  telemetryConfig // the job's telemetry settings (telemetry.go)
	// console: the process is the rank (Init, Main), so its console is
	// the rank's, which telemetry reports
	console bool
}

// KeepGoing makes a failed rank not end the world (MPI_ERRORS_RETURN with
// ULFM's recovery). In a Run, a rank whose function returns an error or
// panics fails alone: its links drop, as a crashed process's would, and
// the others see ErrProcFailed for what involves it and recover with
// Revoke, Agree and Shrink; Run returns the errors of the ranks that
// failed, each prefixed with its rank, once every rank has returned.
// Finalize is then a fault-tolerant barrier among the survivors. meshrun's
// --keep-going sets it for a job's ranks (SettingKeepGoing).
func KeepGoing() Option {
	return func(c *config) error {
		c.keepGoing = true
		return nil
	}
}

// WithTimeout bounds a Run: a world whose ranks have not all returned
// after d is aborted, and Run returns an error (ErrTimeout) that says, for
// every rank, what it was blocked in — the call, the communicator, the
// peer and tag, a collective's algorithm and step and the ranks it waited
// for — and whether every rank still running was waiting in meshmpi (a
// deadlock). Only Run accepts it.
func WithTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("timeout %v: want a positive duration: %w", d, ErrArg)
		}
		c.timeout = d
		return nil
	}
}

// WithJob makes Run's n ranks join the job at a signaling server as ranks
// 0 … n-1 and talk over WebRTC data channels instead of memory links: a
// whole job over the real mesh in one process, for tests, benchmarks and
// demonstrations. spec.Rank is ignored. Only Run accepts it.
func WithJob(spec JobSpec) Option {
	return func(c *config) error {
		if spec.Signal == "" || spec.Job == "" || spec.Token == "" {
			return fmt.Errorf("job needs a signaling URL, a job id and a token: %w", ErrArg)
		}
		c.job = &spec
		return nil
	}
}

// WithEagerLimit sets the largest message, in bytes, sent without a
// rendezvous handshake; 0 sends every non-empty message by rendezvous.
// Larger limits cut latency for mid-size messages and cost receiver memory
// for unexpected ones.
func WithEagerLimit(bytes int) Option {
	return func(c *config) error {
		if bytes < 0 {
			return fmt.Errorf("eager limit %d: %w", bytes, ErrArg)
		}
		c.eagerLimit = bytes
		if bytes == 0 {
			c.eagerLimit = -1
		}
		return nil
	}
}

// WithUnexpectedLimit bounds, in bytes, the eager messages a rank holds
// that arrived before their receive was posted (64 MiB by default for a
// native rank, 16 MiB in a browser or WASI runtime). Each peer gets an
// equal share, at least 256 KiB, as eager credit; a sender past its share
// sends by rendezvous instead, so its data waits in its own buffer until
// the receive is posted. It bounds a rank's memory against peers that
// send far ahead of their receivers; it never makes a correct program fail
// or deadlock.
func WithUnexpectedLimit(bytes int64) Option {
	return func(c *config) error {
		if bytes <= 0 {
			return fmt.Errorf("unexpected-message limit %d: %w", bytes, ErrArg)
		}
		c.unexpected = bytes
		return nil
	}
}

// WithFrameSize sets the frame size, header included, of in-process memory
// links. Small frames split rendezvous messages into many frames, which
// tests use to exercise fragmentation without big buffers.
func WithFrameSize(bytes int) Option {
	return func(c *config) error {
		if bytes <= headerLen {
			return fmt.Errorf("frame size %d must exceed the %d-byte header: %w", bytes, headerLen, ErrArg)
		}
		c.frameSize = bytes
		return nil
	}
}

// WithCollAlgorithm makes every rank of the world use the named algorithm
// for a collective ("allreduce", "bcast", … as coll.Coll names them) unless
// a call's Hint says otherwise. It is a job-wide setting: ranks must agree
// on algorithms, so it is never read from a rank's own environment.
func WithCollAlgorithm(collective, algorithm string) Option {
	return func(c *config) error {
		var colls []string
		for k := range coll.NumColls {
			if k.String() != collective {
				colls = append(colls, k.String())
				continue
			}
			var algs []string
			for _, a := range coll.Algorithms(k) {
				if a.Name == algorithm {
					c.collAlgs[k] = algorithm
					return nil
				}
				algs = append(algs, a.Name)
			}
			return fmt.Errorf("%s has no algorithm %q (want one of %s): %w",
				collective, algorithm, strings.Join(algs, ", "), ErrAlgorithm)
		}
		slices.Sort(colls)
		return fmt.Errorf("no collective %q (want one of %s): %w", collective, strings.Join(colls, ", "), ErrArg)
	}
}

func newConfig(opts []Option) (config, error) {
	var c config
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&c); err != nil {
			return c, err
		}
	}
	return c, nil
}
