//go:build !js && !wasip1

package browsertest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// EnvFirefox names the Firefox binary; by default the first of
// firefox-esr and firefox found on PATH.
const EnvFirefox = "MESHMPI_FIREFOX"

// ErrNoFirefox means no Firefox binary was found.
var ErrNoFirefox = errors.New("no firefox found (install Debian's firefox-esr with .ci/install-browser, or set " + EnvFirefox + ")")

// FindFirefox returns the path of the Firefox binary.
func FindFirefox() (string, error) {
	if p := os.Getenv(EnvFirefox); p != "" {
		path, err := exec.LookPath(p)
		if err != nil {
			return "", fmt.Errorf("%w: %s=%s: %v", ErrNoFirefox, EnvFirefox, p, err)
		}
		return path, nil
	}
	for _, name := range []string{"firefox-esr", "firefox"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", ErrNoFirefox
}

// RequireFirefox skips t when there is no Firefox, or fails it when
// EnvRequire is "require".
func RequireFirefox(t testing.TB) {
	t.Helper()
	if _, err := FindFirefox(); err != nil {
		if os.Getenv(EnvRequire) == "require" {
			t.Fatalf("%v; %s=require", err, EnvRequire)
		}
		t.Skipf("%v; set %s=require to fail instead of skipping", err, EnvRequire)
	}
}

// FirefoxPrefs are the preferences of the fresh profile every Firefox
// rank runs in (its user.js).
//
// WebRTC on one host: Firefox leaves the loopback interface out of ICE
// unless media.peerconnection.ice.loopback is set, and hides host
// addresses behind mDNS names (which a loopback-only host cannot
// resolve) unless obfuscate_host_addresses is off. Above all, a page
// that neither captures media nor holds a media permission gathers on
// the address of the default route only, whatever default_address_only
// says: on a host with no default route (a loopback-only network
// namespace, a bare CI container) that is no candidate at all, and the
// link fails with "Couldn't gather ICE candidates". A default
// permission of "allow" for the microphone and camera counts as holding
// one (Chromium's counterpart is GrantMedia). Should a page ask for
// media, it gets fake devices without a prompt. IPv6 is off because
// native ranks in loopback mode listen on 127.0.0.1 only.
//
// The rest keeps a headless run to itself and quiet: no first-run pages,
// updates, telemetry, safe browsing lists, captive-portal or
// connectivity probes, remote settings; no session restore or "safe
// mode?" question after the previous run was killed; background tabs'
// timers are not throttled.
var FirefoxPrefs = map[string]any{
	"media.peerconnection.ice.loopback":                 true,
	"media.peerconnection.ice.obfuscate_host_addresses": false,
	"media.peerconnection.ice.default_address_only":     false,
	"media.navigator.permission.disabled":               true,
	"media.navigator.streams.fake":                      true,
	"permissions.default.microphone":                    1, // 1: allow
	"permissions.default.camera":                        1,
	"network.dns.disableIPv6":                           true,

	"app.update.disabledForTesting":              true,
	"app.update.auto":                            false,
	"browser.shell.checkDefaultBrowser":          false,
	"browser.startup.homepage_override.mstone":   "ignore",
	"browser.startup.page":                       0,
	"browser.aboutwelcome.enabled":               false,
	"browser.sessionstore.resume_from_crash":     false,
	"toolkit.startup.max_resumed_crashes":        -1,
	"datareporting.policy.dataSubmissionEnabled": false,
	"datareporting.healthreport.uploadEnabled":   false,
	"toolkit.telemetry.enabled":                  false,
	"toolkit.telemetry.reportingpolicy.firstRun": false,
	"browser.safebrowsing.malware.enabled":       false,
	"browser.safebrowsing.phishing.enabled":      false,
	"browser.safebrowsing.downloads.enabled":     false,
	"browser.safebrowsing.blockedURIs.enabled":   false,
	"network.captive-portal-service.enabled":     false,
	"network.connectivity-service.enabled":       false,
	"services.settings.server":                   "data:,#remote-settings-off",
	"extensions.update.enabled":                  false,
	"extensions.getAddons.cache.enabled":         false,
	"dom.min_background_timeout_value":           0,
	"dom.timeout.enable_budget_timer_throttling": false,
	"browser.newtabpage.enabled":                 false,
	"browser.region.network.url":                 "",
	"browser.search.geoip.url":                   "",
	"geo.provider.network.url":                   "",
	"dom.ipc.processPrelaunch.enabled":           false,
	"browser.dom.window.dump.enabled":            true,
	"devtools.console.stdout.content":            true,
}

// userJS renders prefs as a user.js, sorted so that profiles compare.
func userJS(prefs map[string]any) (string, error) {
	names := make([]string, 0, len(prefs))
	for n := range prefs {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		var v string
		switch x := prefs[n].(type) {
		case bool, int:
			v = fmt.Sprint(x)
		case string:
			v = fmt.Sprintf("%q", x)
		default:
			return "", fmt.Errorf("browsertest: pref %s: %T is not a pref value", n, x)
		}
		fmt.Fprintf(&b, "user_pref(%q, %s);\n", n, v)
	}
	return b.String(), nil
}

// Firefox is a headless Firefox showing one page, in a fresh profile of
// its own.
type Firefox struct {
	cmd  *exec.Cmd
	dir  string // the profile, and the browser's log beside it
	log  *os.File
	done chan struct{} // closed when the browser process has exited
	err  error         // how it exited, once done is closed
}

// StartFirefox starts a headless Firefox on pageURL in a fresh profile
// (FirefoxPrefs) in a temporary directory. The browser and every
// process it starts form a process group of their own, which Close
// kills.
func StartFirefox(pageURL string) (*Firefox, error) {
	path, err := FindFirefox()
	if err != nil {
		return nil, err
	}
	if u, err := url.Parse(pageURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("browsertest: firefox: %q is not an http(s) address", pageURL)
	}
	dir, err := os.MkdirTemp("", "meshmpi-firefox-")
	if err != nil {
		return nil, err
	}
	f := &Firefox{dir: dir, done: make(chan struct{})}
	fail := func(err error) (*Firefox, error) {
		if f.log != nil {
			f.log.Close()
		}
		os.RemoveAll(dir)
		return nil, fmt.Errorf("browsertest: start %s: %w", path, err)
	}
	prof := filepath.Join(dir, "profile")
	if err := os.Mkdir(prof, 0o700); err != nil {
		return fail(err)
	}
	js, err := userJS(FirefoxPrefs)
	if err != nil {
		return fail(err)
	}
	if err := os.WriteFile(filepath.Join(prof, "user.js"), []byte(js), 0o600); err != nil {
		return fail(err)
	}
	// A file, not a pipe: the browser's child processes inherit it, and
	// a pipe would keep Wait waiting for them.
	if f.log, err = os.Create(filepath.Join(dir, "firefox.log")); err != nil {
		return fail(err)
	}
	f.cmd = exec.Command(path, "--headless", "--no-remote", "--new-instance", "--profile", prof, pageURL)
	f.cmd.Env = append(os.Environ(),
		"MOZ_HEADLESS=1",
		"MOZ_CRASHREPORTER_DISABLE=1",
		"MOZ_DISABLE_AUTO_SAFE_MODE=1",
		"HOME="+dir, // nothing of the user's, nothing left behind
	)
	f.cmd.Stdout, f.cmd.Stderr = f.log, f.log
	ownGroup(f.cmd)
	if err := f.cmd.Start(); err != nil {
		return fail(err)
	}
	go func() {
		f.err = f.cmd.Wait()
		close(f.done)
	}()
	return f, nil
}

// Exited is closed when the browser's main process has exited: before
// Close, that means it crashed or quit.
func (f *Firefox) Exited() <-chan struct{} { return f.done }

// ExitErr is how the browser's main process exited, once Exited is
// closed.
func (f *Firefox) ExitErr() error {
	<-f.done
	return f.err
}

// Log is what the browser has written to its standard output and error
// so far (its last 4 KiB).
func (f *Firefox) Log() string {
	b, err := os.ReadFile(f.log.Name())
	if err != nil {
		return ""
	}
	const tail = 4 << 10
	if len(b) > tail {
		b = b[len(b)-tail:]
	}
	return string(b)
}

// Close kills the browser's process group, waits for its main process
// and removes its profile.
func (f *Firefox) Close() error {
	killGroup(f.cmd)
	<-f.done
	f.log.Close()
	return os.RemoveAll(f.dir)
}

// ErrPageLost means the browser exited before its page reported.
var ErrPageLost = errors.New("browsertest: the browser exited before the page reported its end")

// RunInFirefox runs the run page at runURL (RunURL) in a fresh headless
// Firefox, framed by the page of rep, which the run page's server must
// serve at ReporterPrefix. It returns the run page's final state once
// the page has reported its exit, and then stops the browser; if ctx
// ends or the browser exits first, it returns the last state reported
// and an error that says what the page and the browser last showed.
func RunInFirefox(ctx context.Context, rep *Reporter, runURL string) (RunResult, error) {
	w, err := rep.Watch(runURL)
	if err != nil {
		return RunResult{}, err
	}
	defer w.Close()
	ff, err := StartFirefox(w.URL)
	if err != nil {
		return RunResult{}, err
	}
	defer ff.Close()
	select {
	case <-w.Exited():
		return w.Last(), nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-ff.Exited():
		err = fmt.Errorf("%w (%v)", ErrPageLost, ff.ExitErr())
	}
	last := w.Last()
	msg := fmt.Sprintf("browsertest: the run page in firefox did not finish (phase %q, stderr %q", last.Phase, last.Stderr)
	if errs := w.Errors(); len(errs) > 0 {
		msg += fmt.Sprintf(", page errors %q", errs)
	}
	if log := strings.TrimSpace(ff.Log()); log != "" {
		msg += ", firefox: " + log
	}
	return last, fmt.Errorf("%s): %w", msg, err)
}
