//go:build !js

// Command signal runs the meshmpi signaling server and mints job tokens.
//
//	signal serve [flags]                       serve /ws, /healthz, /metrics (and /admin/token),
//	                                           and the browser UI (package web): the organizer's
//	                                           jobs page, invites, join, dashboard and pool pages,
//	                                           and the run and lab pages
//	signal token -job J -size N [-ttl 1h]      print the job's seat tokens, rank r's on line r
//	             [-rank R | -open | -late]     (or only rank R's, one open token, or one late token)
//	             [-max M]                      the job may grow to M ranks once formed
//	             [-url ws://HOST:PORT/ws]      each as a join URL, ws://HOST:PORT/ws?job=J&token=T
//
// # The jobs page
//
// An organizer (a teacher, a volunteer-compute organizer) logs in at
// /login and creates jobs at /jobs: a built example or an uploaded
// GOOS=js program (and a WASI one for `meshrun join`), its size (and a
// max, for a job that admits late ranks once formed), ICE servers of its
// own, a time limit and whether volunteers of the pool may be sent to
// it. Each job gets an invite link and its QR code: a browser tab that
// opens it becomes one rank of the job with a seat token of its own. The
// job's dashboard (/jobs/ID/dashboard, with the job's viewer key for
// anyone else) shows its ranks, the mesh, the consoles and a timeline of
// the operations, and downloads a Chrome trace; /pool is the page a
// volunteer leaves open to join whichever pool job needs ranks. Jobs get
// the settings telemetry=1 and net=lan (net=loopback when the server
// listens on a loopback address and names no -public-url). The flags:
//
//	-admin-password P   the organizer's password (MESHMPI_SIGNAL_ADMIN_PASSWORD
//	                    is the better place); -admin-key logs in too, and as
//	                    "Authorization: Bearer KEY" on the API. With neither,
//	                    only a browser on the server's own machine may
//	                    organize (http://localhost:8080/jobs).
//	-tls-cert F -tls-key F   serve HTTPS and WSS: browsers give pages off
//	                    localhost a secure context only over HTTPS, and
//	                    WebRTC and other APIs need one. (Or put a
//	                    TLS-terminating reverse proxy in front and set
//	                    -public-url.)
//	-public-url URL     the https://host:port invites, QR codes and dashboard
//	                    links name (default: the request's own scheme and host)
//	-max-upload N       largest uploaded program, bytes (64 MiB)
//	-max-ui-jobs N      jobs the page holds (100; ended ones stay an hour)
//
// A class: on the teacher's machine,
//
//	MESHMPI_SIGNAL_SECRET=$(openssl rand -hex 16) MESHMPI_SIGNAL_ADMIN_PASSWORD=… \
//	  go run ./cmd/signal serve -listen 0.0.0.0:8443 -tls-cert cert.pem -tls-key key.pem \
//	    -build-examples ./examples -turn :3478
//
// then https://HOST:8443/login, create a job of 20 ranks, and show the
// students its QR code.
//
// # Jobs that grow
//
// With -max M (M > N) the job forms when its N ranks are present, as any
// other, and then admits late ranks N…M-1, one by one in the order they
// join, each with an open token of the job: a seat token names one of the
// N seats only. An open token (-open) takes a free seat while the job
// forms and a late rank's place after; a late token (-late) only the
// latter, and a join with it before the job formed is refused as
// not-formed (try again), so it cannot turn a launcher's seated job into
// a volunteers' open one. Every token of a job must carry the same -size,
// -max and -settings. Past M ranks a join is refused (job full: M of M
// ranks); a late rank that leaves or is declared failed is not replaced
// under its number. See package signaling, Growth.
//
// With -url, the server's websocket URL, each token is printed as a
// join URL, which carries the server, the job and the token in one
// string (ws://HOST:PORT/ws?job=J&token=T, the form meshrun --max prints):
//
//	meshrun join "$(signal token -job J -size 4 -max 8 -late -url ws://host:8080/ws)" ./prog
//
// # Browser ranks
//
// The run page (/run?job=J&token=T&example=E) and the lab page (/lab) run
// programs built for GOOS=js GOARCH=wasm, served at /wasm/E.wasm, with the
// Go toolchain's wasm_exec.js at /wasm_exec.js. The programs come from
//
//	-build-examples DIR   build every main package under DIR at start-up
//	                      (needs the go command, -go; e.g. ./examples)
//	-wasm DIR             prebuilt DIR/E.wasm files (GOOS=js GOARCH=wasm
//	                      go build -o DIR/E.wasm ./examples/E)
//
// and wasm_exec.js from -wasm-exec, or else from the GOROOT of the
// toolchain that -build-examples used, or else from the toolchain this
// binary was built with: a .wasm runs only with the wasm_exec.js of the Go
// release that built it. -lab lets the lab page start jobs by itself
// (POST /lab/jobs mints the seat tokens of a new job, for clients on this
// host only, asking by an IP address, localhost or a -public-name);
// elsewhere, pages get their tokens from `signal token` or /admin/token.
//
// Every flag has an environment variable MESHMPI_SIGNAL_<NAME> (upper case,
// dashes as underscores) that sets its default; the secret is best given that
// way (MESHMPI_SIGNAL_SECRET) rather than on the command line.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/meshmpi/meshmpi/signaling"
	"github.com/meshmpi/meshmpi/signaling/natsbus"
	"github.com/meshmpi/meshmpi/turn"
	"github.com/meshmpi/meshmpi/web"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "signal:", err)
		os.Exit(2)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: signal serve|token [flags]")
	}
	switch args[0] {
	case "serve":
		return serve(args[1:], stderr)
	case "token":
		return token(args[1:], stdout, stderr)
	}
	return fmt.Errorf("unknown command %q (want serve or token)", args[0])
}

// env returns MESHMPI_SIGNAL_<name> or def.
func env(name, def string) string {
	if v, ok := os.LookupEnv("MESHMPI_SIGNAL_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))); ok {
		return v
	}
	return def
}

type flagSet struct {
	*flag.FlagSet
	errs []error
}

func (f *flagSet) str(name, def, usage string) *string {
	return f.String(name, env(name, def), usage)
}

func (f *flagSet) int(name string, def int, usage string) *int {
	v, err := strconv.Atoi(env(name, strconv.Itoa(def)))
	if err != nil {
		f.errs = append(f.errs, fmt.Errorf("env for -%s: %w", name, err))
	}
	return f.Int(name, v, usage)
}

func (f *flagSet) float(name string, def float64, usage string) *float64 {
	v, err := strconv.ParseFloat(env(name, strconv.FormatFloat(def, 'g', -1, 64)), 64)
	if err != nil {
		f.errs = append(f.errs, fmt.Errorf("env for -%s: %w", name, err))
	}
	return f.Float64(name, v, usage)
}

func (f *flagSet) dur(name string, def time.Duration, usage string) *time.Duration {
	v, err := time.ParseDuration(env(name, def.String()))
	if err != nil {
		f.errs = append(f.errs, fmt.Errorf("env for -%s: %w", name, err))
	}
	return f.Duration(name, v, usage)
}

func (f *flagSet) parse(args []string) error {
	if err := f.Parse(args); err != nil {
		return err
	}
	if f.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", f.Args())
	}
	return errors.Join(f.errs...)
}

func newFlagSet(name string, stderr io.Writer) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return &flagSet{FlagSet: fs}
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

type serveConfig struct {
	listen  string
	cluster clusterConfig
	sig     signaling.Config
	grace   time.Duration
	idle    time.Duration // keep-alive HTTP connections without a request are closed after this
	web     webConfig
	ice     iceConfig
	ui      uiConfig
	tls     *tls.Config // nil: plain HTTP
}

// uiConfig is the jobs page's: who organizes, links, bounds.
type uiConfig struct {
	password  string // -admin-password
	publicURL string // -public-url
	loopback  bool   // jobs get net=loopback: the server listens on loopback and names no public URL
	maxUpload int64  // -max-upload
	maxJobs   int    // -max-ui-jobs
}

func parseServe(args []string, stderr io.Writer) (serveConfig, error) {
	f := newFlagSet("signal serve", stderr)
	listen := f.str("listen", "127.0.0.1:8080", "listen address")
	secret := f.str("secret", "", "token secret, at least 16 bytes (required)")
	adminKey := f.str("admin-key", "", "enables POST /admin/token with this bearer key")
	origins := f.str("origins", "", "comma-separated browser origin patterns allowed (host patterns)")
	finishICE := addICEFlags(f)
	maxMsg := f.int("max-message-bytes", 64<<10, "largest message")
	rate := f.float("rate", 50, "messages per second per connection")
	burst := f.int("burst", 200, "message burst per connection")
	maxJobs := f.int("max-jobs", 1000, "jobs per server")
	maxConns := f.int("max-conns", 10000, "connections per server")
	maxSize := f.int("max-job-size", 1024, "ranks per job")
	ping := f.dur("ping-interval", signaling.DefaultPingInterval, "websocket ping period (a frozen rank is gone within ping-interval + ping-timeout)")
	pingTimeout := f.dur("ping-timeout", signaling.DefaultPingTimeout, "pong wait before a socket counts as dead")
	queueBytes := f.int("send-queue-bytes", 1<<20, "outbound bytes queued per connection before it is dropped as a slow consumer")
	maxEnded := f.int("max-ended-jobs", 10000, "failed or ended jobs remembered (until their tokens expire) so they do not form again")
	joinTimeout := f.dur("join-timeout", 10*time.Second, "time from connect to join")
	grace := f.dur("shutdown-grace", 10*time.Second, "graceful shutdown limit")
	idle := f.dur("idle-timeout", signaling.DefaultIdleTimeout, "close keep-alive HTTP connections idle this long")
	logFormat := f.str("log-format", "text", "text or json")
	logLevel := f.str("log-level", "info", "debug, info, warn or error")
	var wc webConfig
	f.StringVar(&wc.wasmDir, "wasm", env("wasm", ""), "directory of prebuilt GOOS=js programs NAME.wasm for the run page")
	f.StringVar(&wc.buildDir, "build-examples", env("build-examples", ""), "build every main package under this directory for GOOS=js at start-up")
	f.StringVar(&wc.goCmd, "go", env("go", "go"), "the go command -build-examples uses")
	f.StringVar(&wc.wasmExec, "wasm-exec", env("wasm-exec", ""), "wasm_exec.js of the toolchain that built the programs")
	f.BoolVar(&wc.lab, "lab", env("lab", "") == "true", "let the lab page start jobs for clients on this host (POST /lab/jobs)")
	labMax := f.int("lab-max-size", 64, "largest lab job")
	names := f.str("public-name", "", "comma-separated host names this server is reached by; the lab (and the jobs page without -admin-password) answers requests to these, IP addresses and localhost only")
	password := f.str("admin-password", "", "the organizer's password for the jobs page (/login; the -admin-key is accepted too); with neither, only browsers on this machine may organize (best given as MESHMPI_SIGNAL_ADMIN_PASSWORD)")
	tlsCert := f.str("tls-cert", "", "serve HTTPS and WSS with this PEM certificate (chain) file (needs -tls-key)")
	tlsKey := f.str("tls-key", "", "the PEM private key of -tls-cert")
	publicURL := f.str("public-url", "", "the scheme://host:port invites, QR codes and dashboard links name (e.g. https://lab.example:8443 behind a proxy); default: each request's own")
	maxUpload := f.int("max-upload", 64<<20, "largest program (.wasm) the jobs page accepts, in bytes")
	maxUIJobs := f.int("max-ui-jobs", 100, "jobs the jobs page holds at once (ended ones are kept an hour, dropped first when full)")
	var cc clusterConfig
	f.StringVar(&cc.url, "nats", env("nats", ""), "join a cluster of signaling servers over this NATS server (nats://host:4222, or a comma-separated list of a NATS cluster's)")
	f.BoolVar(&cc.embedded, "nats-embedded", env("nats-embedded", "") == "true", "run a NATS server (with JetStream) in this process and join the cluster through it")
	f.StringVar(&cc.listen, "nats-listen", env("nats-listen", "127.0.0.1:4222"), "the embedded NATS server's client address")
	f.StringVar(&cc.clusterListen, "nats-cluster-listen", env("nats-cluster-listen", ""), "the embedded NATS server's route address, host:port, for the other machines' (empty: a single NATS node)")
	f.StringVar(&cc.routes, "nats-routes", env("nats-routes", ""), "comma-separated routes to the other embedded NATS servers (nats-route://host:6222)")
	f.StringVar(&cc.storeDir, "nats-store", env("nats-store", ""), "the embedded NATS server's JetStream directory (default: a temporary one)")
	f.IntVar(&cc.replicas, "nats-replicas", 1, "replicas of the cluster's key-value buckets (3 in a 3-node NATS cluster survives a node's loss)")
	f.StringVar(&cc.prefix, "nats-prefix", env("nats-prefix", "meshmpi"), "prefix of the cluster's NATS subjects and buckets (clusters sharing a NATS use different ones)")
	f.DurationVar(&cc.timeout, "cluster-timeout", natsbus.DefaultTimeout, "silence after which a signaling server of the cluster counts as lost")
	f.DurationVar(&cc.resumeGrace, "resume-grace", signaling.DefaultResumeGrace, "how long a lost server's ranks have to take their seats back through another")
	if err := f.parse(args); err != nil {
		return serveConfig{}, err
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*logLevel)); err != nil {
		return serveConfig{}, fmt.Errorf("-log-level: %w", err)
	}
	hopts := &slog.HandlerOptions{Level: lvl}
	var h slog.Handler
	switch *logFormat {
	case "text":
		h = slog.NewTextHandler(stderr, hopts)
	case "json":
		h = slog.NewJSONHandler(stderr, hopts)
	default:
		return serveConfig{}, fmt.Errorf("-log-format %q: want text or json", *logFormat)
	}
	if *secret == "" {
		return serveConfig{}, errors.New("a secret is required (-secret or MESHMPI_SIGNAL_SECRET)")
	}
	cfg := signaling.Config{
		Secret: []byte(*secret), AdminKey: *adminKey, OriginPatterns: splitList(*origins),
		MaxMessageBytes: *maxMsg, MessageRate: *rate, MessageBurst: *burst,
		MaxJobs: *maxJobs, MaxConns: *maxConns, MaxJobSize: *maxSize,
		PingInterval: *ping, PingTimeout: *pingTimeout, JoinTimeout: *joinTimeout,
		SendQueueBytes: *queueBytes, MaxEndedJobs: *maxEnded,
		Logger: slog.New(h),
	}
	ice, err := finishICE()
	if err != nil {
		return serveConfig{}, err
	}
	cfg.ICEServers = ice.static()
	wc.labMax = *labMax
	wc.names = splitList(*names)
	if *idle <= 0 {
		return serveConfig{}, errors.New("-idle-timeout must be positive")
	}
	if *maxUpload <= 0 || *maxUIJobs <= 0 {
		return serveConfig{}, errors.New("-max-upload and -max-ui-jobs must be positive")
	}
	ui := uiConfig{password: *password, publicURL: *publicURL, maxUpload: int64(*maxUpload), maxJobs: *maxUIJobs}
	if host, _, err := net.SplitHostPort(*listen); err == nil && *publicURL == "" {
		ip := net.ParseIP(host)
		ui.loopback = strings.EqualFold(host, "localhost") || ip != nil && ip.IsLoopback()
	}
	if cc.url != "" && cc.embedded {
		return serveConfig{}, errors.New("-nats and -nats-embedded exclude each other")
	}
	if cc.replicas < 1 || cc.replicas > 5 {
		return serveConfig{}, errors.New("-nats-replicas must be in [1, 5]")
	}
	cfg.ResumeGrace = cc.resumeGrace
	sc := serveConfig{listen: *listen, cluster: cc, sig: cfg, grace: *grace, idle: *idle, web: wc, ice: ice, ui: ui}
	if (*tlsCert == "") != (*tlsKey == "") {
		return serveConfig{}, errors.New("-tls-cert and -tls-key go together")
	}
	if *tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(*tlsCert, *tlsKey)
		if err != nil {
			return serveConfig{}, fmt.Errorf("-tls-cert/-tls-key: %w", err)
		}
		sc.tls = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	return sc, nil
}

// newHandler serves the signaling server plus /healthz and /metrics, and
// the browser UI (package web) when ui is not nil.
func newHandler(srv *signaling.Server, reg *prometheus.Registry, ui http.Handler, health func() error) http.Handler {
	mux := http.NewServeMux()
	if ui != nil {
		mux.Handle("/", ui)
	}
	mux.Handle("/ws", srv)
	mux.Handle("/admin/token", srv)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		if health != nil {
			if err := health(); err != nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = io.WriteString(w, err.Error()+"\n")
				return
			}
		}
		_, _ = io.WriteString(w, "ok\n")
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	return mux
}

// statsCollector exports Server.Stats as Prometheus metrics.
type statsCollector struct {
	srv                               *signaling.Server
	jobs, conns, joins, relayed, errs *prometheus.Desc
	ranks, ended, departures, failed  *prometheus.Desc
	sent, paths, declared, late       *prometheus.Desc
	resumed                           *prometheus.Desc
	records, recordBytes              *prometheus.Desc
	uiJobs, poolWaiting               *prometheus.Desc
	uijobs                            *web.Jobs // nil: no jobs page
}

func newStatsCollector(srv *signaling.Server, jobs *web.Jobs) *statsCollector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("meshmpi_signal_"+name, help, labels, nil)
	}
	return &statsCollector{
		srv:         srv,
		jobs:        d("jobs", "Jobs with at least one rank present."),
		conns:       d("connections", "Open websocket connections."),
		joins:       d("joins_total", "Successful joins."),
		relayed:     d("signals_relayed_total", "Signals relayed between ranks."),
		errs:        d("errors_total", "Error messages sent to clients, by code.", "code"),
		ranks:       d("ranks", "Ranks present in jobs (a rank that stops answering pings is gone within the ping interval plus the ping timeout)."),
		ended:       d("ended_jobs", "Jobs remembered after they failed or ended, so their tokens cannot form them again."),
		departures:  d("departures_total", "Ranks that left their job: closed, broke, or stopped answering pings."),
		failed:      d("failed_jobs_total", "Jobs failed by a departure before they formed."),
		declared:    d("declared_failed_total", "Ranks declared failed (fail-stop): a peer lost its link to them, or they stopped answering pings; counted in departures_total too."),
		sent:        d("messages_sent_total", "Messages queued to clients, of every type."),
		late:        d("late_joins_total", "Late ranks admitted to formed jobs that grow (a token's max), counted in joins_total too."),
		resumed:     d("resumed_total", "Seats taken back through this server after a cluster server's loss or drain."),
		paths:       d("links_total", "Links the ranks reported, by path: direct (host, server- or peer-reflexive candidates) or relay (through a TURN server).", "path"),
		records:     d("job_records", "Job records kept for dashboards (states, telemetry rings, console tails, links)."),
		recordBytes: d("job_record_bytes", "Approximate bytes of the job records kept for dashboards (bounded per job and in all)."),
		uiJobs:      d("ui_jobs", "Jobs of the jobs page (ended ones included, until they are dropped)."),
		poolWaiting: d("pool_waiting", "Volunteers waiting in the pool for a job that needs ranks."),
		uijobs:      jobs,
	}
}

func (c *statsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.jobs, c.conns, c.joins, c.relayed, c.errs, c.ranks, c.ended, c.departures, c.failed, c.sent, c.paths, c.declared, c.late, c.resumed, c.records, c.recordBytes, c.uiJobs, c.poolWaiting} {
		ch <- d
	}
}

func (c *statsCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.srv.Stats()
	ch <- prometheus.MustNewConstMetric(c.jobs, prometheus.GaugeValue, float64(st.Jobs))
	ch <- prometheus.MustNewConstMetric(c.conns, prometheus.GaugeValue, float64(st.Conns))
	ch <- prometheus.MustNewConstMetric(c.joins, prometheus.CounterValue, float64(st.Joins))
	ch <- prometheus.MustNewConstMetric(c.relayed, prometheus.CounterValue, float64(st.Relayed))
	ch <- prometheus.MustNewConstMetric(c.ranks, prometheus.GaugeValue, float64(st.Ranks))
	ch <- prometheus.MustNewConstMetric(c.ended, prometheus.GaugeValue, float64(st.Ended))
	ch <- prometheus.MustNewConstMetric(c.departures, prometheus.CounterValue, float64(st.Departures))
	ch <- prometheus.MustNewConstMetric(c.failed, prometheus.CounterValue, float64(st.FailedJobs))
	ch <- prometheus.MustNewConstMetric(c.declared, prometheus.CounterValue, float64(st.Declared))
	ch <- prometheus.MustNewConstMetric(c.sent, prometheus.CounterValue, float64(st.Sent))
	ch <- prometheus.MustNewConstMetric(c.late, prometheus.CounterValue, float64(st.LateJoins))
	ch <- prometheus.MustNewConstMetric(c.resumed, prometheus.CounterValue, float64(st.Resumed))
	ch <- prometheus.MustNewConstMetric(c.records, prometheus.GaugeValue, float64(st.Records))
	ch <- prometheus.MustNewConstMetric(c.recordBytes, prometheus.GaugeValue, float64(st.RecordBytes))
	if c.uijobs != nil {
		n, waiting := c.uijobs.Stats()
		ch <- prometheus.MustNewConstMetric(c.uiJobs, prometheus.GaugeValue, float64(n))
		ch <- prometheus.MustNewConstMetric(c.poolWaiting, prometheus.GaugeValue, float64(waiting))
	}
	for path, n := range st.Paths {
		ch <- prometheus.MustNewConstMetric(c.paths, prometheus.CounterValue, float64(n), path)
	}
	for code, n := range st.Rejected {
		ch <- prometheus.MustNewConstMetric(c.errs, prometheus.CounterValue, float64(n), string(code))
	}
}

// newRegistry collects srv's, and if not nil, ts's and jobs's metrics.
func newRegistry(srv *signaling.Server, ts *turn.Server, jobs *web.Jobs) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(newStatsCollector(srv, jobs), collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if ts != nil {
		reg.MustRegister(newTURNCollector(ts))
	}
	return reg
}

func serve(args []string, stderr io.Writer) error {
	sc, err := parseServe(args, stderr)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s, err := startServer(ctx, sc)
	if err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() { errc <- s.serve() }()
	select {
	case err := <-errc:
		s.close()
		return err
	case <-ctx.Done():
	}
	return s.shutdown(sc.grace)
}

// server is a started `signal serve`: its listener, HTTP server, signaling
// server, job registry and TURN server.
type server struct {
	log  *slog.Logger
	ln   net.Listener
	hs   *http.Server
	srv  *signaling.Server
	ts   *turn.Server // nil: none
	jobs *web.Jobs
	tls  bool
	// cluster is the NATS side of a server of a cluster (-nats,
	// -nats-embedded); nil for a server of its own.
	cluster *cluster
}

// startServer builds everything sc asks for and listens; serve then serves.
func startServer(ctx context.Context, sc serveConfig) (_ *server, err error) {
	s := &server{log: sc.sig.Logger}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	if s.ts, err = sc.ice.start(&sc.sig, sc.listen); err != nil {
		return nil, err
	}
	s.jobs, err = web.NewJobs(web.JobsConfig{
		Secret: sc.sig.Secret, Password: sc.ui.password, AdminKey: sc.sig.AdminKey, PublicURL: sc.ui.publicURL,
		Hosts: sc.web.names, Loopback: sc.ui.loopback, MaxUpload: sc.ui.maxUpload, MaxJobs: sc.ui.maxJobs,
		MaxSize: sc.sig.MaxJobSize, Secure: sc.tls != nil,
	})
	if err != nil {
		return nil, err
	}
	sc.sig.ICECredentials = withJobICE(sc.sig.ICECredentials, s.jobs)
	if s.cluster, err = startCluster(ctx, sc.cluster, s.log); err != nil {
		return nil, err
	}
	if s.cluster != nil {
		sc.sig.Cluster = s.cluster.bus
	}
	if s.srv, err = signaling.NewServer(sc.sig); err != nil {
		return nil, err
	}
	wo, err := webOptions(ctx, sc.web, sc.sig.Secret)
	if err != nil {
		return nil, err
	}
	wo.Jobs, wo.Server = s.jobs, s.srv
	ui, err := web.Handler(wo)
	if err != nil {
		return nil, err
	}
	s.log.Info("browser UI", "programs", len(wo.Programs), "wasm_exec.js", wo.WasmExec != nil, "lab", wo.Lab != nil,
		"organizer", organizerMode(sc))
	reg := newRegistry(s.srv, s.ts, s.jobs)
	var health func() error
	if s.cluster != nil {
		reg.MustRegister(newClusterCollector(s.cluster.bus))
		health = s.cluster.bus.Healthy
	}
	s.hs = signaling.NewHTTPServer(newHandler(s.srv, reg, ui, health), sc.idle)
	s.hs.ErrorLog = slog.NewLogLogger(s.log.Handler(), slog.LevelDebug) // TLS handshake failures and the like
	s.hs.RegisterOnShutdown(s.jobs.Close)                               // volunteers' long polls end at once
	if sc.tls != nil {
		s.hs.TLSConfig = sc.tls
		s.tls = true
	}
	if s.ln, err = net.Listen("tcp", sc.listen); err != nil {
		return nil, err
	}
	scheme := "http"
	if s.tls {
		scheme = "https"
	}
	s.log.Info("signaling server listening", "addr", s.ln.Addr().String(), "tls", s.tls,
		"jobs", scheme+"://"+s.ln.Addr().String()+"/jobs")
	return s, nil
}

// organizerMode says who may use the jobs page, for the log.
func organizerMode(sc serveConfig) string {
	switch {
	case sc.ui.password != "" && sc.sig.AdminKey != "":
		return "password or admin key"
	case sc.ui.password != "":
		return "password"
	case sc.sig.AdminKey != "":
		return "admin key"
	}
	return "loopback clients only (no -admin-password)"
}

// withJobICE adds the ICE servers the organizer gave a job of the jobs
// page to the per-rank credentials of own (the embedded TURN server's,
// -ice-secret's), if any.
func withJobICE(own func(string, int, time.Time) []signaling.ICEServer, jobs *web.Jobs) func(string, int, time.Time) []signaling.ICEServer {
	return func(job string, rank int, expires time.Time) []signaling.ICEServer {
		var out []signaling.ICEServer
		if own != nil {
			out = own(job, rank, expires)
		}
		return append(out, jobs.ICEServers(job)...)
	}
}

// serve serves until the server is shut down (http.ErrServerClosed).
func (s *server) serve() error {
	if s.tls {
		return s.hs.ServeTLS(s.ln, "", "")
	}
	return s.hs.Serve(s.ln)
}

// shutdown stops accepting, waits up to grace for the requests under way,
// and closes the signaling server (which sends each rank a shutdown error).
func (s *server) shutdown(grace time.Duration) error {
	s.log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if s.cluster != nil {
		// a server of a cluster hands its jobs over and moves its
		// ranks to the others before it stops
		_ = s.ln.Close()
		if err := s.srv.Drain(sctx); err != nil {
			s.log.Error("drain", "err", err)
		}
		s.log.Info("drained")
	}
	err := s.hs.Shutdown(sctx) // stops accepting; websocket connections are hijacked
	s.close()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// close releases what startServer built, whatever it got to.
func (s *server) close() {
	if s.jobs != nil {
		s.jobs.Close()
	}
	if s.srv != nil {
		_ = s.srv.Close()
	}
	if s.ln != nil {
		_ = s.ln.Close()
	}
	if s.hs != nil {
		_ = s.hs.Close()
	}
	if s.ts != nil {
		_ = s.ts.Close()
	}
	if s.cluster != nil {
		s.cluster.close()
	}
}

// tokenUsage heads `signal token -h`.
const tokenUsage = `usage: signal token -job J -size N [-ttl 1h] [-settings k=v,…] [-rank R | -open | -late] [-max M]
       [-url ws://host:port/ws]

Prints the job's seat tokens (rank r's on line r), only rank R's (-rank),
one open token (-open: any free rank) or one late token (-late); with
-url, each as a join URL of that server, ws://host:port/ws?job=J&token=T,
which meshrun join takes as it is.

A job that grows (-max M, M > N): it forms when its N ranks are present,
as any other, then admits late ranks N, N+1, … up to M-1 in the order
they join. A seat token names one of the N seats only, so late ranks join
with an open token (-open: a free seat while the job forms, a late rank's
place after) or a late token (-late: a late rank's place only; before the
job formed it is refused as not-formed, try again, so it cannot turn a
launcher's seated job into an open one). Every token of the job must have
the same -size, -max and -settings. Past M ranks a join is refused ("job
full: M of M ranks"); a late rank that leaves or is declared failed keeps
its number (no later rank takes it), and its departure ends nothing: the
job ends when every rank, late or not, has left.

`

func token(args []string, stdout, stderr io.Writer) error {
	f := newFlagSet("signal token", stderr)
	server := f.String("url", "", "print each token as a join URL of this server's websocket endpoint (ws://host:port/ws?job=J&token=T, for meshrun join)")
	secret := f.str("secret", "", "token secret (or MESHMPI_SIGNAL_SECRET)")
	job := f.String("job", "", "job id (required)")
	size := f.Int("size", 0, "ranks in the job (required)")
	ttl := f.Duration("ttl", time.Hour, "token lifetime")
	settings := f.String("settings", "", "comma-separated key=value job settings")
	rank := f.Int("rank", -1, "print only this rank's seat token")
	open := f.Bool("open", false, "print one open token, which admits anyone to any free rank (volunteer jobs: browser tabs that come and go until the job forms), and to a late rank's place once it formed if -max lets it grow")
	maxRanks := f.Int("max", 0, "the job may grow to this many ranks: it forms with -size ranks, then admits late ranks size…max-1 with open or late tokens (a seat token names a seat below -size only); 0 for a job that cannot grow")
	late := f.Bool("late", false, "print one late token (needs -max): it admits a late rank once the job formed and is refused before (not-formed), so it never takes a seat of the job's world")
	f.Usage = func() {
		fmt.Fprint(f.Output(), tokenUsage)
		f.PrintDefaults()
	}
	if err := f.parse(args); err != nil {
		return err
	}
	if (*open || *late) && *rank >= 0 {
		return errors.New("-open or -late and -rank exclude each other")
	}
	if *open && *late {
		return errors.New("-open and -late exclude each other")
	}
	if *secret == "" {
		return errors.New("a secret is required (-secret or MESHMPI_SIGNAL_SECRET)")
	}
	if u, err := url.Parse(*server); *server != "" && (err != nil || u.Scheme != "ws" && u.Scheme != "wss" || u.RawQuery != "") {
		return fmt.Errorf("-url %q: want the server's websocket URL, ws://host:port/ws or wss://…", *server)
	}
	if *ttl <= 0 {
		return errors.New("-ttl must be positive")
	}
	var set map[string]string
	for _, kv := range splitList(*settings) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("-settings: %q is not key=value", kv)
		}
		if set == nil {
			set = map[string]string{}
		}
		set[k] = v
	}
	c := signaling.Claims{Job: *job, Size: *size, Expires: time.Now().Add(*ttl).Unix(), Settings: set, Max: *maxRanks, Late: *late}
	var toks []string
	switch {
	case *open || *late:
		tok, err := signaling.Mint([]byte(*secret), c)
		if err != nil {
			return err
		}
		toks = []string{tok}
	case *rank >= 0:
		c.Seat = rank
		tok, err := signaling.Mint([]byte(*secret), c)
		if err != nil {
			return err
		}
		toks = []string{tok}
	default:
		var err error
		if toks, err = signaling.MintSeats([]byte(*secret), c); err != nil {
			return err
		}
	}
	if *server != "" {
		for i, tok := range toks {
			toks[i] = *server + "?" + url.Values{"job": {*job}, "token": {tok}}.Encode()
		}
	}
	_, err := fmt.Fprintln(stdout, strings.Join(toks, "\n"))
	return err
}
