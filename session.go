package meshmpi

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Environment variables through which a launcher (meshrun, a lab page)
// tells Init which job to join.
const (
	EnvSignal      = "MESHMPI_SIGNAL"       // websocket URL of the signaling server (ws://host:port/ws)
	EnvJob         = "MESHMPI_JOB"          // job id
	EnvToken       = "MESHMPI_TOKEN"        // the rank's seat token, or the job's open token
	EnvRank        = "MESHMPI_RANK"         // requested rank (optional)
	EnvJoinTimeout = "MESHMPI_JOIN_TIMEOUT" // how long Init waits for the whole job, a Go duration (optional)
	// EnvTimeout bounds a launched rank's run from Init to Finalize, a Go
	// duration (optional; meshrun passes it to every rank, WASI guests
	// included): a rank still running then prints what it is blocked in
	// ("meshmpi: rank 2 timed out after 10s (MESHMPI_TIMEOUT): Recv(from
	// rank 3, tag 0) on world: waiting for a message from rank 3") and,
	// after TimeoutLinger (so the other ranks report before its exit
	// wakes them), exits with status 124.
	EnvTimeout = "MESHMPI_TIMEOUT"
	// EnvHost is set by a WASI host (package wasm/host) for the guest rank
	// it runs: how the guest reaches the host, which joins the job for it
	// (a WASI guest has no network of its own). The others are then unset.
	EnvHost = "MESHMPI_WASI_HOST"
)

// TimeoutLinger is how long a rank past EnvTimeout waits after its report
// before it exits: the other ranks' timers, started when the job formed,
// fire within it, so every rank reports what it was blocked in.
const TimeoutLinger = 3 * time.Second

// DefaultJoinTimeout bounds how long Init waits for every rank of a job to
// join when EnvJoinTimeout is not set.
const DefaultJoinTimeout = 2 * time.Minute

// Job settings: the key/value pairs a job token carries and every rank
// receives identically at join. Unknown keys are an error, so ranks of
// different builds never silently disagree.
const (
	// SettingNetwork picks the ICE mode: "loopback" keeps connections on
	// the loopback interface (every rank on one host, as meshrun's embedded
	// server runs them); "lan" (the default) uses every interface.
	SettingNetwork = "net"
	// SettingCollPrefix followed by a collective's name ("coll.allreduce")
	// forces that collective's algorithm for the job, as WithCollAlgorithm.
	SettingCollPrefix = "coll."
	// SettingKeepGoing "1" (or "true") runs the job as KeepGoing does a
	// Run: a failed rank does not end it, the survivors recover with the
	// ULFM calls, and Finalize is a fault-tolerant barrier. meshrun
	// --keep-going sets it.
	SettingKeepGoing = "keep-going"
	// SettingLink picks how ranks link (mesh.SettingLink): "auto" (the
	// default: memory links within a process, shared memory between
	// processes of one host, WebRTC otherwise) or "webrtc" for every
	// pair. meshrun --link sets it.
	SettingLink = "link"
)

// AnyRank asks for the next free rank of a job.
const AnyRank = -1

// JobSpec names a job on a signaling server and this process's seat in it.
type JobSpec struct {
	Signal string // websocket URL of the server's /ws endpoint
	Job    string // job id
	Token  string // this rank's seat token, or the job's open token (signal token, or the server's admin endpoint)
	Rank   int    // rank to take, or AnyRank for the next free one
	// Host is how a WASI guest reaches its host (EnvHost's value); the
	// host holds the job and the seat, so the fields above stay empty.
	Host string
}

// JobFromEnv reads the job a launcher started this process for from the
// environment (EnvSignal, EnvJob, EnvToken, EnvRank). ok is false when
// EnvSignal is unset: the process was not launched into a job.
func JobFromEnv() (spec JobSpec, ok bool, err error) {
	spec = JobSpec{Signal: os.Getenv(EnvSignal), Job: os.Getenv(EnvJob), Token: os.Getenv(EnvToken), Rank: AnyRank,
		Host: os.Getenv(EnvHost)}
	if spec.Host != "" {
		return JobSpec{Rank: AnyRank, Host: spec.Host}, true, nil
	}
	if spec.Signal == "" {
		return spec, false, nil
	}
	if r := os.Getenv(EnvRank); r != "" {
		n, err := strconv.Atoi(r)
		if err != nil || n < 0 {
			return spec, true, fmt.Errorf("%s=%q: want a rank ≥ 0: %w", EnvRank, r, ErrArg)
		}
		spec.Rank = n
	}
	if spec.Job == "" || spec.Token == "" {
		return spec, true, fmt.Errorf("%s is set but %s or %s is not: %w", EnvSignal, EnvJob, EnvToken, ErrArg)
	}
	return spec, true, nil
}

// Session is this process's membership of a job: one rank of a world whose
// ranks reach each other over WebRTC data channels that a signaling server
// helped to set up. Several sessions may live in one process (tests and
// benchmarks run whole jobs that way); each is a separate rank.
type Session struct {
	p    *proc
	mesh interface{ Close() } // the mesh, or a WASI guest's stream to its host

	// exitOnAbort: the process is this rank (Init, Main), so it ends
	// when another rank calls Abort, as MPI_Abort ends every process
	exitOnAbort atomic.Bool

	limit *time.Timer // EnvTimeout's; stopped by Finalize

	once sync.Once
	err  error
}

// Join joins the job spec names and returns once every rank of it is
// present, or when ctx ends. The job's settings (SettingNetwork, collective
// algorithms) apply on top of opts.
func Join(ctx context.Context, spec JobSpec, opts ...Option) (_ *Session, err error) {
	named := false // signaling.Dial's errors name the job and the server
	defer func() {
		if err != nil && !named {
			err = fmt.Errorf("join job %q at %s: %w", spec.Job, spec.Signal, err)
		}
	}()
	if spec.Rank < AnyRank {
		return nil, fmt.Errorf("requested rank %d: %w", spec.Rank, ErrRank)
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	var s *Session
	s, named, err = join(ctx, spec, cfg) // session_net.go, session_net_wasip1.go
	return s, err
}

// CheckSettings reports whether every rank of this build would accept a
// job's settings (SettingNetwork, SettingCollPrefix+collective,
// SettingKeepGoing, SettingTelemetry and its interval and ops): a
// launcher checks them before it starts ranks that would each refuse them.
func CheckSettings(settings map[string]string) error {
	var cfg config
	_, err := applySettings(&cfg, settings)
	return err
}

// applySettings applies a job's settings to cfg and reports whether the
// job's network is loopback.
func applySettings(cfg *config, settings map[string]string) (loopback bool, err error) {
	for k, v := range settings {
		switch {
		case k == SettingNetwork:
			switch v {
			case "loopback":
				loopback = true
			case "lan", "":
			default:
				return false, fmt.Errorf("job setting %s=%q: want loopback or lan: %w", k, v, ErrArg)
			}
		case k == SettingKeepGoing:
			switch v {
			case "1", "true":
				cfg.keepGoing = true
			case "0", "false", "":
			default:
				return false, fmt.Errorf("job setting %s=%q: want 1 or 0: %w", k, v, ErrArg)
			}
		case k == SettingLink:
			if v != "auto" && v != "webrtc" && v != "" {
				return false, fmt.Errorf("job setting %s=%q: want auto or webrtc: %w", k, v, ErrArg)
			}
		case k == SettingTelemetry, k == SettingTelemetryInterval, k == SettingTelemetryOps:
			if err := applyTelemetrySetting(&cfg.telemetry, k, v); err != nil {
				return false, err
			}
		case strings.HasPrefix(k, SettingCollPrefix):
			if err := WithCollAlgorithm(strings.TrimPrefix(k, SettingCollPrefix), v)(cfg); err != nil {
				return false, fmt.Errorf("job setting %s: %w", k, err)
			}
		default:
			return false, fmt.Errorf("job setting %q is unknown to this build: %w", k, ErrNotSupported)
		}
	}
	return loopback, nil
}

// World returns the session's world communicator.
func (s *Session) World() *Comm { return s.p.world }

// Links counts the peer connections this rank has opened or accepted.
// Links connect lazily, on the first message between two ranks.
func (s *Session) Links() int { return s.p.ep.Links() }

// Finalize ends the rank (MPI_Finalize): it waits for every rank of the
// world, closes the peer connections and leaves the job. Later calls
// return the first call's result.
func (s *Session) Finalize() error {
	if s.limit != nil {
		s.limit.Stop()
	}
	s.once.Do(func() {
		err := s.p.finalize()
		s.mesh.Close()
		s.err = err
	})
	return s.err
}

// Abort leaves the job at once, as a failed process would: this rank's
// pending operations fail with cause (ErrProcFailed if nil), and the other
// ranks see ErrProcFailed for everything involving this one.
func (s *Session) Abort(cause error) {
	if cause == nil {
		cause = ErrProcFailed
	}
	// first the endpoint, outside once: a Finalize stuck in its barrier
	// holds once and needs this to fail
	s.p.endWith(fmt.Errorf("rank aborted: %w: %w", ErrProcFailed, cause))
	s.once.Do(func() {
		s.mesh.Close()
		s.err = fmt.Errorf("finalize after abort: %w", ErrProcFailed)
	})
}

// jobAborted is told that rank called Abort with code: this rank's
// pending and later operations fail with the *AbortError, and a process
// that is this rank ends with code.
func (s *Session) jobAborted(rank, code int, reason string) {
	where, _ := strings.CutPrefix(reason, fmt.Sprintf("called Abort(%d) at ", code))
	if where == reason {
		where = ""
	}
	e := &AbortError{Rank: rank, Code: code, Where: where}
	if s.exitOnAbort.Load() {
		exitAborted(e, "rank "+strconv.Itoa(s.p.world.rank))
	}
	// the endpoint first, here, so pending operations fail with the
	// abort rather than with the aborting rank's departure, told next
	cause := fmt.Errorf("the job ends: %w: %w", e, ErrProcFailed)
	s.p.endWith(cause)
	// the mesh not on its own goroutine, which closing it waits for
	go s.Abort(cause)
}

// evicted is told that the job declared this rank failed (a peer lost its
// link to it, or it stopped answering): its endpoint closes with err next,
// so every operation fails with it. A process that is this rank ends at
// once, saying why: a rank declared failed is failed for good (fail-stop),
// and the job goes on without it.
func (s *Session) evicted(err error) {
	if s.p.finalized.Load() || !s.exitOnAbort.Load() {
		return
	}
	fmt.Fprintf(os.Stderr, "meshmpi: %v: ending the process\n", err) // err names the rank
	os.Exit(1)
}

// ownProcess makes the session the process's rank (Init, Main): it ends
// with the job on another rank's Abort, and under EnvTimeout. A bad
// EnvTimeout leaves the job.
func (s *Session) ownProcess() error {
	s.exitOnAbort.Store(true)
	s.answerReports() // report_unix.go
	if err := s.limitRun(); err != nil {
		s.Abort(err)
		return err
	}
	return nil
}

// limitRun arms EnvTimeout for a process that is this rank.
func (s *Session) limitRun() error {
	v := os.Getenv(EnvTimeout)
	if v == "" {
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return fmt.Errorf("%s=%q: want a positive duration: %w", EnvTimeout, v, ErrArg)
	}
	s.limit = time.AfterFunc(d, func() {
		s.p.timedOut.Store(true)
		what := s.p.report()
		if what == "" {
			what = "running, not blocked in meshmpi"
		}
		fmt.Fprintf(os.Stderr, "meshmpi: rank %d timed out after %v (%s): %s\n", s.p.world.rank, d, EnvTimeout, what)
		time.Sleep(TimeoutLinger)
		os.Exit(124)
	})
	return nil
}

// joinTimeout is how long Init waits for the job to form.
func joinTimeout() (time.Duration, error) {
	v := os.Getenv(EnvJoinTimeout)
	if v == "" {
		return DefaultJoinTimeout, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s=%q: want a positive duration: %w", EnvJoinTimeout, v, ErrArg)
	}
	return d, nil
}

// initJob is Init's path for a process a launcher started into a job.
func initJob(spec JobSpec, opts []Option) (*Session, error) {
	d, err := joinTimeout()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeoutCause(context.Background(), d,
		fmt.Errorf("the job did not form within %v (%s): %w", d, EnvJoinTimeout, ErrProcFailed))
	defer cancel()
	// the process is the rank: its console is the rank's (telemetry)
	opts = append(opts[:len(opts):len(opts)], func(c *config) error { c.console = true; return nil })
	s, err := Join(ctx, spec, opts...)
	if err != nil && errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("%w: %w", err, context.Cause(ctx))
	}
	return s, err
}

// Main runs fn as this process's part of a job, the way example programs
// and tools start: a process a launcher started into a job (JobFromEnv)
// joins it as one rank and runs fn once; any other process runs an
// in-process world of n ranks (Run). A rank whose fn fails aborts the
// job, so the others see ErrProcFailed instead of waiting for it.
func Main(n int, fn func(world *Comm) error, opts ...Option) error {
	spec, launched, err := JobFromEnv()
	if err != nil {
		return err
	}
	if !launched {
		return Run(n, fn, opts...)
	}
	if fn == nil {
		return fmt.Errorf("main: nil rank function: %w", ErrArg)
	}
	s, err := initJob(spec, opts)
	if err != nil {
		return err
	}
	if err := s.ownProcess(); err != nil {
		return err
	}
	if err := runRank(s.p, fn); err != nil {
		if s.p.keepGoing {
			// the rank fails alone, as a crash would: its links drop
			// now, and its signaling connection with the process, not
			// closed cleanly (a clean close is a rank that finished)
			s.p.endWith(fmt.Errorf("rank %d failed: %w: %w", s.p.world.rank, ErrProcFailed, err))
		} else {
			s.Abort(err)
		}
		return fmt.Errorf("rank %d: %w", s.p.world.rank, err)
	}
	if err := s.Finalize(); err != nil {
		return fmt.Errorf("rank %d: %w", s.p.world.rank, err)
	}
	return nil
}
