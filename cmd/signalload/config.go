//go:build unix

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"time"
)

// config is one run's command line.
type config struct {
	mode     string
	n        int           // idle, form: ranks
	jobSize  int           // idle: ranks per job
	rate     float64       // churn: joins (each followed by a leave) per second
	duration time.Duration // idle: how long the ranks stay; churn: how long joins start
	inflight int           // joins in flight at once
	timeout  time.Duration // bound on every phase's wait

	urls    []string // servers that run already; empty: start them
	secret  []byte   // their token secret
	metrics []string // their /metrics URLs, by URL ("" derives it)
	server  string   // child, embedded or signal, when urls is empty
	servers int      // how many to start
	signal  string   // the `signal` binary -server signal runs
	sigArgs []string // more arguments of its `signal serve`

	pingInterval time.Duration // started servers' ping period
	pingTimeout  time.Duration // started servers' pong wait
	maxJobSize   int           // started servers' MaxJobSize; the jobs' sizes with urls
	verbose      bool
	profile      string // idle: save the child server's profiles here
}

// Server kinds signalload starts (-server).
const (
	serverChild    = "child"
	serverEmbedded = "embedded"
	serverSignal   = "signal"
)

func parseFlags(mode string, args []string, stderr io.Writer) (config, error) {
	c := config{mode: mode}
	fs := flag.NewFlagSet("signalload "+mode, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var urls, metrics, secret, sigArgs string
	fs.IntVar(&c.n, "n", 1000, "ranks (idle, form)")
	fs.IntVar(&c.jobSize, "job-size", 1000, "ranks per job (idle)")
	fs.Float64Var(&c.rate, "rate", 1000, "joins, each followed by its leave, per second (churn)")
	fs.DurationVar(&c.duration, "duration", 30*time.Second, "idle: how long the joined ranks stay; churn: how long joins start")
	fs.IntVar(&c.inflight, "inflight", 256, "joins in flight at once")
	fs.DurationVar(&c.timeout, "timeout", 2*time.Minute, "the longest any phase (joining, forming, leaving) may take")
	fs.StringVar(&urls, "url", "", "comma-separated ws://HOST:PORT/ws of servers that run already, on this machine (default: start -servers)")
	fs.StringVar(&secret, "secret", "", "the token secret of the -url servers (default: $MESHMPI_SIGNAL_SECRET)")
	fs.StringVar(&metrics, "metrics", "", "comma-separated /metrics URLs of the -url servers, in their order (default: http://HOST:PORT/metrics of each)")
	fs.StringVar(&c.server, "server", serverChild, "servers to start without -url: child (a process each, measured apart from the clients), signal (a `signal serve` process each, -signal) or embedded (in this process)")
	fs.StringVar(&c.signal, "signal", "signal", "the signal binary of -server signal (go build -o /tmp/signal ./cmd/signal)")
	fs.StringVar(&sigArgs, "signal-args", "", "more arguments of each `signal serve` (space-separated; {i} is the server's index)")
	fs.IntVar(&c.servers, "servers", 1, "how many servers to start without -url (churn, form; idle uses one)")
	fs.DurationVar(&c.pingInterval, "ping-interval", 0, "the started servers' ping period (default: the server's, 5s)")
	fs.DurationVar(&c.pingTimeout, "ping-timeout", 0, "how long the started servers wait for a pong before dropping the rank (default: the server's, 3s)")
	fs.IntVar(&c.maxJobSize, "max-job-size", 1024, "the started servers' largest job; with -url, the largest the servers take (churn's jobs have this size)")
	fs.BoolVar(&c.verbose, "v", false, "log progress to stderr")
	fs.StringVar(&c.profile, "profile", "", "idle with a child server: save its CPU profile over the idle period and its heap and goroutine profiles at the end in this directory")
	if err := fs.Parse(args); err != nil {
		return c, fmt.Errorf("%w: %w", errUsage, err)
	}
	bad := func(f string, a ...any) (config, error) {
		return c, fmt.Errorf("%w: %s", errUsage, fmt.Sprintf(f, a...))
	}
	switch {
	case mode != "idle" && mode != "churn" && mode != "form":
		return bad("unknown mode %q (want idle, churn or form)", mode)
	case fs.NArg() > 0:
		return bad("unexpected arguments %q", fs.Args())
	case c.n < 1 || c.jobSize < 1 || c.inflight < 1 || c.servers < 1 || c.maxJobSize < 1:
		return bad("-n, -job-size, -inflight, -servers and -max-job-size must be positive")
	case c.rate <= 0 || c.duration < 0 || c.timeout <= 0 || c.pingInterval < 0 || c.pingTimeout < 0:
		return bad("-rate and -timeout must be positive, -duration, -ping-interval and -ping-timeout not negative")
	case c.server != serverChild && c.server != serverEmbedded && c.server != serverSignal:
		return bad("-server %q: want child, signal or embedded", c.server)
	case mode == "form" && c.n > c.maxJobSize:
		return bad("-n %d above -max-job-size %d", c.n, c.maxJobSize)
	}
	c.jobSize = min(c.jobSize, c.maxJobSize)
	c.urls = splitList(urls)
	c.sigArgs = strings.Fields(sigArgs)
	c.metrics = splitList(metrics)
	for _, u := range c.urls {
		if err := loopback(u); err != nil {
			return bad("-url %s: %v", u, err)
		}
	}
	if len(c.metrics) > 0 && len(c.metrics) != len(c.urls) {
		return bad("-metrics names %d URLs for %d servers", len(c.metrics), len(c.urls))
	}
	for _, u := range c.metrics {
		if err := loopback(u); err != nil {
			return bad("-metrics %s: %v", u, err)
		}
	}
	if len(c.urls) > 0 {
		if secret == "" {
			secret = envSecret()
		}
		if len(secret) < 16 {
			return bad("-url needs the servers' -secret (or MESHMPI_SIGNAL_SECRET), at least 16 bytes")
		}
		c.secret = []byte(secret)
	}
	return c, nil
}

// errOffHost is a server URL that does not name this machine.
var errOffHost = errors.New("not a loopback address: signalload loads servers on this machine only")

// loopback checks that u names a loopback host.
func loopback(u string) error {
	p, err := url.Parse(u)
	if err != nil {
		return err
	}
	host := p.Hostname()
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return errOffHost
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
