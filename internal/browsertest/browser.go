//go:build !js && !wasip1

// Package browsertest starts Debian's chromium headless for the browser
// tests and for cmd/jsrun, with the flags that let a page's WebRTC reach
// ranks on this host (see shared/reference/webrtc.md, Chromium), and
// Debian's firefox-esr headless (firefox.go: a fresh profile whose
// prefs allow loopback ICE; no driver, the page reports its end to the
// test's server through a Reporter).
//
// Tests skip when no chromium (or firefox) is installed, unless
// MESHMPI_BROWSER_TESTS is "require" (CI sets it after
// .ci/install-browser): then a missing browser fails the test. A failed test leaves a screenshot of each of
// its tabs under $MESHMPI_ARTIFACTS (or a fresh directory in the system
// temporary directory) and logs the path.
package browsertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
)

// Environment variables the helper reads.
const (
	// EnvRequire set to "require" turns a missing browser into a failure.
	EnvRequire = "MESHMPI_BROWSER_TESTS"
	// EnvChromium names the browser binary; by default the first of
	// chromium, chromium-browser, google-chrome found on PATH.
	EnvChromium = "MESHMPI_CHROMIUM"
	// EnvArtifacts is the directory failed tests write screenshots to.
	EnvArtifacts = "MESHMPI_ARTIFACTS"
)

// ErrNoBrowser means no chromium binary was found.
var ErrNoBrowser = errors.New("no chromium found (install it with .ci/install-browser, or set " + EnvChromium + ")")

// Find returns the path of the browser binary.
func Find() (string, error) {
	if p := os.Getenv(EnvChromium); p != "" {
		return exec.LookPath(p)
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", ErrNoBrowser
}

// Options are the command line of a headless chromium that may run as
// root in a container, keeps to this host, and lets WebRTC use the
// loopback interface.
func Options(path string) []chromedp.ExecAllocatorOption {
	return append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // CI runs as root, where the sandbox cannot start
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("allow-loopback-in-peer-connection", true),
		chromedp.Flag("autoplay-policy", "no-user-gesture-required"),
		chromedp.WindowSize(1200, 900),
	)
}

// Launch starts a browser and returns a chromedp context on its first tab;
// cancel stops the browser. The browser has started when Launch returns.
//
// A start is bounded: a chromium that has started but does not answer its
// DevTools pipe within startLimit (chromedp itself waits for ever) is
// killed and started again, at most startAttempts times, and Launch fails
// saying so. On a loaded CI machine one start in many hung that way, and
// the test that launched it with it, until go test's -timeout ended the
// whole binary.
func Launch(ctx context.Context) (context.Context, context.CancelFunc, error) {
	path, err := Find()
	if err != nil {
		return nil, nil, err
	}
	var errs []error
	for range startAttempts {
		actx, acancel := chromedp.NewExecAllocator(ctx, Options(path)...)
		bctx, bcancel := chromedp.NewContext(actx)
		cancel := func() { bcancel(); acancel() }
		err := within(startLimit, cancel, func() error { return chromedp.Do(bctx) }) // starts the browser
		if err == nil {
			return bctx, cancel, nil
		}
		cancel()
		errs = append(errs, err)
		if ctx.Err() != nil || !errors.Is(err, errNoAnswer) {
			break
		}
	}
	return nil, nil, fmt.Errorf("browsertest: start %s: %w", path, errors.Join(errs...))
}

// startLimit bounds one start of the browser, and the opening of a tab:
// seconds normally, tens of seconds on a loaded 2-core machine. (A
// variable for the test of the bound.)
var startLimit = 90 * time.Second

// startAttempts is how many times Launch starts a browser that does not
// answer.
const startAttempts = 3

// errNoAnswer is a browser (or tab) that did not answer within startLimit.
var errNoAnswer = errors.New("no answer from the browser")

// within runs do, and when it has not returned after limit calls abort
// (which must make do return) and reports errNoAnswer.
func within(limit time.Duration, abort func(), do func() error) error {
	done := make(chan error, 1)
	go func() { done <- do() }()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		abort()
		<-done
		return fmt.Errorf("%w within %v", errNoAnswer, limit)
	}
}

// GrantMedia gives origin the microphone permission: Chrome publishes its
// 127.0.0.1 host candidate (rather than an mDNS name that a loopback-only
// host cannot resolve) only to a page that holds it.
func GrantMedia(ctx context.Context, origin string) error {
	for _, name := range []string{"microphone", "camera"} {
		if _, err := chromedp.CallBrowser(ctx, browser.SetPermission, browser.SetPermissionParams{
			Permission: &browser.PermissionDescriptor{Name: name},
			Setting:    browser.PermissionSettingGranted,
			Origin:     origin,
		}); err != nil {
			return fmt.Errorf("browsertest: grant %s to %s: %w", name, origin, err)
		}
	}
	return nil
}

// Require skips t when there is no browser, or fails it when EnvRequire
// is "require".
func Require(t testing.TB) {
	t.Helper()
	if _, err := Find(); err != nil {
		if os.Getenv(EnvRequire) == "require" {
			t.Fatalf("%v; %s=require", err, EnvRequire)
		}
		t.Skipf("%v; set %s=require to fail instead of skipping", err, EnvRequire)
	}
}

// Browser is a headless chromium for one test.
type Browser struct {
	t    testing.TB
	ctx  context.Context
	mu   sync.Mutex
	tabs []tab
}

type tab struct {
	name string
	ctx  context.Context
}

// New starts a browser for t, or skips t when there is none (fails it
// when EnvRequire is "require"). The browser stops when t ends, after
// screenshots of its tabs are saved if t failed.
func New(t testing.TB) *Browser {
	t.Helper()
	Require(t)
	ctx, cancel, err := Launch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b := &Browser{t: t, ctx: ctx}
	t.Cleanup(func() {
		if t.Failed() {
			b.screenshots()
		}
		cancel()
	})
	return b
}

// Tab opens a new tab (a chromedp context for it) named name in
// screenshots, with the media permission granted for origin; it fails
// the test if it cannot.
func (b *Browser) Tab(name, origin string) context.Context {
	b.t.Helper()
	ctx, err := b.NewTab(name, origin)
	if err != nil {
		b.t.Fatal(err)
	}
	return ctx
}

// NewTab is Tab for goroutines other than the test's: it returns the
// error instead of failing the test.
func (b *Browser) NewTab(name, origin string) (context.Context, error) {
	ctx, err := OpenTab(b.ctx, origin)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.tabs = append(b.tabs, tab{name, ctx})
	b.mu.Unlock()
	return ctx, nil
}

// OpenTab opens a new tab of the browser that bctx (from Launch) runs,
// with the media permission granted for origin (GrantMedia). The tab
// closes with the browser.
func OpenTab(bctx context.Context, origin string) (context.Context, error) {
	ctx, cancel := chromedp.NewContext(bctx) // ends with the browser
	if err := within(startLimit, cancel, func() error { return chromedp.Do(ctx) }); err != nil {
		cancel()
		return nil, fmt.Errorf("browsertest: new tab: %w", err)
	}
	grant, stop := context.WithTimeout(ctx, startLimit) // the tab has started: a derived context is safe
	defer stop()
	if err := GrantMedia(grant, origin); err != nil {
		cancel()
		return nil, err
	}
	return ctx, nil
}

// screenshots saves a PNG of every tab.
func (b *Browser) screenshots() {
	dir := os.Getenv(EnvArtifacts)
	var err error
	if dir == "" {
		dir, err = os.MkdirTemp("", "meshmpi-artifacts-")
	} else {
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		b.t.Logf("browsertest: no artifact directory: %v", err)
		return
	}
	b.mu.Lock()
	tabs := append([]tab(nil), b.tabs...)
	b.mu.Unlock()
	for _, tb := range tabs {
		ctx, cancel := context.WithTimeout(tb.ctx, 10*time.Second)
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		cancel()
		if err != nil {
			b.t.Logf("browsertest: screenshot of %s: %v", tb.name, err)
			continue
		}
		name := strings.NewReplacer("/", "_", " ", "_").Replace(b.t.Name() + "-" + tb.name)
		p := filepath.Join(dir, name+".png")
		if err := os.WriteFile(p, png, 0o644); err != nil {
			b.t.Logf("browsertest: %v", err)
			continue
		}
		b.t.Logf("browsertest: screenshot of %s saved to %s", tb.name, p)
	}
}
