//go:build unix

package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/meshmpi/meshmpi/signaling"
)

// sample is what a server says of itself at one moment. Figures a
// server does not tell are zero, with their ok flag false.
type sample struct {
	heap, stack uint64 // heap in use and goroutine stacks, bytes
	memOK       bool
	gcd         bool   // heap and stack were read right after a forced GC
	rss         uint64 // resident set, bytes; 0: unknown
	cpu         time.Duration
	cpuOK       bool
	goroutines  int
	conns       int
	ranks       int
	joins       uint64
	departures  uint64
	sent        uint64 // messages queued to clients, of every type
}

// server is one signaling server under load.
type server struct {
	url string // ws://…/ws
	// probe samples the server; gc asks for heap figures after a
	// forced GC where the server can be told to run one.
	probe func(ctx context.Context, gc bool) (sample, error)
	stop  func() error
	debug string // the child's http://…/debug/pprof/, if any
}

// fleet is the servers of one run and their common token secret.
type fleet struct {
	servers []*server
	secret  []byte
	kind    string // child, embedded or url
}

func (f *fleet) urls() []string {
	u := make([]string, len(f.servers))
	for i, s := range f.servers {
		u[i] = s.url
	}
	return u
}

func (f *fleet) stop() error {
	var errs []error
	for _, s := range f.servers {
		if s.stop != nil {
			errs = append(errs, s.stop())
		}
	}
	return errors.Join(errs...)
}

// sampleAll samples every server.
func (f *fleet) sampleAll(ctx context.Context, gc bool) ([]sample, error) {
	out := make([]sample, len(f.servers))
	for i, s := range f.servers {
		var err error
		if out[i], err = s.probe(ctx, gc); err != nil {
			return nil, fmt.Errorf("sample %s: %w", s.url, err)
		}
	}
	return out, nil
}

func envSecret() string { return os.Getenv("MESHMPI_SIGNAL_SECRET") }

// startFleet starts n servers of cfg's kind, or takes cfg's URLs.
func startFleet(ctx context.Context, cfg config, n int, stderr io.Writer) (_ *fleet, err error) {
	if len(cfg.urls) > 0 {
		f := &fleet{secret: cfg.secret, kind: "url"}
		for i, u := range cfg.urls {
			m := ""
			if i < len(cfg.metrics) {
				m = cfg.metrics[i]
			}
			if m == "" {
				if m, err = metricsURL(u); err != nil {
					return nil, err
				}
			}
			f.servers = append(f.servers, &server{url: u, probe: metricsProbe(m)})
		}
		return f, nil
	}
	secret := make([]byte, 16)
	_, _ = rand.Read(secret)
	f := &fleet{secret: []byte(hex.EncodeToString(secret)), kind: cfg.server}
	defer func() {
		if err != nil {
			_ = f.stop()
		}
	}()
	for range n {
		var s *server
		switch cfg.server {
		case serverEmbedded:
			s, err = startEmbedded(cfg, f.secret)
		case serverSignal:
			s, err = startSignal(ctx, cfg, len(f.servers), f.secret, stderr)
		default:
			s, err = startChild(ctx, cfg, f.secret, stderr)
		}
		if err != nil {
			return nil, err
		}
		f.servers = append(f.servers, s)
	}
	return f, nil
}

// serverConfig is the Config of a server signalload starts.
func serverConfig(cfg config, secret []byte) signaling.Config {
	return signaling.Config{
		Secret:       secret,
		MaxConns:     1 << 20, // the load decides, not the limit
		MaxJobs:      1 << 20,
		MaxJobSize:   cfg.maxJobSize,
		PingInterval: cfg.pingInterval,
		PingTimeout:  cfg.pingTimeout,
	}
}

// startEmbedded serves a signaling server from this process.
func startEmbedded(cfg config, secret []byte) (*server, error) {
	srv, err := signaling.NewServer(serverConfig(cfg, secret))
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	hs := signaling.NewHTTPServer(srv, 0)
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	return &server{
		url: "ws://" + ln.Addr().String() + "/ws",
		probe: func(context.Context, bool) (sample, error) {
			st := srv.Stats()
			cpu, ok := selfCPU()
			return sample{cpu: cpu, cpuOK: ok, conns: st.Conns, ranks: st.Ranks, joins: st.Joins, departures: st.Departures, sent: st.Sent}, nil
		},
		stop: func() error {
			err := srv.Close()
			if e := hs.Close(); e != nil {
				err = errors.Join(err, e)
			}
			if e := <-served; !errors.Is(e, http.ErrServerClosed) {
				err = errors.Join(err, e)
			}
			return err
		},
	}, nil
}

// Environment of a child server: set, the binary serves (serveChild).
const (
	envChild       = "SIGNALLOAD_SERVER"
	envChildSecret = "SIGNALLOAD_SECRET"
)

// startSignal starts `signal serve` on a loopback port of its choosing
// (the address its log names) with the secret in its environment, and
// samples it by its /metrics.
func startSignal(ctx context.Context, cfg config, i int, secret []byte, stderr io.Writer) (*server, error) {
	args := []string{"serve", "-listen", "127.0.0.1:0", "-max-conns", "1000000", "-max-jobs", "1000000",
		"-max-job-size", strconv.Itoa(cfg.maxJobSize), "-log-level", "info", "-log-format", "json"}
	args = append(args, pingArgs(cfg)...)
	for _, a := range cfg.sigArgs {
		args = append(args, strings.ReplaceAll(a, "{i}", strconv.Itoa(i)))
	}
	cmd := exec.Command(cfg.signal, args...)
	cmd.Env = append(os.Environ(), "MESHMPI_SIGNAL_SECRET="+string(secret))
	logs, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("-signal: %w", err)
	}
	exited := make(chan error, 1)
	addr := make(chan string, 1)
	go func() {
		// its log says where it listens; the rest (a line per join)
		// is read and dropped, errors passed on
		sc := bufio.NewScanner(logs)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		found := false
		for sc.Scan() {
			var l struct {
				Msg   string `json:"msg"`
				Addr  string `json:"addr"`
				Level string `json:"level"`
			}
			if json.Unmarshal(sc.Bytes(), &l) != nil || l.Level == "ERROR" {
				fmt.Fprintln(stderr, sc.Text())
				continue
			}
			if !found && l.Msg == "signaling server listening" {
				found = true
				addr <- l.Addr
			}
		}
		close(addr)
		exited <- cmd.Wait()
	}()
	stop := func() error {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			return err
		case <-time.After(cfg.timeout):
			_ = cmd.Process.Kill()
			return fmt.Errorf("signal serve %d did not stop within %v: killed", cmd.Process.Pid, cfg.timeout)
		}
	}
	var a string
	select {
	case got, ok := <-addr:
		if !ok {
			_ = stop()
			return nil, errors.New("signal serve ended before it listened")
		}
		a = got
	case <-time.After(cfg.timeout):
		_ = stop()
		return nil, fmt.Errorf("signal serve did not listen within %v", cfg.timeout)
	case <-ctx.Done():
		_ = stop()
		return nil, ctx.Err()
	}
	return &server{url: "ws://" + a + "/ws", probe: metricsProbe("http://" + a + "/metrics"), stop: stop}, nil
}

// pingArgs passes the ping flags that were set to a started server,
// which has flags of the same names.
func pingArgs(cfg config) []string {
	var args []string
	if cfg.pingInterval > 0 {
		args = append(args, "-ping-interval", cfg.pingInterval.String())
	}
	if cfg.pingTimeout > 0 {
		args = append(args, "-ping-timeout", cfg.pingTimeout.String())
	}
	return args
}

// startChild starts this binary as a server process (serveChild) and
// waits for its address.
func startChild(ctx context.Context, cfg config, secret []byte, stderr io.Writer) (*server, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	args := []string{"-max-job-size", strconv.Itoa(cfg.maxJobSize)}
	args = append(args, pingArgs(cfg)...)
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), envChild+"=1", envChildSecret+"="+string(secret))
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe() // closing it stops the child
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			addr <- sc.Text()
		}
		close(addr)
		_, _ = io.Copy(io.Discard, stdout)
		exited <- cmd.Wait()
	}()
	stop := func() error {
		_ = stdin.Close()
		select {
		case err := <-exited:
			return err
		case <-time.After(cfg.timeout):
			_ = cmd.Process.Kill()
			return fmt.Errorf("server process %d did not stop within %v: killed", cmd.Process.Pid, cfg.timeout)
		}
	}
	var base string
	select {
	case a, ok := <-addr:
		if !ok {
			_ = stop()
			return nil, errors.New("server process ended before it listened")
		}
		base = strings.TrimPrefix(a, "listening ")
	case <-time.After(cfg.timeout):
		_ = stop()
		return nil, fmt.Errorf("server process did not listen within %v", cfg.timeout)
	case <-ctx.Done():
		_ = stop()
		return nil, ctx.Err()
	}
	hc := &http.Client{Timeout: cfg.timeout}
	return &server{
		url:   "ws" + strings.TrimPrefix(base, "http") + "/ws",
		debug: base + "/debug/pprof/",
		stop:  stop,
		probe: func(ctx context.Context, gc bool) (sample, error) {
			u := base + "/stats"
			if gc {
				u += "?gc=1"
			}
			var cs childStats
			if err := getJSON(ctx, hc, u, &cs); err != nil {
				return sample{}, err
			}
			return cs.sample(gc), nil
		},
	}, nil
}

func getJSON(ctx context.Context, hc *http.Client, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v)
}

// metricsURL is the /metrics beside a ws://…/ws endpoint.
func metricsURL(ws string) (string, error) {
	p, err := url.Parse(ws)
	if err != nil {
		return "", err
	}
	switch p.Scheme {
	case "ws":
		p.Scheme = "http"
	case "wss":
		p.Scheme = "https"
	default:
		return "", fmt.Errorf("%w: -url %s: want ws:// or wss://", errUsage, ws)
	}
	p.Path, p.RawQuery = "/metrics", ""
	return p.String(), nil
}

// metricsProbe samples a `signal serve` by its /metrics: the Go
// runtime's and the process's figures as Prometheus exports them (heap
// in use as of the last GC cycle's work, not after a forced one).
func metricsProbe(u string) func(context.Context, bool) (sample, error) {
	hc := &http.Client{Timeout: 30 * time.Second}
	return func(ctx context.Context, _ bool) (sample, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return sample{}, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return sample{}, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return sample{}, fmt.Errorf("GET %s: %s", u, resp.Status)
		}
		m, err := parseMetrics(io.LimitReader(resp.Body, 16<<20))
		if err != nil {
			return sample{}, fmt.Errorf("GET %s: %w", u, err)
		}
		s := sample{
			heap: uint64(m["go_memstats_heap_inuse_bytes"]), stack: uint64(m["go_memstats_stack_inuse_bytes"]),
			rss: uint64(m["process_resident_memory_bytes"]), goroutines: int(m["go_goroutines"]),
			conns: int(m["meshmpi_signal_connections"]), ranks: int(m["meshmpi_signal_ranks"]),
			joins: uint64(m["meshmpi_signal_joins_total"]), departures: uint64(m["meshmpi_signal_departures_total"]),
			sent: uint64(m["meshmpi_signal_messages_sent_total"]),
		}
		_, s.memOK = m["go_memstats_heap_inuse_bytes"]
		var cpu float64
		if cpu, s.cpuOK = m["process_cpu_seconds_total"]; s.cpuOK {
			s.cpu = time.Duration(cpu * float64(time.Second))
		}
		return s, nil
	}
}

// parseMetrics reads the unlabelled samples of a Prometheus text
// exposition: name value.
func parseMetrics(r io.Reader) (map[string]float64, error) {
	m := make(map[string]float64)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' || strings.ContainsRune(line, '{') {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			continue
		}
		m[f[0]] = v
	}
	return m, sc.Err()
}

// selfCPU is this process's CPU time, user and system.
func selfCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
