//go:build unix

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// config is the command line.
type config struct {
	duration time.Duration // the manager's -for: how long ranks churn
	every    time.Duration // mean interval between churn events
	sample   time.Duration // sampling period (and the manager's -stats)
	workers  int           // the world's workers (the job forms with 1+workers ranks)
	work     int           // farm hash steps per task
	seed     uint64
	farm     string // a farm executable; "" builds examples/farm
	verbose  bool
}

// errUsage is a bad command line.
var errUsage = errors.New("usage")

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("meshchurn", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.DurationVar(&c.duration, "duration", time.Hour, "how long ranks leave and join (the manager adds tasks as long)")
	fs.DurationVar(&c.every, "every", 3*time.Second, "mean interval between churn events (a kill and a join), jittered ±50%")
	fs.IntVar(&c.workers, "workers", 4, "workers of the initial job (ranks 1…workers; rank 0 is the manager)")
	fs.DurationVar(&c.sample, "sample", 30*time.Second, "sample resources this often")
	fs.IntVar(&c.work, "work", defaultWork, "farm hash steps per task, about 1.2 ns each (the default keeps the farm's final sequential check short)")
	fs.Uint64Var(&c.seed, "seed", uint64(time.Now().UnixNano()), "seed of the churn's choices and intervals")
	fs.StringVar(&c.farm, "farm", "", "the farm executable (default: build examples/farm)")
	fs.BoolVar(&c.verbose, "v", false, "print every process started, killed and ended, and the manager's output")
	if err := fs.Parse(args); err != nil {
		return c, fmt.Errorf("%w: %w", errUsage, err)
	}
	switch {
	case fs.NArg() > 0:
		return c, fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	case c.duration <= 0 || c.every <= 0 || c.sample <= 0:
		return c, fmt.Errorf("%w: -duration, -every and -sample must be positive", errUsage)
	case c.workers < 1:
		return c, fmt.Errorf("%w: -workers must be at least 1", errUsage)
	case c.work < 0:
		return c, fmt.Errorf("%w: -work must not be negative", errUsage)
	}
	return c, nil
}

// defaultWork is -work's default (see the package doc, Work).
const defaultWork = 1000

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "meshchurn:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	os.Exit(run(ctx, cfg, os.Stdout, os.Stderr))
}
