//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/internal/browsertest"
)

var laterankBinary = buildOnce("testdata/laterank")

// --max, --join-info and the join URL on the command line.
func TestParseGrowth(t *testing.T) {
	loopback := map[string]string{meshmpi.SettingNetwork: "loopback"}
	const tok = "eyJqIjoiaiJ9.c2ln" // base64url and a dot, as tokens are
	for _, tc := range []struct {
		name string
		args []string
		want config // checked when err is ""
		err  string // a substring of the error
	}{
		{
			name: "max",
			args: []string{"--max", "8", "-n", "4", "./pi"},
			want: config{n: 4, max: 8, target: "./pi", settings: loopback, grace: 2 * time.Second},
		},
		{
			name: "max and join-info",
			args: []string{"-n", "2", "--max=3", "--join-info", "/tmp/j.json", "./pi", "--max", "9"},
			want: config{n: 2, max: 3, joinInfo: "/tmp/j.json", target: "./pi", args: []string{"--max", "9"}, settings: loopback, grace: 2 * time.Second},
		},
		{name: "max not above n", args: []string{"--max", "4", "-n", "4", "./pi"}, err: "--max 4: want more ranks than -n 4"},
		{name: "max below n", args: []string{"--max", "2", "-n", "4", "./pi"}, err: "--max 2"},
		{name: "negative max", args: []string{"--max", "-1", "-n", "4", "./pi"}, err: "--max -1"},
		{name: "max too large", args: []string{"--max", "100000", "-n", "4", "./pi"}, err: "at most 65536"},
		{name: "max of an existing job", args: []string{"--max", "8", "-n", "4", "--signal", "ws://h/ws", "--job", "j", "--token", "t", "./pi"}, err: "an existing job's max is in its token"},
		{name: "join-info without max", args: []string{"--join-info", "f", "-n", "4", "./pi"}, err: "needs --max"},
		{name: "join with max", args: []string{"join", "ws://h/ws", "--job", "j", "--token", "t", "--max", "3", "./pi"}, err: "not defined: -max"},
		{
			name: "join URL",
			args: []string{"join", "ws://127.0.0.1:4000/ws?job=meshrun-J&token=" + tok, "./pi", "a"},
			want: config{n: 1, first: meshmpi.AnyRank, signal: "ws://127.0.0.1:4000/ws", job: "meshrun-J", token: tok, target: "./pi", args: []string{"a"}, grace: 2 * time.Second},
		},
		{
			name: "join URL after the flags, wss",
			args: []string{"join", "--native", "wss://example.com/ws?token=" + url.QueryEscape(tok) + "&job=j", "./pi"},
			want: config{n: 1, first: meshmpi.AnyRank, native: true, signal: "wss://example.com/ws", job: "j", token: tok, target: "./pi", grace: 2 * time.Second},
		},
		{
			name: "flags win over the join URL",
			args: []string{"join", "ws://h/ws?job=a&token=b", "--job", "c", "--token", "d", "./pi"},
			want: config{n: 1, first: meshmpi.AnyRank, signal: "ws://h/ws", job: "c", token: "d", target: "./pi", grace: 2 * time.Second},
		},
		{
			name: "join URL with the job only",
			args: []string{"join", "ws://h/ws?job=a", "--token", "d", "./pi"},
			want: config{n: 1, first: meshmpi.AnyRank, signal: "ws://h/ws", job: "a", token: "d", target: "./pi", grace: 2 * time.Second},
		},
		{name: "join URL without a token", args: []string{"join", "ws://h/ws?job=a", "./pi"}, err: "--job and --token are required, unless the URL carries them"},
		{name: "join URL of http", args: []string{"join", "http://h/ws?job=a&token=b", "./pi"}, err: "want ws://host:port/ws?job=ID&token=T"},
		{
			name: "signal as a join URL",
			args: []string{"-n", "2", "--signal", "ws://h/ws?job=a&token=b", "./pi"},
			want: config{n: 2, first: meshmpi.AnyRank, signal: "ws://h/ws", job: "a", token: "b", target: "./pi", grace: 2 * time.Second},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := parseArgs(tc.args)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			if len(cfg.args) == 0 {
				cfg.args = nil
			}
			want := tc.want
			want.memCheck = true // the default
			require.Equal(t, want, cfg)
		})
	}
}

// A join URL carries the server, the job and the token, and comes apart
// into the same three.
func TestJoinURL(t *testing.T) {
	const tok = "eyJqIjoibWVzaHJ1bi1YIiwibiI6Mn0.q-_Z"
	u := joinURL("ws://127.0.0.1:4000/ws", "meshrun-X", tok)
	require.Equal(t, "ws://127.0.0.1:4000/ws?job=meshrun-X&token="+tok, u)
	signal, job, token, err := splitJoinURL(u)
	require.NoError(t, err)
	require.Equal(t, []string{"ws://127.0.0.1:4000/ws", "meshrun-X", tok}, []string{signal, job, token})
	// a token that needs escaping survives too
	odd := "a+b/c=d&e"
	_, _, token, err = splitJoinURL(joinURL("wss://h/ws", "j", odd))
	require.NoError(t, err)
	require.Equal(t, odd, token)
	_, _, _, err = splitJoinURL("ws://h/ws?job=%zz")
	require.Error(t, err)
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"./prog":        "./prog",
		"-steps=10":     "-steps=10",
		"":              "''",
		"two words":     "'two words'",
		"it's":          `'it'\''s'`,
		"$HOME":         "'$HOME'",
		"/a/b@v1.2:x,y": "/a/b@v1.2:x,y",
	} {
		require.Equal(t, want, shellQuote(in), "%q", in)
	}
}

// A held lineWriter keeps whole lines (and an unfinished one) until it is
// released with its prefix, or drops them; after release it writes as
// any other.
func TestLineWriterHold(t *testing.T) {
	var buf bytes.Buffer
	w := newLineWriter(&lockedWriter{w: &buf}, "[join 0] ")
	w.hold()
	_, _ = io.WriteString(w, "refused: not-formed\nhalf")
	require.Empty(t, buf.String())
	require.Equal(t, len("refused: not-formed\nhalf"), w.drop())
	_, _ = io.WriteString(w, "banner [join 0] \nrank 2 of 1 re")
	require.Empty(t, buf.String())
	w.release("[2] ")
	require.Equal(t, "[2] banner [join 0] \n", buf.String())
	_, _ = io.WriteString(w, "ady\nlast")
	require.NoError(t, w.Flush())
	require.Equal(t, "[2] banner [join 0] \n[2] rank 2 of 1 ready\n[2] last\n", buf.String())

	// never released: Flush writes what it held with the prefix it has
	buf.Reset()
	w = newLineWriter(&lockedWriter{w: &buf}, "[join 1] ")
	w.hold()
	_, _ = io.WriteString(w, "a\nb")
	require.NoError(t, w.Flush())
	require.Equal(t, "[join 1] a\n[join 1] b\n", buf.String())

	// a holding writer keeps at most maxHeld bytes, then lets them out
	buf.Reset()
	w = newLineWriter(&lockedWriter{w: &buf}, "[join 2] ")
	w.hold()
	line := strings.Repeat("x", 1023) + "\n"
	for range maxHeld / len(line) {
		_, _ = io.WriteString(w, line)
	}
	require.Equal(t, maxHeld/len(line), strings.Count(buf.String(), "[join 2] "+line))
}

// growing is a meshrun --max job under test and how to join it: the
// harness of the tests of jobs that grow, whatever their program.
type growing struct {
	t    *testing.T
	m    *meshrunRun // the job's meshrun, in the test process
	info joinInfo    // what it wrote to --join-info
	cmd  string      // the program and arguments its join line names
}

// joinLineRE is meshrun --max's join line: the join URL and the program.
var joinLineRE = regexp.MustCompile(`(?m)^meshrun: join this job: meshrun join '(ws://127\.0\.0\.1:\d+/ws\?job=meshrun-\w+&token=[\w.-]+)' (.*)$`)

// startGrowing runs meshrun with --join-info and args (flags, --max
// among them, then the target and its arguments) and waits until it has
// printed how to join, which must be what it wrote to the file.
func startGrowing(t *testing.T, args ...string) *growing {
	t.Helper()
	file := filepath.Join(t.TempDir(), "join.json")
	g := &growing{t: t, m: start(append([]string{"--join-info", file}, args...)...)}
	stopOnFailure(t, g.m)
	var got []string
	g.m.waitStderr(t, func(out string) bool { got = joinLineRE.FindStringSubmatch(out); return got != nil })
	b, err := os.ReadFile(file)
	require.NoError(t, err, "the join info is written before the join line")
	require.NoError(t, json.Unmarshal(b, &g.info))
	require.NotContains(t, string(b), `\u0026`, "the URLs are written as they are")
	require.Equal(t, got[1], g.info.Join)
	if g.info.Browser != "" {
		require.Contains(t, g.m.stderr.String(), "meshrun: browser join link: "+g.info.Browser+"\n")
	} else {
		require.NotContains(t, g.m.stderr.String(), "browser join link")
	}
	g.cmd = got[2]
	return g
}

// join starts one late rank, meshrun join [flags…] URL target args…, in
// the test process (flags such as --native or --join-timeout 5m).
func (g *growing) join(flags []string, target string, args ...string) *meshrunRun {
	m := start(append(append(append([]string{"join"}, flags...), g.info.Join, target), args...)...)
	stopOnFailure(g.t, m)
	return m
}

// stopOnFailure stops m's ranks (SIGTERM) when t fails before it ended,
// so that they do not outlive the test in the test binary.
func stopOnFailure(t *testing.T, m *meshrunRun) {
	t.Cleanup(func() {
		if t.Failed() {
			select {
			case m.sigc <- syscall.SIGTERM:
			default:
			}
		}
	})
}

// openPage opens the job's browser link in a new tab of b: a browser
// rank running the package meshrun was given, with its arguments.
func (g *growing) openPage(t *testing.T, b *browsertest.Browser, name string) context.Context {
	t.Helper()
	require.NotEmpty(t, g.info.Browser, "meshrun printed no browser link (a package target?)")
	u, err := url.Parse(g.info.Browser)
	require.NoError(t, err)
	tab := b.Tab(name, u.Scheme+"://"+u.Host)
	require.NoError(t, chromedp.Do(tab, chromedp.Navigate(g.info.Browser)))
	return tab
}

// waitPage waits until the JavaScript predicate pred holds in the run
// page in tab. The page loads itself again while the job has not formed:
// a wait in a page that goes is taken up in the next one.
func waitPage(t *testing.T, tab context.Context, pred string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, hangLimit())
	defer cancel()
	for {
		_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](pred, chromedp.WithPollingInterval(50*time.Millisecond)))
		if err == nil {
			return
		}
		require.NoError(t, ctx.Err(), "the run page never got to %s: %v", pred, err)
	}
}

// pageResult waits for the run page in tab to exit and returns its
// state (window.meshmpiRun).
func pageResult(t *testing.T, tab context.Context) browsertest.RunResult {
	t.Helper()
	waitPage(t, tab, `!!window.meshmpiRun && window.meshmpiRun.phase === "exited"`)
	r, err := chromedp.Run(tab, chromedp.Evaluate[browsertest.RunResult](`window.meshmpiRun`))
	require.NoError(t, err)
	return r
}

// laterankJob is a meshrun --max job of laterank on the test's terms:
// its ranks Init once start exists (at once if start is ""), and
// Finalize once hold exists.
type laterankJob struct {
	*growing
	start, hold string
}

// startLaterank starts meshrun --max max -n n [flags…] laterank (target,
// or the built binary if ""), whose ranks wait for the test's word before
// Finalize and, with waitStart, before Init.
func startLaterank(t *testing.T, max, n int, target string, waitStart bool, flags ...string) *laterankJob {
	t.Helper()
	dir := t.TempDir()
	g := &laterankJob{hold: filepath.Join(dir, "hold")}
	if target == "" {
		target = laterankBinary(t)
	}
	args := append(append([]string{"--max", strconv.Itoa(max), "-n", strconv.Itoa(n), "--grace", "30s"}, flags...), target, "-hold", g.hold)
	if waitStart {
		g.start = filepath.Join(dir, "start")
		args = append(args, "-start", g.start)
	}
	t.Cleanup(func() { // a failed test's ranks end too
		_ = os.WriteFile(g.hold, nil, 0o644)
		if g.start != "" {
			_ = os.WriteFile(g.start, nil, 0o644)
		}
	})
	g.growing = startGrowing(t, args...)
	want := shellQuote(target) + " -hold " + g.hold
	if waitStart {
		want += " -start " + g.start
	}
	require.Equal(t, want, g.cmd, "the join line names the program and its arguments")
	return g
}

// waitFormed waits for the job's own n ranks to be ready.
func (g *laterankJob) waitFormed(t *testing.T, n int) {
	t.Helper()
	g.m.waitStdout(t, func(out string) bool {
		for r := range n {
			if !strings.Contains(out, fmt.Sprintf("[%d] rank %d of %d ready\n", r, r, n)) {
				return false
			}
		}
		return true
	})
}

// finish lets the job's ranks Finalize and checks that meshrun succeeds.
func (g *laterankJob) finish(t *testing.T, n int) {
	t.Helper()
	require.NoError(t, os.WriteFile(g.hold, nil, 0o644))
	require.Equal(t, 0, g.m.wait(t), "stderr:\n%s", g.m.stderr.String())
	for r := range n {
		require.Contains(t, g.m.stdout.String(), fmt.Sprintf("[%d] rank %d done\n", r, r))
	}
}

// lateRE is a late rank's line: its label, rank and world size.
var lateRE = regexp.MustCompile(`\[((?:join )?\d+)\] rank (\d+) of (\d+) ready\n`)

// checkLateLine checks that out holds a late rank's ready line and
// returns its label. A late rank is no member of the job's first world:
// its world is its own (rank 0 of 1), or, in a library that numbers it
// in the job's world, its rank is past the first ranks'.
func checkLateLine(t *testing.T, out string) (label string) {
	t.Helper()
	m := lateRE.FindStringSubmatch(out)
	require.NotNil(t, m, "no late rank's ready line in:\n%s", out)
	rank, _ := strconv.Atoi(m[2])
	size, _ := strconv.Atoi(m[3])
	require.True(t, size == 1 && rank == 0 || rank >= 2, "a late rank in the job's first world: %q", m[0])
	t.Logf("late rank: %q", m[0])
	return m[1]
}

// meshrun --max 4 -n 2 prints how to join and writes it to --join-info
// before its ranks start; native meshrun joins with that URL join the
// formed job as late ranks 2 and 3, and a third one finds the job full.
// meshrun's exit status and failure accounting are its own ranks': a
// late rank that crashes (status 3, without Finalize) is not its to
// count, with --keep-going or without.
func TestGrowJoinNative(t *testing.T) {
	if testing.Short() {
		t.Skip("WebRTC jobs in -short mode")
	}
	for _, flags := range [][]string{nil, {"--keep-going"}} {
		t.Run(strings.Join(append([]string{"plain"}, flags...), " "), func(t *testing.T) {
			g := startLaterank(t, 4, 2, "", false, flags...)
			require.Empty(t, g.info.Browser, "an executable has no browser link")
			g.waitFormed(t, 2)

			prog := laterankBinary(t)
			late := g.join(nil, prog)
			require.Equal(t, 0, late.wait(t), "stderr:\n%s", late.stderr.String())
			require.Equal(t, "join 0", checkLateLine(t, late.stdout.String()), "a native rank's rank is its own to know")
			crash := g.join(nil, prog, "-crash")
			require.Equal(t, 3, crash.wait(t))
			checkLateLine(t, crash.stdout.String())

			full := g.join(nil, prog)
			require.Equal(t, 1, full.wait(t))
			require.Contains(t, full.stderr.String(), "job-full")

			g.finish(t, 2)
			require.NotRegexp(t, `rank [23]\b`, g.m.stderr.String(), "meshrun's accounting is its own ranks'")
		})
	}
}

// A late WASI rank that comes before the job formed is refused
// (not-formed) and joined again by meshrun until the job formed; its
// lines carry the rank it got, and the refused tries' output is gone.
func TestGrowJoinWASI(t *testing.T) {
	if testing.Short() {
		t.Skip("a WASI runtime and a WebRTC job in -short mode")
	}
	g := startLaterank(t, 3, 2, "", true)
	outDir := t.TempDir()
	late := g.join([]string{"--join-timeout", "5m", "--output-dir", outDir}, "./testdata/laterank")
	late.waitStderr(t, func(out string) bool { return strings.Contains(out, "has not formed yet: joining again until it has") })
	require.NoError(t, os.WriteFile(g.start, nil, 0o644))
	g.waitFormed(t, 2)
	require.Equal(t, 0, late.wait(t), "stderr:\n%s", late.stderr.String())
	require.Equal(t, "2", checkLateLine(t, late.stdout.String()), "the WASI rank's lines carry its rank, the job's first late one")
	require.Regexp(t, `\[2\] rank \d+ done\n`, late.stdout.String())
	require.NotContains(t, late.stderr.String(), "laterank:", "a refused try's output is dropped")
	// --output-dir: its files are named by the rank it got, and hold
	// what its lines say, without the refused tries' output
	b, err := os.ReadFile(filepath.Join(outDir, "rank.2.stdout"))
	require.NoError(t, err)
	require.Equal(t, strings.ReplaceAll(strings.TrimPrefix(late.stdout.String(), "[2] "), "\n[2] ", "\n"), string(b))
	_, err = os.Stat(filepath.Join(outDir, "join.0.stdout"))
	require.ErrorIs(t, err, os.ErrNotExist)
	g.finish(t, 2)
}

// For a package, meshrun --max serves the browser's run page, its
// program built for GOOS=js and wasm_exec.js, with the embedded server's
// /ws, on loopback, and prints its link.
func TestGrowBrowserLink(t *testing.T) {
	if testing.Short() {
		t.Skip("go build and a WebRTC job in -short mode")
	}
	g := startLaterank(t, 3, 2, "./testdata/laterank", true, "--native")
	u, err := url.Parse(g.info.Browser)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1", u.Hostname())
	require.Equal(t, "/run", u.Path)
	q := u.Query()
	_, job, token, err := splitJoinURL(g.info.Join)
	require.NoError(t, err)
	require.Equal(t, job, q.Get("job"))
	require.Equal(t, token, q.Get("token"))
	require.Equal(t, "laterank", q.Get("example"))
	require.Equal(t, []string{"-hold", g.hold, "-start", g.start}, q["arg"])
	for path, ctype := range map[string]string{
		"/run":                "text/html",
		"/web/run.js":         "text/javascript",
		"/js/meshmpi.js":      "text/javascript",
		"/wasm_exec.js":       "text/javascript",
		"/wasm/laterank.wasm": "application/wasm",
	} {
		resp, err := http.Get("http://" + u.Host + path)
		require.NoError(t, err)
		_ = resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		require.Contains(t, resp.Header.Get("Content-Type"), ctype, path)
	}
	t.Run("chromium", func(t *testing.T) { browserLateRank(t, g) })
	require.NoError(t, os.WriteFile(g.start, nil, 0o644)) // if the browser test skipped
	g.waitFormed(t, 2)
	g.finish(t, 2)
}

// browserLateRank opens g's browser link in a headless chromium tab
// before g's job formed (its ranks wait for g.start): the page is refused
// (not-formed) and loads itself again until the job formed, and then
// joins it as a late rank. (In the browser, laterank's -start and -hold
// find no file system to wait on: it goes on at once.)
func browserLateRank(t *testing.T, g *laterankJob) {
	b := browsertest.New(t)
	tab := g.openPage(t, b, "late rank")
	waitPage(t, tab, `!!window.meshmpiRun && (window.meshmpiRun.tries >= 1 || (window.meshmpiRun.error || "").startsWith("not-formed"))`)
	require.NoError(t, os.WriteFile(g.start, nil, 0o644))
	r := pageResult(t, tab)
	require.NotNil(t, r.Status, "%+v", r)
	require.Equal(t, 0, *r.Status, "stderr: %s", r.Stderr)
	require.NotNil(t, r.Rank)
	require.GreaterOrEqual(t, *r.Rank, 2, "the page shows the late rank it got")
	require.Regexp(t, `rank \d+ of \d+ ready\n`, r.Stdout)
	shown, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.getElementById("rank").textContent`))
	require.NoError(t, err)
	require.Contains(t, shown, strconv.Itoa(*r.Rank))
	t.Logf("browser late rank: shown %q; stdout %q", shown, r.Stdout)

	// the job (max 3) is full now: a second page says so in words
	full := g.openPage(t, b, "full")
	r = pageResult(t, full)
	require.NotNil(t, r.Status)
	require.NotEqual(t, 0, *r.Status)
	require.NotNil(t, r.Error)
	require.Contains(t, *r.Error, "job-full")
	note, err := chromedp.Run(full, chromedp.Evaluate[string](`document.getElementById("note").textContent`))
	require.NoError(t, err)
	require.Contains(t, note, "The job is full")
}

// examples/grow under meshrun --max 8 -n 4: the job's 4 ranks (native)
// publish a port and accept late ranks until there are 8, which join
// with meshrun's join URL — two WASI ranks from one meshrun join -n 2, a
// native one and a browser tab on the browser link (with no chromium, a
// second native one) — and then all 8 compute on the grown communicator.
func TestGrowExample(t *testing.T) {
	if testing.Short() {
		t.Skip("go build, a WASI runtime, a browser and WebRTC jobs in -short mode")
	}
	t.Chdir("../..")
	g := startGrowing(t, "--max", "8", "-n", "4", "--native", "--grace", "30s", "./examples/grow", "-grow", "8")
	g.m.waitStdout(t, func(out string) bool { return strings.Contains(out, "[0] waiting for 4 late ranks") })

	// two WASI ranks by meshrun join, two browser tabs on the join link
	joins := []*meshrunRun{g.join([]string{"-n", "2"}, "./examples/grow", "-grow", "8")}
	var tabs []context.Context
	if _, err := browsertest.Find(); err == nil || os.Getenv(browsertest.EnvRequire) == "require" {
		b := browsertest.New(t)
		tabs = append(tabs, g.openPage(t, b, "late rank 1"), g.openPage(t, b, "late rank 2"))
	} else {
		t.Logf("no browser (%v): native ranks instead", err)
		joins = append(joins, g.join([]string{"--native", "-n", "2"}, "./examples/grow", "-grow", "8"))
	}
	for _, j := range joins {
		require.Equal(t, 0, j.wait(t), "stderr:\n%s", j.stderr.String())
	}
	for _, tab := range tabs {
		r := pageResult(t, tab)
		require.NotNil(t, r.Status, "%+v", r)
		require.Equal(t, 0, *r.Status, "stderr: %s", r.Stderr)
		require.NotNil(t, r.Rank)
		require.GreaterOrEqual(t, *r.Rank, 4)
	}
	require.Equal(t, 0, g.m.wait(t), "stderr:\n%s", g.m.stderr.String())
	out := g.m.stdout.String()
	require.Regexp(t, `\[0\] grown to 8 ranks \([jL]{8}: j the job's, L late\): Allreduce of rank\+1 = 36 \(want 36\)\n`, out)
	require.Equal(t, 4, strings.Count(out, "[0] a rank joined: "))
}
