//go:build unix || windows

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/signaling"
)

const usage = `usage:
  meshrun [flags] -n N <package|binary|module.wasm> [args...]
      run an N-rank job on this host, through an embedded signaling server
  meshrun [flags] --max M -n N <package|binary|module.wasm> [args...]
      the same, and the job may grow to M ranks: meshrun prints how to join it
  meshrun [flags] -n N --signal URL --job ID --token T [--rank R] <package|binary> [args...]
      start N ranks of an existing job (ranks R … R+N-1, or any free ranks)
  meshrun join URL [--job ID --token T] [-n N] [--rank R] [flags] <package|binary> [args...]
      start N ranks (default 1) of an existing job, e.g. on another host
      than its server: several ranks need an open token (signal token -open);
      a join URL (ws://host:port/ws?job=ID&token=T, as meshrun --max prints
      it) carries the job and the token

The target is a Go package (directory, ./ or ../ path, .go file, import
path), built once with go build, an executable, a wasip1 module (.wasm), or
a C program (prog.c, compiled by meshcc against the MPI standard ABI: WASI
ranks under wazero, --native processes; a .wasm that imports mpi_abi runs
as C WASI ranks).
A package runs as WASI ranks under wazero inside meshrun (built once for
GOOS=wasip1, compiled once), an executable as native processes. Flags go before it;
arguments after it go to every rank. A -- ends meshrun's flags, before the
target (meshrun -n 2 -- ./prog -x) or right after it (meshrun -n 2 ./prog
-- -n 5: the ranks get -n 5). Each output line is prefixed with its
rank ("[0] "). The exit status is the worst of the ranks'; when one fails
the others get --grace to fail on their own, then SIGTERM, then SIGKILL
(unless --keep-going). SIGINT or SIGTERM stops the job, even while it
builds, compiles or starts; SIGQUIT (Ctrl-\) asks every rank (native or
WASI) what it is blocked in and says whether the job is deadlocked.

flags:
  -n N, -np N        ranks to start (required)
  --native           run a package's ranks as native processes
  --wasi K           run K of the ranks (the first K) under WASI, the rest
                     as native processes: a mixed job
  --runtime R        the WASI runtime: wazero (default, embedded) or
                     wasmtime (through wasmtime-go; meshrun built with cgo)
  --coll C=ALG       force collective C's algorithm for the job, e.g.
                     allreduce=ring (repeatable; embedded server only)
  --max M            the job may grow to M ranks (M > N; embedded server
                     only): meshrun prints a join URL for late ranks
                     (meshrun join) and, for a package, a browser link
  --join-info FILE   with --max, also write {"join": URL, "browser": URL}
                     to FILE
  --signal URL       websocket URL of an existing job's signaling server
  --job ID           that job's id
  --token T          that job's token
  --rank R           rank of the (first) process; default any free rank
  --join-timeout D   how long ranks wait for the whole job (default 2m); a
                     late WASI rank joins again until then while the job
                     has not formed
  --timeout D        each rank prints what it is blocked in D after the job
                     formed and exits 124; meshrun stops what is left soon
                     after and exits 124 (default none)
  --report-hang D    when no rank wrote a line for D, ask every rank what
                     it is blocked in, as SIGQUIT to meshrun does:
                     each prints it ("[2] meshmpi: rank 2 is blocked in
                     Recv(…)") and carries on, and meshrun says whether
                     every rank is blocked in meshmpi: a deadlock
  --grace D          wait between a failure, SIGTERM and SIGKILL (default 2s)
  --link KIND        how meshrun's own job links its ranks: auto (default:
                     memory between the WASI ranks meshrun hosts, shared
                     memory between processes of this host, WebRTC
                     otherwise) or webrtc (every pair, for tests and
                     benchmarks)
  --keep-going       a rank that fails does not end the job: the others
                     carry on (a fault-tolerant program handles the loss);
                     the exit status is the worst of the ranks that did
                     not fail, and the failed ones are listed
  --output-dir DIR   also write each rank's standard output and error,
                     without the prefix, to DIR/rank.N.stdout and
                     DIR/rank.N.stderr (DIR/join.I.* for a native process
                     whose rank the server assigns); meshrun creates DIR
  --mem-check=false  start the job even if its estimated memory (about
                     20 MiB a native rank, 25 MiB a WASI rank) exceeds
                     the host's available memory (on linux; by default
                     meshrun refuses such a job)
  -x VAR[=value]     set VAR in every rank's environment (repeatable; --env
                     too; without =value, meshrun's own value)
  -v                 log what meshrun does to stderr
`

// config is what the command line asks for.
type config struct {
	n           int               // rank processes to start
	first       int               // rank of the first process, or meshmpi.AnyRank
	signal      string            // an existing job's server; "" starts the embedded one
	job, token  string            // the existing job
	settings    map[string]string // the embedded job's settings: net=loopback and --coll
	target      string            // package or executable
	args        []string          // passed to every rank
	joinTimeout time.Duration     // 0 leaves the library's default
	timeout     time.Duration     // 0: none
	grace       time.Duration
	verbose     bool
	native      bool          // --native: every rank a native process
	wasi        int           // --wasi K: the first K ranks under WASI; 0: by the target
	runtime     string        // --runtime: runtimeWazero, runtimeWasmtime, or "" for wazero
	env         envFlag       // -x/--env: VAR=value for every rank
	keepGoing   bool          // --keep-going: a failed rank does not end the job
	link        string        // --link: the embedded job's link setting; "" for auto
	max         int           // --max M: meshrun's own job may grow to M ranks; 0: it cannot
	joinInfo    string        // --join-info FILE: where to write the join URLs; "": nowhere
	outputDir   string        // --output-dir DIR: each rank's output also in DIR/rank.N.stdout and .stderr; "": none
	memCheck    bool          // --mem-check: refuse a job whose ranks would not fit in the available memory
	reportHang  time.Duration // --report-hang D: ask for a hang report after D without a line from any rank; 0: never
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == cRankCommand { // c.go: one C WASI rank's process
		os.Exit(cRank(os.Args[2:], os.Stdout, os.Stderr))
	}
	sigc := make(chan os.Signal, 4)
	signal.Notify(sigc, stopSignals...)
	reports := make(chan os.Signal, 1)
	if len(reportSignals) > 0 {
		signal.Notify(reports, reportSignals...)
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, sigc, reports))
}

// run is meshrun with its arguments, output streams and the signals it
// receives (sigc to stop, reports to ask for a hang report); it returns
// the exit status.
func run(args []string, stdout, stderr io.Writer, sigc, reports <-chan os.Signal) int {
	out, errw := &lockedWriter{w: stdout}, &lockedWriter{w: stderr}
	cfg, err := parseArgs(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(out, usage)
		return 0
	}
	if err != nil {
		fmt.Fprintf(errw, "meshrun: %v\nrun 'meshrun -h' for usage\n", err)
		return exitUsage
	}
	log := slog.New(slog.DiscardHandler)
	if cfg.verbose {
		log = slog.New(slog.NewTextHandler(errw, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	done, err := prepareC(&cfg, errw) // c.go: a C program's ranks
	if err != nil {
		fmt.Fprintf(errw, "meshrun: %v\n", err)
		return exitUsage
	}
	defer done()
	l := &launcher{cfg: cfg, log: log, stdout: out, stderr: errw, sigc: sigc, reports: reports}
	return l.run()
}

// parseArgs parses meshrun's command line: the join subcommand or the
// default launch.
func parseArgs(args []string) (config, error) {
	if len(args) > 0 && args[0] == "join" {
		return parseJoin(args[1:])
	}
	cfg := config{first: meshmpi.AnyRank}
	fs := newFlagSet(&cfg)
	fs.IntVar(&cfg.n, "n", 0, "")
	fs.IntVar(&cfg.n, "np", 0, "") // mpiexec's spelling
	fs.StringVar(&cfg.signal, "signal", "", "")
	colls := collFlag{}
	fs.Var(colls, "coll", "")
	fs.IntVar(&cfg.max, "max", 0, "")
	fs.StringVar(&cfg.joinInfo, "join-info", "", "")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if err := takeTarget(&cfg, fs.Args()); err != nil {
		return cfg, err
	}
	if err := takeJoinURL(&cfg); err != nil {
		return cfg, err
	}
	nGiven := false
	fs.Visit(func(f *flag.Flag) { nGiven = nGiven || f.Name == "n" || f.Name == "np" })
	if !nGiven {
		return cfg, errors.New("-n is required: the number of ranks to start (-np also works; flags go before the program)")
	}
	if cfg.n < 1 || cfg.n > signaling.MaxJobSize {
		return cfg, fmt.Errorf("-n %d: want 1 … %d rank processes", cfg.n, signaling.MaxJobSize)
	}
	given := 0
	for _, v := range []string{cfg.signal, cfg.job, cfg.token} {
		if v != "" {
			given++
		}
	}
	switch {
	case cfg.max != 0 && given > 0:
		return cfg, errors.New("--max grows meshrun's own job; an existing job's max is in its token (signal token -max)")
	case cfg.max != 0 && (cfg.max <= cfg.n || cfg.max > signaling.MaxJobSize):
		return cfg, fmt.Errorf("--max %d: want more ranks than -n %d (the job forms with -n ranks and grows to --max), at most %d", cfg.max, cfg.n, signaling.MaxJobSize)
	case cfg.joinInfo != "" && cfg.max == 0:
		return cfg, errors.New("--join-info writes how to join a job that grows: it needs --max")
	case given == 0:
		if cfg.first != meshmpi.AnyRank {
			return cfg, errors.New("--rank applies to an existing job (--signal); meshrun's own job has ranks 0 … N-1")
		}
		cfg.first = 0
		cfg.settings = map[string]string{meshmpi.SettingNetwork: "loopback"}
		for k, v := range colls {
			cfg.settings[k] = v
		}
		switch cfg.link {
		case "", "auto":
		case "webrtc":
			cfg.settings[meshmpi.SettingLink] = cfg.link
		default:
			return cfg, fmt.Errorf("--link %q: want auto or webrtc", cfg.link)
		}
		if cfg.keepGoing {
			// the ranks keep going too: their Finalize is a barrier
			// among the survivors, not an error
			cfg.settings[meshmpi.SettingKeepGoing] = "1"
		}
	case given < 3:
		return cfg, errors.New("--signal, --job and --token go together")
	case len(colls) > 0:
		return cfg, errors.New("--coll sets meshrun's own job; an existing job's settings are in its token")
	case cfg.link != "":
		return cfg, errors.New("--link sets meshrun's own job; an existing job's settings are in its token")
	default:
		if err := checkSignalURL(cfg.signal); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

// parseJoin parses "meshrun join URL [flags] target [args...]".
func parseJoin(args []string) (config, error) {
	cfg := config{n: 1, first: meshmpi.AnyRank}
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cfg.signal, args = args[0], args[1:]
	}
	fs := newFlagSet(&cfg)
	fs.IntVar(&cfg.n, "n", 1, "")
	fs.IntVar(&cfg.n, "np", 1, "")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if cfg.n < 1 || cfg.n > signaling.MaxJobSize {
		return cfg, fmt.Errorf("join -n %d: want 1 … %d rank processes", cfg.n, signaling.MaxJobSize)
	}
	rest := fs.Args()
	if cfg.signal == "" {
		if len(rest) == 0 {
			return cfg, errors.New("join: want the signaling server's URL")
		}
		cfg.signal, rest = rest[0], rest[1:]
	}
	if err := takeJoinURL(&cfg); err != nil {
		return cfg, err
	}
	if err := checkSignalURL(cfg.signal); err != nil {
		return cfg, err
	}
	if cfg.job == "" || cfg.token == "" {
		return cfg, errors.New("join: --job and --token are required, unless the URL carries them (ws://host:port/ws?job=ID&token=T)")
	}
	return cfg, takeTarget(&cfg, rest)
}

// takeJoinURL splits a join URL in cfg.signal (ws://host:port/ws?job=ID&token=T,
// as meshrun --max prints it) into the server's URL and the job and token
// it carries; --job and --token, when given, win over the URL's.
func takeJoinURL(cfg *config) error {
	if !strings.ContainsAny(cfg.signal, "?#") {
		return nil
	}
	signal, job, token, err := splitJoinURL(cfg.signal)
	if err != nil {
		return err
	}
	cfg.signal = signal
	if cfg.job == "" {
		cfg.job = job
	}
	if cfg.token == "" {
		cfg.token = token
	}
	return nil
}

// joinURL is the join URL of job at the server signal: one string that a
// late rank's meshrun join needs (see the package doc, Jobs that grow).
func joinURL(signal, job, token string) string {
	return signal + "?" + url.Values{"job": {job}, "token": {token}}.Encode()
}

// splitJoinURL is joinURL's inverse: the server's URL, without the query,
// and the job and token the query names ("" for one it does not).
func splitJoinURL(s string) (signal, job, token string, err error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", "", "", fmt.Errorf("join URL %q: %v", s, err)
	}
	if u.Scheme != "ws" && u.Scheme != "wss" {
		return "", "", "", fmt.Errorf("join URL %q: want ws://host:port/ws?job=ID&token=T or wss://…", s)
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return "", "", "", fmt.Errorf("join URL %q: %v", s, err)
	}
	u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = "", false, "", ""
	return u.String(), q.Get("job"), q.Get("token"), nil
}

// newFlagSet defines the flags the launch and join commands share.
func newFlagSet(cfg *config) *flag.FlagSet {
	fs := flag.NewFlagSet("meshrun", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // run reports errors and usage itself
	fs.Usage = func() {}
	fs.StringVar(&cfg.job, "job", "", "")
	fs.StringVar(&cfg.token, "token", "", "")
	fs.IntVar(&cfg.first, "rank", meshmpi.AnyRank, "")
	fs.DurationVar(&cfg.joinTimeout, "join-timeout", 0, "")
	fs.DurationVar(&cfg.timeout, "timeout", 0, "")
	fs.DurationVar(&cfg.grace, "grace", 2*time.Second, "")
	fs.BoolVar(&cfg.verbose, "v", false, "")
	fs.BoolVar(&cfg.native, "native", false, "")
	fs.IntVar(&cfg.wasi, "wasi", 0, "")
	fs.StringVar(&cfg.runtime, "runtime", "", "")
	fs.BoolVar(&cfg.keepGoing, "keep-going", false, "")
	fs.StringVar(&cfg.link, "link", "", "")
	fs.StringVar(&cfg.outputDir, "output-dir", "", "")
	fs.BoolVar(&cfg.memCheck, "mem-check", true, "")
	fs.DurationVar(&cfg.reportHang, "report-hang", 0, "")
	fs.Var(&cfg.env, "x", "")
	fs.Var(&cfg.env, "env", "")
	return fs
}

// envFlag is -x/--env (Open MPI's -x): VAR=value, or VAR for meshrun's
// own value, set in every rank's environment, native or WASI. The job's
// own variables (meshmpi.Env*) are meshrun's to set.
type envFlag []string

func (e *envFlag) String() string { return strings.Join(*e, " ") }

func (e *envFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if k == "" || strings.ContainsAny(k, " \t\n") {
		return fmt.Errorf("-x %q: want VAR=value or VAR", s)
	}
	switch k {
	case meshmpi.EnvSignal, meshmpi.EnvJob, meshmpi.EnvToken, meshmpi.EnvRank, meshmpi.EnvHost:
		return fmt.Errorf("-x %s: meshrun sets it for each rank", k)
	}
	if !ok {
		v = os.Getenv(k)
	}
	*e = append(*e, k+"="+v)
	return nil
}

// with returns env with e's variables set, replacing earlier values.
func (e envFlag) with(env []string) []string {
	for _, kv := range e {
		env = setEnv(env, kv)
	}
	return env
}

// takeTarget takes the target and its arguments from what follows the
// flags, and checks the flags every command has.
func takeTarget(cfg *config, rest []string) error {
	if len(rest) == 0 {
		return errors.New("no package or binary to run")
	}
	cfg.target, cfg.args = rest[0], rest[1:]
	if len(cfg.args) > 0 && cfg.args[0] == "--" {
		// "meshrun -n 2 ./prog -- -n 5": the -- ends meshrun's command
		// line, and -n 5 is the program's (a -- further on is the
		// program's own, as is one after a -- here)
		cfg.args = cfg.args[1:]
	}
	switch {
	case cfg.first < meshmpi.AnyRank:
		return fmt.Errorf("--rank %d: want a rank ≥ 0", cfg.first)
	case cfg.joinTimeout < 0:
		return fmt.Errorf("--join-timeout %v: want a positive duration", cfg.joinTimeout)
	case cfg.timeout < 0:
		return fmt.Errorf("--timeout %v: want a positive duration, or 0 for none", cfg.timeout)
	case cfg.reportHang < 0:
		return fmt.Errorf("--report-hang %v: want a positive duration, or 0 for never", cfg.reportHang)
	case cfg.grace < 0:
		return fmt.Errorf("--grace %v: must not be negative", cfg.grace)
	case cfg.native && cfg.wasi > 0:
		return errors.New("--native runs every rank natively; --wasi K runs K of them under WASI: choose one")
	case cfg.wasi < 0 || cfg.n >= 1 && cfg.wasi > cfg.n:
		return fmt.Errorf("--wasi %d: want 1 … %d of the -n ranks", cfg.wasi, cfg.n)
	case cfg.runtime != "" && cfg.runtime != runtimeWazero && cfg.runtime != runtimeWasmtime:
		return fmt.Errorf("--runtime %q: want %s or %s", cfg.runtime, runtimeWazero, runtimeWasmtime)
	}
	return nil
}

func checkSignalURL(u string) error {
	if !strings.HasPrefix(u, "ws://") && !strings.HasPrefix(u, "wss://") {
		return fmt.Errorf("signaling URL %q: want ws://host:port/ws or wss://…", u)
	}
	return nil
}

// collFlag collects --coll collective=algorithm as job settings, checking
// them as the ranks will: the ranks would reject a bad one too, but only
// after they have started.
type collFlag map[string]string

func (c collFlag) String() string { return "" }

func (c collFlag) Set(s string) error {
	name, alg, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("%q: want collective=algorithm, e.g. allreduce=ring", s)
	}
	key := meshmpi.SettingCollPrefix + name
	if err := meshmpi.CheckSettings(map[string]string{key: alg}); err != nil {
		return err
	}
	c[key] = alg
	return nil
}
