//go:build !js && !wasip1

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/internal/browsertest"
)

// The organizer's password of the UI tests' server.
const uiPassword = "a teacher's password"

// EnvUpdateDocs set to "1" makes TestBrowserJobsUI write its screenshots of
// the jobs page, a join page and the dashboard to docs/ as well.
const EnvUpdateDocs = "MESHMPI_UPDATE_DOCS"

// Largest committed screenshot.
const maxDocPNG = 300 << 10

var (
	demoOnce sync.Once
	demoWasm []byte
	demoErr  error
)

// uiPrograms are the examples plus testdata/uidemo (which prints on every
// rank and runs collectives and ring exchanges), as -wasm DIR files, and
// the toolchain's wasm_exec.js.
func uiPrograms(t *testing.T) (dir, exec string) {
	t.Helper()
	progs, wasmExec := browserPrograms(t)
	demoOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		o, err := webOptions(ctx, webConfig{buildDir: "testdata/uidemo", goCmd: "go"}, nil)
		if err != nil {
			demoErr = err
			return
		}
		demoWasm = o.Programs["uidemo"]
		if demoWasm == nil {
			demoErr = fmt.Errorf("testdata/uidemo built no uidemo.wasm (got %d programs)", len(o.Programs))
		}
	})
	require.NoError(t, demoErr)
	dir = t.TempDir()
	for name, b := range progs {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name+".wasm"), b, 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "uidemo.wasm"), demoWasm, 0o644))
	exec = filepath.Join(t.TempDir(), "wasm_exec.js")
	require.NoError(t, os.WriteFile(exec, wasmExec, 0o644))
	return dir, exec
}

// startServe runs `signal serve` with args (plus a secret, a loopback
// port and the test's programs) until t ends, and returns its base URL.
func startServe(t *testing.T, args ...string) string {
	t.Helper()
	dir, exec := uiPrograms(t)
	sc, err := parseServe(append([]string{"-secret", secret, "-listen", "127.0.0.1:0", "-wasm", dir, "-wasm-exec", exec,
		"-admin-password", uiPassword}, args...), io.Discard)
	require.NoError(t, err)
	s, err := startServer(context.Background(), sc)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- s.serve() }()
	t.Cleanup(func() {
		require.NoError(t, s.shutdown(10*time.Second)) // the pool's long polls end at once too
		<-done
	})
	return "http://" + s.ln.Addr().String()
}

// poll waits, up to limit, until the page's expression is truthy; a
// navigation under way (the page's context going) is waited out too.
func poll(t *testing.T, tab context.Context, limit time.Duration, what, expr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, limit)
	defer cancel()
	var err error
	for ctx.Err() == nil {
		if _, err = chromedp.Run(ctx, chromedp.Poll[any](expr, chromedp.WithPollingInterval(100*time.Millisecond))); err == nil {
			return
		}
		if !strings.Contains(err.Error(), "navigated") && !strings.Contains(err.Error(), "context was destroyed") &&
			!strings.Contains(err.Error(), "Cannot find context") {
			break
		}
	}
	peek, stop := context.WithTimeout(tab, 5*time.Second)
	shown, _ := chromedp.Run(peek, chromedp.Evaluate[string](`document.body ? document.body.innerText.slice(0, 2000) : ""`))
	stop()
	t.Fatalf("%s: %v\nthe page shows:\n%s", what, err, shown)
}

// eval evaluates expr in the tab, awaiting a promise.
func eval[T any](t *testing.T, tab context.Context, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, time.Minute)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	require.NoError(t, err, "evaluate %s", expr)
	return v
}

// axeViolation is one rule axe-core found broken.
type axeViolation struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

var axeSource = sync.OnceValues(func() (string, error) {
	b, err := os.ReadFile("testdata/axe/axe.min.js")
	return string(b), err
})

// checkAxe runs axe-core (WCAG 2.1 A and AA, and its best practices) in
// the page and fails on serious or critical violations; lesser ones are
// logged.
func checkAxe(t *testing.T, tab context.Context, name string) {
	t.Helper()
	src, err := axeSource()
	require.NoError(t, err)
	if !eval[bool](t, tab, `typeof window.axe === "object"`) {
		eval[bool](t, tab, src+"\n;true")
	}
	vs := eval[[]axeViolation](t, tab, `axe.run(document, {runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]}})
		.then((r) => r.violations.map((v) => ({id: v.id, impact: v.impact || "", help: v.help,
			nodes: v.nodes.slice(0, 5).map((n) => n.target.join(" "))})))`)
	var bad []string
	for _, v := range vs {
		line := fmt.Sprintf("%s (%s): %s at %s", v.ID, v.Impact, v.Help, strings.Join(v.Nodes, ", "))
		if v.Impact == "serious" || v.Impact == "critical" {
			bad = append(bad, line)
		} else {
			t.Logf("axe, %s page: %s", name, line)
		}
	}
	require.Empty(t, bad, "axe-core finds serious or critical violations on the %s page", name)
}

// checkNarrow shows the page 375 px wide (a phone) and fails if the page
// body scrolls sideways; it saves a screenshot, then restores the width.
func checkNarrow(t *testing.T, tab context.Context, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, time.Minute)
	defer cancel()
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(375, 812, chromedp.EmulateMobile)))
	poll(t, tab, time.Minute, name+" at 375 px", `document.documentElement.clientWidth === 375`)
	type widths struct{ Client, Scroll, Body int }
	w := eval[widths](t, tab, `({client: document.documentElement.clientWidth, scroll: document.documentElement.scrollWidth, body: document.body.scrollWidth})`)
	// which elements stick out, to say in the failure
	wide := eval[[]string](t, tab, `[...document.querySelectorAll("body *")].filter((e) => {
		const r = e.getBoundingClientRect();
		return r.right > document.documentElement.clientWidth + 1 && !e.closest(".scroll-x") && r.left > -100;
	}).slice(0, 8).map((e) => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (e.className && typeof e.className === "string" ? "." + e.className.split(" ").join(".") : ""))`)
	saveShot(t, tab, name+"-375", false)
	require.LessOrEqual(t, w.Scroll, w.Client, "the %s page scrolls sideways at 375 px (body %d px); too wide: %v", name, w.Body, wide)
	require.LessOrEqual(t, w.Body, w.Client, "the %s page's body is wider than 375 px; too wide: %v", name, wide)
	require.NoError(t, chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tt *chromedp.Target) error {
		_, err := cdp.Call(ctx, tt, emulation.ClearDeviceMetricsOverride, cdp.Empty{})
		return err
	})))
}

// artifacts is the directory screenshots go to.
var artifacts = sync.OnceValue(func() string {
	if d := os.Getenv(browsertest.EnvArtifacts); d != "" {
		if err := os.MkdirAll(d, 0o755); err == nil {
			return d
		}
	}
	d, err := os.MkdirTemp("", "meshmpi-ui-")
	if err != nil {
		return os.TempDir()
	}
	return d
})

// saveShot saves a PNG of what the tab shows to the artifacts directory;
// with docs, of the whole page from its top, and with
// MESHMPI_UPDATE_DOCS=1 to docs/ too (made smaller than maxDocPNG).
func saveShot(t *testing.T, tab context.Context, name string, docs bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, time.Minute)
	defer cancel()
	var b []byte
	var err error
	if docs {
		require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)))
		poll(t, tab, time.Minute, "the page 1280 px wide", `document.documentElement.clientWidth === 1280`)
		eval[bool](t, tab, `(() => { document.activeElement && document.activeElement.blur(); scrollTo(0, 0); return true; })()`)
		b, err = chromedp.Run(ctx, chromedp.FullScreenshot(100))
	} else {
		b, err = chromedp.Run(ctx, func(ctx context.Context, tt *chromedp.Target) ([]byte, error) {
			r, err := cdp.Call(ctx, tt, page.CaptureScreenshot, page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng})
			return r.Data, err
		})
	}
	require.NoError(t, err)
	p := filepath.Join(artifacts(), "ui-"+name+".png")
	require.NoError(t, os.WriteFile(p, b, 0o644))
	t.Logf("screenshot of the %s page: %s", name, p)
	if !docs || os.Getenv(EnvUpdateDocs) != "1" {
		return
	}
	small, err := shrinkPNG(b)
	require.NoError(t, err)
	require.Less(t, len(small), maxDocPNG, "docs screenshot %s", name)
	d := filepath.Join("..", "..", "docs", "ui-"+name+".png")
	require.NoError(t, os.MkdirAll(filepath.Dir(d), 0o755))
	require.NoError(t, os.WriteFile(d, small, 0o644))
	t.Logf("docs screenshot: %s (%d bytes)", d, len(small))
}

// shrinkPNG re-encodes a screenshot with best compression and, if that
// is still too large, with a palette of its 256 most frequent colours (the
// pages are flat colours and text).
func shrinkPNG(b []byte) ([]byte, error) {
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	var out bytes.Buffer
	if err := enc.Encode(&out, img); err != nil {
		return nil, err
	}
	if out.Len() < maxDocPNG {
		return out.Bytes(), nil
	}
	freq := map[color.RGBA]int{}
	bd := img.Bounds()
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			freq[color.RGBA{uint8(r>>8) &^ 3, uint8(g>>8) &^ 3, uint8(b>>8) &^ 3, 255}]++
		}
	}
	cs := make([]color.RGBA, 0, len(freq))
	for c := range freq {
		cs = append(cs, c)
	}
	slices.SortFunc(cs, func(a, b color.RGBA) int { return freq[b] - freq[a] })
	pal := color.Palette{}
	for _, c := range cs[:min(256, len(cs))] {
		pal = append(pal, c)
	}
	pi := image.NewPaletted(bd, pal)
	draw.Draw(pi, bd, img, bd.Min, draw.Src) // nearest colour, no dithering: text stays crisp
	out.Reset()
	if err := enc.Encode(&out, pi); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// jobInfo is the part of the jobs page's created job the test reads.
type jobInfo struct {
	ID        string `json:"id"`
	Invite    string `json:"invite"`
	Dashboard string `json:"dashboard"`
	Trace     string `json:"trace"`
	QR        string `json:"qr"`
	Program   string `json:"program"`
	Size      int    `json:"size"`
}

// dashSummary is window.meshmpiDashboard.summary() of the dashboard.
type dashSummary struct {
	Connected bool   `json:"connected"`
	State     string `json:"state"`
	Ranks     []struct {
		Rank  int    `json:"rank"`
		Kind  string `json:"kind"`
		State string `json:"state"`
		Agent string `json:"agent"`
	} `json:"ranks"`
	ConsoleLines map[string]int `json:"consoleLines"`
	Ops          map[string]int `json:"ops"`
	Bars         int            `json:"bars"`
	Edges        int            `json:"edges"`
	Alerts       []string       `json:"alerts"`
}

// traceFile is the trace download: Chrome's trace-event JSON.
type traceFile struct {
	TraceEvents []struct {
		Name string         `json:"name"`
		Cat  string         `json:"cat"`
		Ph   string         `json:"ph"`
		Pid  int            `json:"pid"`
		Tid  int            `json:"tid"`
		Ts   float64        `json:"ts"`
		Dur  float64        `json:"dur"`
		Args map[string]any `json:"args"`
	} `json:"traceEvents"`
	DisplayTimeUnit string `json:"displayTimeUnit"`
}

// login logs the organizer's tab in on the login page (by the keyboard:
// the password, then Enter) and waits for the jobs page.
func login(t *testing.T, org context.Context, base string) {
	t.Helper()
	require.NoError(t, chromedp.Do(org, chromedp.Navigate(base+"/login")))
	poll(t, org, time.Minute, "the login page", `!!document.getElementById("password")`)
	require.NoError(t, chromedp.Do(org, chromedp.SendKeys("#password", uiPassword+"\r")))
	poll(t, org, time.Minute, "the jobs page", `location.pathname === "/jobs" && [...document.querySelectorAll("#example option")].some((o) => o.value === "uidemo")`)
}

// createJob fills the jobs page's form for a job of size ranks of uidemo
// (the example, or uploaded from the file upload names) with args, and
// returns the created job.
func createJob(t *testing.T, org context.Context, size int, args string, pool bool, upload string) jobInfo {
	t.Helper()
	steps := []chromedp.Action[chromedp.Void]{
		chromedp.SetValue("#example", "uidemo"),
		chromedp.SetValue("#size", fmt.Sprint(size)),
		chromedp.SetValue("#args", args),
		chromedp.SetValue("#minutes", "20"),
	}
	if pool {
		steps = append(steps, chromedp.Click("#pool"))
	}
	if upload != "" {
		steps = append(steps, chromedp.SetUploadFiles("#rank_wasm", []string{upload}))
	}
	eval[bool](t, org, `(window.meshmpiJobs.created = null, true)`)
	require.NoError(t, chromedp.Do(org, append(steps, chromedp.Click("#create-btn"))...))
	poll(t, org, time.Minute, "the created job's invite", `window.meshmpiJobs.created || window.meshmpiJobs.error`)
	job := eval[jobInfo](t, org, `window.meshmpiJobs.error ? Promise.reject(new Error(window.meshmpiJobs.error)) : window.meshmpiJobs.created`)
	require.Equal(t, size, job.Size)
	return job
}

// TestBrowserJobsUI is the teaching lab as a class uses it: the organizer
// logs in and creates a job of 4 ranks on the jobs page, 4 tabs open its
// invite link and run it, and the dashboard shows the ranks, the mesh
// with its path types, every rank's console and the operations'
// timeline; the trace download is trace-event JSON with an event per
// collective per rank. Every page passes axe-core and fits 375 px.
func TestBrowserJobsUI(t *testing.T) {
	b := browsertest.New(t)
	base := startServe(t)
	const k, rounds = 4, 24

	// the organizer: /jobs sends an unknown browser to the login page
	org := b.Tab("jobs", base)
	require.NoError(t, chromedp.Do(org, chromedp.Navigate(base+"/jobs")))
	poll(t, org, time.Minute, "the login page", `location.pathname === "/login" && !!document.getElementById("password")`)
	checkAxe(t, org, "login")
	checkNarrow(t, org, "login")
	require.NoError(t, chromedp.Do(org, chromedp.SendKeys("#password", "wrong\r"))) // Enter sends the form
	poll(t, org, time.Minute, "the login page says the password is wrong", `/Wrong password/.test(document.getElementById("status").textContent)`)
	require.NoError(t, chromedp.Do(org, chromedp.SendKeys("#password", uiPassword+"\r")))
	poll(t, org, time.Minute, "the jobs page", `location.pathname === "/jobs" && [...document.querySelectorAll("#example option")].some((o) => o.value === "uidemo")`)

	// a job of 4 ranks of uidemo, through the form
	job := createJob(t, org, k, fmt.Sprintf("-rounds %d -pause 200ms", rounds), false, "")
	require.Contains(t, job.Invite, base+"/join/")
	require.Contains(t, job.Dashboard, "/jobs/"+job.ID+"/dashboard?key=")
	poll(t, org, time.Minute, "the invite's QR code", `(() => { const q = document.getElementById("qr"); return q.complete && q.naturalWidth > 50; })()`)
	require.Equal(t, job.Invite, eval[string](t, org, `document.getElementById("invite-url").value`))
	poll(t, org, time.Minute, "the job in the list", `document.querySelector("#jobs tbody").textContent.includes(`+jsString(job.ID)+`)`)
	checkAxe(t, org, "jobs")
	checkNarrow(t, org, "jobs")

	// the dashboard, with the viewer key the jobs page links to
	dash := b.Tab("dashboard", base)
	require.NoError(t, chromedp.Do(dash, chromedp.EmulateViewport(1280, 1500), chromedp.Navigate(job.Dashboard)))
	poll(t, dash, time.Minute, "the dashboard connects", `window.meshmpiDashboard && window.meshmpiDashboard.summary().connected`)

	// 4 students open the invite link, each in a tab of their own
	joins := make([]context.Context, k)
	for i := range joins {
		joins[i] = b.Tab(fmt.Sprintf("join-%d", i), base)
		require.NoError(t, chromedp.Do(joins[i], chromedp.Navigate(job.Invite+"?mic=1")))
	}
	// a fifth finds the job full, and says so in words
	late := b.Tab("join-full", base)
	for i := range joins { // every seat is handed out first
		poll(t, joins[i], 2*time.Minute, fmt.Sprintf("join tab %d gets a seat", i), `window.meshmpiRun && window.meshmpiRun.job !== null`)
	}
	require.NoError(t, chromedp.Do(late, chromedp.Navigate(job.Invite)))
	poll(t, late, time.Minute, "the fifth tab says the job is full", `window.meshmpiRun && window.meshmpiRun.phase === "exited"`)
	note := eval[string](t, late, `document.getElementById("note").textContent`)
	require.Contains(t, note, "The job is full")
	checkAxe(t, late, "join-refused")

	// the dashboard while the job runs: 4 ranks, the mesh's edges with
	// their path types, console lines of every rank, timeline bars
	poll(t, dash, 3*time.Minute, "4 of 4 joined on the dashboard", `document.getElementById("joined").textContent.startsWith("4 of 4 joined") && document.querySelectorAll("#ranks tbody tr").length === 4`)
	poll(t, dash, 3*time.Minute, "the mesh's 6 edges with path types",
		`document.querySelectorAll("#mesh g.edge").length === 6 && [...document.querySelectorAll("#mesh g.edge text")].every((e) => /^(host|srflx|prflx|relay|memory)/.test(e.textContent))`)
	poll(t, dash, 3*time.Minute, "console lines from every rank",
		`[0, 1, 2, 3].every((r) => [...document.querySelectorAll("#console .line")].some((l) => l.dataset.rank === String(r) && /rank \d+ of 4: hello/.test(l.textContent)))`)
	poll(t, dash, 3*time.Minute, "timeline bars of a collective on every rank",
		`(() => { const s = window.meshmpiDashboard.summary(); return s.bars > 0 && document.querySelectorAll("#timeline rect.op.coll").length >= 4 && [0, 1, 2, 3].every((r) => s.ops[r] > 0); })()`)
	// the dashboard's picture for docs/, while the job runs (if it still
	// does: nothing waits for that) with a third of the operations in
	poll(t, dash, 3*time.Minute, "a third of the operations on the dashboard",
		fmt.Sprintf(`(() => { const s = window.meshmpiDashboard.summary(); return [0, 1, 2, 3].every((r) => s.ops[r] >= %d); })()`, rounds))
	saveShot(t, dash, "dashboard", true)
	poll(t, org, time.Minute, "the jobs page lists the job running", `/4 of 4 joined/.test(document.querySelector("#jobs tbody").textContent)`)
	saveShot(t, org, "jobs", true)
	checkAxe(t, dash, "dashboard")

	// every rank finishes with status 0, having printed its lines
	for i, tab := range joins {
		r, err := browsertest.WaitRun(tab, 4*time.Minute)
		require.NoError(t, err, "join tab %d", i)
		require.NotNil(t, r.Status, "join tab %d", i)
		require.Equal(t, 0, *r.Status, "join tab %d: %s", i, r.Stderr)
		require.NotNil(t, r.Rank)
		require.Contains(t, r.Stdout, fmt.Sprintf("rank %d: done", *r.Rank))
	}
	rank0 := 0
	for i, tab := range joins {
		if eval[int](t, tab, `window.meshmpiRun.rank`) == 0 {
			rank0 = i
		}
	}
	poll(t, joins[rank0], time.Minute, "the join page shows the exit status and the job's end",
		`document.getElementById("status").textContent.startsWith("0") && /finished/.test(document.getElementById("title").textContent)`)
	checkAxe(t, joins[rank0], "join")
	saveShot(t, joins[rank0], "join", true)
	checkNarrow(t, joins[rank0], "join")

	// the dashboard after the run: every rank finished, every operation in
	poll(t, dash, 2*time.Minute, "every rank finalized on the dashboard",
		`[...document.querySelectorAll("#ranks tbody tr")].filter((r) => /finalized/.test(r.textContent)).length === 4`)
	poll(t, dash, 2*time.Minute, "the last console lines", `[0, 1, 2, 3].every((r) => [...document.querySelectorAll("#console .line")].some((l) => l.dataset.rank === String(r) && /done/.test(l.textContent)))`)
	sum := eval[dashSummary](t, dash, `window.meshmpiDashboard.summary()`)
	t.Logf("dashboard: state %s, %d ranks, %d edges, %d bars, ops %v, console lines %v, alerts %v",
		sum.State, len(sum.Ranks), sum.Edges, sum.Bars, sum.Ops, sum.ConsoleLines, sum.Alerts)
	for _, r := range sum.Ranks {
		require.Equal(t, "browser", r.Kind, "rank %d", r.Rank)
		require.NotEmpty(t, r.Agent, "rank %d's user agent", r.Rank)
	}
	// the console search finds rank 2's lines only
	require.NoError(t, chromedp.Do(dash, chromedp.SendKeys("#console-search", "rank 2:")))
	poll(t, dash, time.Minute, "the console search", `(() => { const ls = [...document.querySelectorAll("#console .line")]; return ls.length > 0 && ls.every((l) => l.dataset.rank === "2") && document.querySelectorAll("#console mark").length > 0; })()`)
	eval[bool](t, dash, `(() => { const s = document.getElementById("console-search"); s.value = ""; return s.dispatchEvent(new Event("input")); })()`)
	// zoom in and back with the keyboard
	before := eval[string](t, dash, `document.querySelector("#timeline g.axis").textContent`)
	require.NoError(t, chromedp.Do(dash, chromedp.Focus("#timeline"), chromedp.KeyEvent("+"), chromedp.KeyEvent("+")))
	poll(t, dash, time.Minute, "the timeline zooms in", `document.querySelector("#timeline g.axis").textContent !== `+jsString(before))
	require.NoError(t, chromedp.Do(dash, chromedp.Click("#zoom-reset")))
	poll(t, dash, time.Minute, "the timeline shows all again", `document.querySelector("#timeline g.axis").textContent === `+jsString(before))
	saveShot(t, dash, "dashboard-end", false)
	checkNarrow(t, dash, "dashboard")

	// the trace download: trace-event JSON, an event per collective per rank
	href := eval[string](t, dash, `document.getElementById("trace").href`)
	require.True(t, eval[bool](t, dash, `document.getElementById("trace").hasAttribute("download")`))
	resp, err := http.Get(href)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	var tr traceFile
	require.NoError(t, json.Unmarshal(body, &tr), "trace.json")
	require.NotEmpty(t, tr.TraceEvents)
	count := map[string]map[int]int{}
	names := map[int]string{}
	for _, e := range tr.TraceEvents {
		switch e.Ph {
		case "X":
			require.GreaterOrEqual(t, e.Dur, 0.0, "%+v", e)
			require.GreaterOrEqual(t, e.Ts, 0.0, "%+v", e)
			if count[e.Name] == nil {
				count[e.Name] = map[int]int{}
			}
			count[e.Name][e.Tid]++
			if e.Cat == "coll" {
				require.Contains(t, []string{"allreduce", "bcast", "barrier"}, e.Name, "a collective uidemo does not call: %+v", e)
			}
		case "M":
			if e.Name == "thread_name" {
				names[e.Tid], _ = e.Args["name"].(string)
			}
		}
	}
	for r := 0; r < k; r++ {
		require.Equal(t, rounds, count["allreduce"][r], "rank %d's allreduce events (%v)", r, count)
		require.GreaterOrEqual(t, count["bcast"][r], 1, "rank %d's bcast events", r)
		require.GreaterOrEqual(t, count["barrier"][r], 1, "rank %d's barrier events", r)
		require.GreaterOrEqual(t, count["sendrecv"][r]+count["send"][r]+count["recv"][r], rounds, "rank %d's ring exchanges (%v)", r, count)
		require.Regexp(t, regexp.MustCompile(fmt.Sprintf(`^rank %d\b`, r)), names[r], "rank %d's thread name", r)
	}
}

// jsString quotes s as a JavaScript string.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// poolResult is window.meshmpiPool of the pool page.
type poolResult struct {
	Phase string `json:"phase"`
	Done  []struct {
		Job    string `json:"job"`
		Rank   int    `json:"rank"`
		Status *int   `json:"status"`
	} `json:"done"`
}

// TestBrowserPoolUI: two volunteer tabs wait in the pool (the jobs page
// counts them), the organizer creates a job of 2 that takes volunteers
// from a program uploaded on the jobs page, and each tab runs one of its
// ranks in a frame of the join page, then waits again.
func TestBrowserPoolUI(t *testing.T) {
	b := browsertest.New(t)
	base := startServe(t)
	vols := make([]context.Context, 2)
	for i := range vols {
		vols[i] = b.Tab(fmt.Sprintf("pool-%d", i), base)
		require.NoError(t, chromedp.Do(vols[i], chromedp.Navigate(base+"/pool?mic=1")))
		poll(t, vols[i], time.Minute, "the pool page waits", `window.meshmpiPool && window.meshmpiPool.phase === "waiting"`)
	}
	checkAxe(t, vols[0], "pool")
	checkNarrow(t, vols[0], "pool")

	org := b.Tab("jobs", base)
	login(t, org, base)
	poll(t, org, time.Minute, "the jobs page counts 2 volunteers", `/waiting in the pool: 2/.test(document.getElementById("pool-count").textContent)`)
	// the program uploaded, as a teacher's own would be
	upload := filepath.Join(t.TempDir(), "mine.wasm")
	require.NoError(t, os.WriteFile(upload, demoWasm, 0o644))
	job := createJob(t, org, 2, "-rounds 3 -pause 10ms", true, upload)
	require.Equal(t, "/api/jobs/"+job.ID+"/rank.wasm", job.Program)

	ranks := map[int]bool{}
	for i, v := range vols {
		poll(t, v, 4*time.Minute, fmt.Sprintf("volunteer %d ran a rank", i), `window.meshmpiPool.done.length === 1`)
		p := eval[poolResult](t, v, `window.meshmpiPool`)
		require.Equal(t, job.ID, p.Done[0].Job)
		require.NotNil(t, p.Done[0].Status)
		require.Equal(t, 0, *p.Done[0].Status, "volunteer %d", i)
		ranks[p.Done[0].Rank] = true
		poll(t, v, time.Minute, fmt.Sprintf("volunteer %d waits again", i), `window.meshmpiPool.phase === "waiting" && /ended with exit status 0/.test(document.getElementById("now").textContent)`)
	}
	require.Equal(t, map[int]bool{0: true, 1: true}, ranks)
	saveShot(t, vols[0], "pool", false)
}

// TestBrowserJobsUIFailure: rank 1 of a job of 2 quits halfway (uidemo
// -fail 1). Its join page says it ended with status 3; the dashboard names
// the failure among its errors and departures, marks the rank's row, and
// its console's "errors only" filter shows the ranks' standard error
// lines only.
func TestBrowserJobsUIFailure(t *testing.T) {
	b := browsertest.New(t)
	base := startServe(t)
	org := b.Tab("jobs", base)
	login(t, org, base)
	job := createJob(t, org, 2, "-rounds 8 -pause 100ms -fail 1", false, "")
	dash := b.Tab("dashboard", base)
	require.NoError(t, chromedp.Do(dash, chromedp.EmulateViewport(1280, 1500), chromedp.Navigate(job.Dashboard)))
	poll(t, dash, time.Minute, "the dashboard connects", `window.meshmpiDashboard && window.meshmpiDashboard.summary().connected`)
	joins := make([]context.Context, 2)
	for i := range joins {
		joins[i] = b.Tab(fmt.Sprintf("join-%d", i), base)
		require.NoError(t, chromedp.Do(joins[i], chromedp.Navigate(job.Invite+"?mic=1")))
	}
	var quitter context.Context
	for i, tab := range joins {
		r, err := browsertest.WaitRun(tab, 4*time.Minute)
		require.NoError(t, err, "join tab %d", i)
		require.NotNil(t, r.Rank, "join tab %d", i)
		require.NotNil(t, r.Status, "join tab %d", i)
		t.Logf("rank %d: exit status %d, stderr %q", *r.Rank, *r.Status, r.Stderr)
		if *r.Rank == 1 {
			require.Equal(t, 3, *r.Status)
			quitter = tab
		}
	}
	require.NotNil(t, quitter)
	require.Contains(t, eval[string](t, quitter, `document.getElementById("note").textContent`), "exit status 3")

	poll(t, dash, 2*time.Minute, "the dashboard names rank 1's departure",
		`/Rank 1\b[^.]*(failed|aborted|left)/.test(document.getElementById("alerts").textContent)`)
	poll(t, dash, time.Minute, "rank 1's row marked", `[...document.querySelectorAll("#ranks tbody tr")].some((r) => r.classList.contains("alert") && r.querySelector("th").textContent === "1")`)
	require.NoError(t, chromedp.Do(dash, chromedp.Click("#console-err")))
	poll(t, dash, time.Minute, "the console's errors only", `(() => { const ls = [...document.querySelectorAll("#console .line")]; return ls.length > 0 && ls.every((l) => l.classList.contains("err")) && ls.some((l) => /will quit halfway/.test(l.textContent)); })()`)
	t.Logf("alerts: %v", eval[dashSummary](t, dash, `window.meshmpiDashboard.summary()`).Alerts)
	checkAxe(t, dash, "dashboard-failure")
	saveShot(t, dash, "dashboard-failure", false)
}

// TestBrowserJobsUIEnd: the organizer ends a running job from the jobs
// list (by the keyboard: the End button asks again first). Its ranks stop
// and their pages say the job ended, the list and the dashboard say so,
// and a later join is refused in words; a browser without WebRTC is told
// it cannot join, and why.
func TestBrowserJobsUIEnd(t *testing.T) {
	b := browsertest.New(t)
	base := startServe(t)
	org := b.Tab("jobs", base)
	login(t, org, base)
	job := createJob(t, org, 2, "-rounds 100000 -pause 100ms", false, "")
	dash := b.Tab("dashboard", base)
	require.NoError(t, chromedp.Do(dash, chromedp.Navigate(job.Dashboard)))

	// no RTCPeerConnection: the page says so and takes no seat
	bare := b.Tab("join-no-webrtc", base)
	require.NoError(t, chromedp.Do(bare, chromedp.Func(func(ctx context.Context, tt *chromedp.Target) error {
		_, err := cdp.Call(ctx, tt, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
			Source: `delete window.RTCPeerConnection; delete window.webkitRTCPeerConnection;`,
		})
		return err
	}), chromedp.Navigate(job.Invite)))
	poll(t, bare, time.Minute, "the page without WebRTC says why", `window.meshmpiRun && window.meshmpiRun.phase === "exited" && /no WebRTC/.test(document.getElementById("note").textContent)`)

	joins := make([]context.Context, 2)
	for i := range joins {
		joins[i] = b.Tab(fmt.Sprintf("join-%d", i), base)
		require.NoError(t, chromedp.Do(joins[i], chromedp.Navigate(job.Invite+"?mic=1")))
	}
	for i, tab := range joins {
		poll(t, tab, 3*time.Minute, fmt.Sprintf("join tab %d runs", i), `!!window.meshmpiRun.times.ready`)
	}
	poll(t, dash, 2*time.Minute, "2 of 2 on the dashboard", `document.getElementById("joined").textContent.startsWith("2 of 2 joined")`)

	// End, then the confirmation, by the keyboard
	end := `#jobs tbody button.danger`
	poll(t, org, time.Minute, "the End button", `!!document.querySelector("`+end+`")`)
	require.NoError(t, chromedp.Do(org, chromedp.Focus(end), chromedp.KeyEvent("\r")))
	poll(t, org, time.Minute, "the End button asks again", `document.querySelector("`+end+`").textContent === "Confirm end"`)
	require.NoError(t, chromedp.Do(org, chromedp.KeyEvent("\r")))
	poll(t, org, time.Minute, "the list says ended", `/ended/.test(document.querySelector("#jobs tbody").textContent)`)

	for i, tab := range joins {
		r, err := browsertest.WaitRun(tab, 3*time.Minute)
		require.NoError(t, err, "join tab %d", i)
		require.NotNil(t, r.Status)
		require.NotEqual(t, 0, *r.Status, "join tab %d ran on after the end", i)
		poll(t, tab, time.Minute, fmt.Sprintf("join tab %d says the job ended", i), `/The job has ended/.test(document.getElementById("note").textContent)`)
	}
	poll(t, dash, time.Minute, "the dashboard says the job ended", `/was ended/.test(document.getElementById("alerts").textContent) && /ended/.test(document.getElementById("state").textContent)`)

	late := b.Tab("join-late", base)
	require.NoError(t, chromedp.Do(late, chromedp.Navigate(job.Invite)))
	poll(t, late, time.Minute, "a join after the end is refused in words", `window.meshmpiRun && window.meshmpiRun.phase === "exited" && /The job has ended/.test(document.getElementById("note").textContent)`)
	checkAxe(t, late, "join-ended")
}
