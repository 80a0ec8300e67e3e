//go:build !js && !wasip1

package mixedjob

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/internal/browsertest"
	"github.com/meshmpi/meshmpi/internal/lockedbuf"
	"github.com/meshmpi/meshmpi/internal/ranksuite"
	"github.com/meshmpi/meshmpi/wasm/host"
)

// Kind is where a rank runs.
type Kind string

// Kinds of rank.
const (
	Native  Kind = "native"  // a goroutine of this process calling ranksuite.Run
	Browser Kind = "browser" // a run page in a chromium tab, the program built for GOOS=js
	Firefox Kind = "firefox" // a run page in a headless firefox of its own, the same GOOS=js program
	WASI    Kind = "wasi"    // a wazero guest, the program built for GOOS=wasip1
)

// DefaultLimit bounds a job when Config.Limit is 0.
const DefaultLimit = 3 * time.Minute

// failGrace is how long the other ranks of a job have to end by
// themselves after one failed (they see it leave: ErrProcFailed) before
// Run stops them.
const failGrace = 30 * time.Second

// Config is what New sets up.
type Config struct {
	// Programs are the built rank program; nil builds it with the go
	// command on PATH for the kinds asked for.
	Programs *Programs
	Browser  bool // chromium ranks will run: NewTab must be set
	// Firefox ranks will run: each starts a headless firefox of its own
	// (browsertest.RunInFirefox), which ends with the rank.
	Firefox bool
	WASI    bool // WASI ranks will run: the module is compiled once
	// NewTab opens a browser tab named name with the media permission
	// granted for origin (browsertest.Browser.NewTab, or
	// browsertest.OpenTab on a launched browser).
	NewTab func(name, origin string) (context.Context, error)
	Limit  time.Duration // how long a job may take; 0 means DefaultLimit
}

// Launcher starts jobs of mixed ranks on a server of its own.
type Launcher struct {
	Server *Server
	cfg    Config
	wasi   *host.Program
}

// New builds and compiles what cfg needs and starts the server.
func New(ctx context.Context, cfg Config) (_ *Launcher, err error) {
	if cfg.Browser && cfg.NewTab == nil {
		return nil, fmt.Errorf("mixedjob: browser ranks need Config.NewTab: %w", meshmpi.ErrArg)
	}
	if cfg.Limit == 0 {
		cfg.Limit = DefaultLimit
	}
	if cfg.Programs == nil {
		if cfg.Programs, err = Build(ctx, "", cfg.Browser || cfg.Firefox, cfg.WASI); err != nil {
			return nil, err
		}
	}
	l := &Launcher{cfg: cfg}
	if cfg.WASI {
		if cfg.Programs.WASI == nil {
			return nil, fmt.Errorf("mixedjob: WASI ranks without a WASI build: %w", meshmpi.ErrArg)
		}
		cache := ""
		if dir, err := os.UserCacheDir(); err == nil {
			cache = filepath.Join(dir, "meshmpi", "wazero") // meshrun's
		}
		if l.wasi, err = host.Compile(ctx, cfg.Programs.WASI, cache); err != nil {
			return nil, err
		}
	}
	if l.Server, err = StartServer(cfg.Programs); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// Close stops the server and releases the compiled module.
func (l *Launcher) Close() error {
	var err error
	if l.Server != nil {
		err = l.Server.Close()
	}
	if l.wasi != nil {
		err = errors.Join(err, l.wasi.Close(context.Background()))
	}
	return err
}

// Rank is one rank of a job: where it runs and what it does.
type Rank struct {
	Kind Kind
	Task ranksuite.Task
}

// Result is how one rank of a job ended.
type Result struct {
	Rank           int
	Kind           Kind
	Err            error // nil when the rank's task and its Finalize succeeded
	Stdout, Stderr string
	// Ready is, for a browser (or Firefox) rank, the time from page load to the rank
	// being ready (every rank of the job present), in milliseconds.
	Ready float64
}

// Run runs ranks as one fresh job, rank i being ranks[i], and returns
// every rank's result once all have ended; it ends within the Limit.
func (l *Launcher) Run(ctx context.Context, ranks []Rank) ([]Result, error) {
	job, token, err := l.Server.NewJob(len(ranks))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, l.cfg.Limit)
	defer cancel()
	res := make([]Result, len(ranks))
	var (
		wg        sync.WaitGroup
		failed    sync.Once
		stopAfter *time.Timer
	)
	for i, r := range ranks {
		res[i] = Result{Rank: i, Kind: r.Kind}
		wg.Go(func() {
			var stdout, stderr lockedbuf.Buffer
			var err error
			switch r.Kind {
			case Native:
				err = l.native(ctx, job, token, i, r.Task, &stdout)
			case WASI:
				err = l.guest(ctx, job, token, i, r.Task, &stdout, &stderr)
			case Browser, Firefox:
				open := l.browser
				if r.Kind == Firefox {
					open = l.firefox
				}
				var page browsertest.RunResult
				page, err = open(ctx, job, token, i, r.Task)
				stdout.WriteString(page.Stdout)
				stderr.WriteString(page.Stderr)
				res[i].Ready = page.Times["ready"]
			default:
				err = fmt.Errorf("kind %q: %w", r.Kind, meshmpi.ErrArg)
			}
			if err != nil {
				err = fmt.Errorf("%s rank %d: %w", r.Kind, i, err)
				// the job cannot complete: the other ranks see this one
				// leave and fail on their own, or are stopped after a while
				failed.Do(func() { stopAfter = time.AfterFunc(failGrace, cancel) })
			}
			res[i].Err, res[i].Stdout, res[i].Stderr = err, stdout.String(), stderr.String()
		})
	}
	wg.Wait()
	if stopAfter != nil {
		stopAfter.Stop()
	}
	return res, nil
}

func (l *Launcher) native(ctx context.Context, job, token string, rank int, t ranksuite.Task, out *lockedbuf.Buffer) error {
	s, err := meshmpi.Join(ctx, meshmpi.JobSpec{Signal: l.Server.WS, Job: job, Token: token, Rank: rank})
	if err != nil {
		return err
	}
	return ranksuite.Run(s, t, out)
}

func (l *Launcher) guest(ctx context.Context, job, token string, rank int, t ranksuite.Task, stdout, stderr *lockedbuf.Buffer) error {
	if l.wasi == nil {
		return fmt.Errorf("the launcher was set up without WASI: %w", meshmpi.ErrArg)
	}
	status, err := l.wasi.Run(ctx, host.Rank{
		Job:  host.Job{Signal: l.Server.WS, ID: job, Token: token, Rank: rank, JoinTimeout: l.cfg.Limit},
		Name: ProgramName, Args: t.Args(), Stdout: stdout, Stderr: stderr,
	})
	if err == nil && status != 0 {
		err = fmt.Errorf("exit status %d: %s", status, strings.TrimSpace(stderr.String()))
	}
	return err
}

func (l *Launcher) browser(ctx context.Context, job, token string, rank int, t ranksuite.Task) (browsertest.RunResult, error) {
	if l.cfg.NewTab == nil {
		return browsertest.RunResult{}, fmt.Errorf("the launcher was set up without a browser: %w", meshmpi.ErrArg)
	}
	tab, err := l.cfg.NewTab(fmt.Sprintf("%s-rank%d", job, rank), l.Server.URL)
	if err != nil {
		return browsertest.RunResult{}, err
	}
	// the tab lives as long as the browser (a failed test screenshots
	// it); loading and waiting end with the job
	wait, cancel := context.WithCancel(tab)
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	url := browsertest.RunURL(l.Server.URL, ProgramName, job, token, rank, t.Args())
	if err := chromedp.Do(wait, chromedp.Navigate(url)); err != nil {
		return browsertest.RunResult{}, fmt.Errorf("open the run page: %w", err)
	}
	deadline, _ := ctx.Deadline()
	page, err := browsertest.WaitRun(wait, time.Until(deadline))
	if err == nil {
		err = pageErr(page)
	}
	return page, err
}

func (l *Launcher) firefox(ctx context.Context, job, token string, rank int, t ranksuite.Task) (browsertest.RunResult, error) {
	if !l.cfg.Firefox {
		return browsertest.RunResult{}, fmt.Errorf("the launcher was set up without firefox: %w", meshmpi.ErrArg)
	}
	url := browsertest.RunURL(l.Server.URL, ProgramName, job, token, rank, t.Args())
	page, err := browsertest.RunInFirefox(ctx, l.Server.Reports, url)
	if err == nil {
		err = pageErr(page)
	}
	return page, err
}

// pageErr is the error of a run page that has exited.
func pageErr(page browsertest.RunResult) error {
	switch {
	case page.Status == nil:
		return errors.New("the run page has no exit status")
	case *page.Status != 0:
		return fmt.Errorf("exit status %d: %s", *page.Status, strings.TrimSpace(page.Stderr))
	}
	return nil
}
