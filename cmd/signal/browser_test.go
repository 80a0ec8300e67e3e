//go:build !js && !wasip1

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/internal/browsertest"
	"github.com/meshmpi/meshmpi/internal/browsertest/rankcheck"
	"github.com/meshmpi/meshmpi/signaling"
	"github.com/meshmpi/meshmpi/web"
)

// The browser programs are built once per test binary: the examples and
// the test ranks under testdata.
var (
	programsOnce sync.Once
	programs     map[string][]byte
	programsExec []byte
	programsErr  error
)

func browserPrograms(t testing.TB) (map[string][]byte, []byte) {
	t.Helper()
	programsOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
		defer cancel()
		programs = map[string][]byte{}
		for _, dir := range []string{"../../examples", "testdata"} {
			o, err := webOptions(ctx, webConfig{buildDir: dir, goCmd: "go"}, nil)
			if err != nil {
				programsErr = err
				return
			}
			for k, v := range o.Programs {
				programs[k] = v
			}
			programsExec = o.WasmExec
		}
	})
	require.NoError(t, programsErr)
	return programs, programsExec
}

// uiServer is cmd/signal's whole handler (signaling, UI, lab) on a
// loopback port.
type uiServer struct {
	url    string // http://127.0.0.1:port
	ws     string // ws://127.0.0.1:port/ws
	secret []byte
}

func startUI(t testing.TB) *uiServer {
	t.Helper()
	progs, exec := browserPrograms(t)
	sec := []byte(secret)
	srv, err := signaling.NewServer(signaling.Config{Secret: sec})
	require.NoError(t, err)
	ui, err := web.Handler(web.Options{WasmExec: exec, Programs: progs, Lab: &web.LabConfig{Secret: sec}})
	require.NoError(t, err)
	hs := httptest.NewServer(newHandler(srv, newRegistry(srv), ui))
	t.Cleanup(func() {
		_ = srv.Close()
		hs.Close()
	})
	return &uiServer{url: hs.URL, ws: "ws" + strings.TrimPrefix(hs.URL, "http") + "/ws", secret: sec}
}

func (s *uiServer) token(t testing.TB, job string, size int) string {
	t.Helper()
	tok, err := signaling.Mint(s.secret, signaling.Claims{Job: job, Size: size, Expires: time.Now().Add(time.Hour).Unix(),
		Settings: map[string]string{meshmpi.SettingNetwork: "loopback"}})
	require.NoError(t, err)
	return tok
}

// runResult is window.meshmpiRun of the run page.
type runResult struct {
	Phase  string             `json:"phase"`
	Rank   *int               `json:"rank"`
	Size   *int               `json:"size"`
	Status *int               `json:"status"`
	Error  *string            `json:"error"`
	Stdout string             `json:"stdout"`
	Stderr string             `json:"stderr"`
	Times  map[string]float64 `json:"times"`
}

// waitRun waits until the run page in ctx has exited and returns its state.
func waitRun(t testing.TB, ctx context.Context) runResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](`window.meshmpiRun && window.meshmpiRun.phase === "exited"`,
		chromedp.WithPollingInterval(100*time.Millisecond)))
	require.NoError(t, err, "the run page did not finish")
	r, err := chromedp.Run(ctx, chromedp.Evaluate[runResult](`window.meshmpiRun`))
	require.NoError(t, err)
	return r
}

func runURL(base string, q map[string]string, args ...string) string {
	v := url.Values{}
	for k, x := range q {
		v.Set(k, x)
	}
	for _, a := range args {
		v.Add("arg", a)
	}
	return base + "/run?" + v.Encode()
}

// TestBrowserMixedJob runs one job of 2 browser ranks (run pages in two
// tabs, ranks 0 and 2) and 2 native ranks (goroutines of this test, ranks
// 1 and 3): every pair exchanges small and large messages, then a subset
// of collectives runs; each rank checks its results against a sequential
// computation (rankcheck).
func TestBrowserMixedJob(t *testing.T) {
	b := browsertest.New(t)
	s := startUI(t)
	const job, n = "mixed", 4
	tok := s.token(t, job, n)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	native := make(chan error, 2)
	for _, r := range []int{1, 3} {
		go func() {
			native <- func() error {
				sess, err := meshmpi.Join(ctx, meshmpi.JobSpec{Signal: s.ws, Job: job, Token: tok, Rank: r})
				if err != nil {
					return err
				}
				if _, err := rankcheck.Run(sess.World()); err != nil {
					sess.Abort(err)
					return err
				}
				return sess.Finalize()
			}()
		}()
	}
	tabs := map[int]context.Context{}
	for _, r := range []int{0, 2} {
		tab := b.Tab(fmt.Sprintf("rank%d", r), s.url)
		tabs[r] = tab
		require.NoError(t, chromedp.Do(tab, chromedp.Navigate(runURL(s.url, map[string]string{
			"job": job, "token": tok, "rank": fmt.Sprint(r), "example": "checkrank"}))))
	}
	for r, tab := range tabs {
		res := waitRun(t, tab)
		t.Logf("browser rank %d: status %v, ready %.0f ms after page load\n%s%s", r, deref(res.Status), res.Times["ready"], res.Stdout, res.Stderr)
		require.NotNil(t, res.Status)
		require.Equal(t, 0, *res.Status, "browser rank %d failed: %s", r, res.Stderr)
		require.Contains(t, res.Stdout, fmt.Sprintf("rankcheck ok: rank %d of %d", r, n))
	}
	for range 2 {
		require.NoError(t, <-native)
	}
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

// labResult is window.meshmpiLab of the lab page.
type labResult struct {
	Job   string      `json:"job"`
	Done  bool        `json:"done"`
	Error *string     `json:"error"`
	Ranks []runResult `json:"ranks"`
}

// TestBrowserLab opens the lab page, which gets a job of 4 from the
// server and runs the pi example in 4 iframes by itself.
func TestBrowserLab(t *testing.T) {
	b := browsertest.New(t)
	s := startUI(t)
	tab := b.Tab("lab", s.url)
	require.NoError(t, chromedp.Do(tab, chromedp.Navigate(s.url+"/lab?k=4&example=pi&args=-steps+200000&start=1")))
	ctx, cancel := context.WithTimeout(tab, 3*time.Minute)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](`window.meshmpiLab && (window.meshmpiLab.done || window.meshmpiLab.error)`,
		chromedp.WithPollingInterval(100*time.Millisecond)))
	require.NoError(t, err, "the lab job did not finish")
	lab, err := chromedp.Run(ctx, chromedp.Evaluate[labResult](`window.meshmpiLab`))
	require.NoError(t, err)
	require.Nil(t, lab.Error)
	require.Len(t, lab.Ranks, 4)
	for i, r := range lab.Ranks {
		require.NotNil(t, r.Status, "rank %d", i)
		require.Equal(t, 0, *r.Status, "rank %d: %s", i, r.Stderr)
	}
	require.Contains(t, lab.Ranks[0].Stdout, "(200000 steps on 4 ranks")
	t.Logf("lab job %s: %s", lab.Job, strings.TrimSpace(lab.Ranks[0].Stdout))
}

// TestLabJobsAuth: the lab endpoint answers only JSON requests from this
// host's own pages, and its tokens are scoped to a job of the asked size.
func TestLabJobsAuth(t *testing.T) {
	sec := []byte(secret)
	ui, err := web.Handler(web.Options{Lab: &web.LabConfig{Secret: sec, MaxSize: 8}})
	require.NoError(t, err)
	post := func(remote, origin, ct, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:9/lab/jobs", strings.NewReader(body))
		r.RemoteAddr = remote
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		r.Header.Set("Content-Type", ct)
		w := httptest.NewRecorder()
		ui.ServeHTTP(w, r)
		return w
	}
	const js = "application/json"
	for _, c := range []struct {
		name                     string
		remote, origin, ct, body string
		code                     int
	}{
		{"loopback same origin", "127.0.0.1:5000", "http://127.0.0.1:9", js, `{"size":3}`, http.StatusOK},
		{"no origin", "[::1]:5000", "", js, `{"size":3}`, http.StatusOK},
		{"remote client", "10.0.0.7:5000", "", js, `{"size":3}`, http.StatusForbidden},
		{"foreign page", "127.0.0.1:5000", "http://evil.example", js, `{"size":3}`, http.StatusForbidden},
		{"form post", "127.0.0.1:5000", "", "application/x-www-form-urlencoded", `size=3`, http.StatusUnsupportedMediaType},
		{"too large", "127.0.0.1:5000", "", js, `{"size":9}`, http.StatusBadRequest},
		{"empty", "127.0.0.1:5000", "", js, `{"size":0}`, http.StatusBadRequest},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := post(c.remote, c.origin, c.ct, c.body)
			require.Equal(t, c.code, w.Code, w.Body.String())
			if c.code != http.StatusOK {
				return
			}
			var j web.LabJob
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &j))
			cl, err := signaling.VerifyToken(sec, j.Token, j.Job, time.Now())
			require.NoError(t, err)
			require.Equal(t, j.Job, cl.Job)
			require.Equal(t, 3, cl.Size)
		})
	}
	// without -lab there is no endpoint
	plain, err := web.Handler(web.Options{})
	require.NoError(t, err)
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "/lab/jobs", strings.NewReader(`{"size":2}`))
	r.RemoteAddr = "127.0.0.1:1"
	plain.ServeHTTP(w, r)
	require.NotEqual(t, http.StatusOK, w.Code)
}

// TestServeUI: serve's flags load prebuilt programs and wasm_exec.js, and
// the handler serves pages, the module and gzip-encoded programs.
func TestServeUI(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tiny.wasm"), []byte("\x00asm\x01\x00\x00\x00"), 0o644))
	exec := filepath.Join(dir, "wasm_exec.js")
	require.NoError(t, os.WriteFile(exec, []byte("// exec"), 0o644))
	sc, err := parseServe([]string{"-secret", secret, "-wasm", dir, "-wasm-exec", exec, "-lab"}, io.Discard)
	require.NoError(t, err)
	o, err := webOptions(context.Background(), sc.web, sc.sig.Secret)
	require.NoError(t, err)
	require.NotNil(t, o.Lab)
	ui, err := web.Handler(o)
	require.NoError(t, err)
	get := func(path, enc string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		if enc != "" {
			r.Header.Set("Accept-Encoding", enc)
		}
		w := httptest.NewRecorder()
		ui.ServeHTTP(w, r)
		return w
	}
	for path, ct := range map[string]string{
		"/run": "text/html", "/lab": "text/html", "/web/run.js": "text/javascript", "/web/style.css": "text/css",
		"/js/meshmpi.js": "text/javascript", "/wasm_exec.js": "text/javascript", "/wasm/tiny.wasm": "application/wasm",
	} {
		w := get(path, "")
		require.Equal(t, http.StatusOK, w.Code, path)
		require.True(t, strings.HasPrefix(w.Header().Get("Content-Type"), ct), "%s: %s", path, w.Header().Get("Content-Type"))
	}
	require.Equal(t, "\x00asm\x01\x00\x00\x00", get("/wasm/tiny.wasm", "").Body.String())
	require.Equal(t, "gzip", get("/wasm/tiny.wasm", "br, gzip").Header().Get("Content-Encoding"))
	require.Equal(t, http.StatusNotFound, get("/wasm/other.wasm", "").Code)
	require.Equal(t, http.StatusNotFound, get("/web/run.html", "").Code)

	_, err = parseServe([]string{"-secret", secret, "-wasm", t.TempDir()}, io.Discard)
	require.NoError(t, err)
	_, err = webOptions(context.Background(), webConfig{wasmDir: t.TempDir()}, nil)
	require.ErrorContains(t, err, "no .wasm files")
}

// BenchmarkBrowserLink measures an 8-byte ping-pong round trip and the
// one-way bandwidth of 1 MiB messages between a browser rank (rank 0, a
// run page) and rank 1, native (a goroutine of this test) or another
// browser tab. The rank times itself over a fixed count, so run it once:
//
//	MESHMPI_BROWSER_TESTS=require go test -run '^$' -bench BrowserLink -benchtime 1x ./cmd/signal
func BenchmarkBrowserLink(b *testing.B) {
	for _, peer := range []string{"native", "browser"} {
		b.Run("browser-"+peer, func(b *testing.B) {
			for range b.N {
				f := browserBench(b, peer)
				b.ReportMetric(f.rtt, "µs/roundtrip")
				b.ReportMetric(f.mbps, "MB/s")
				b.ReportMetric(f.ready, "ms-to-ready")
			}
		})
	}
}

type benchFigures struct{ rtt, mbps, ready float64 }

func browserBench(b *testing.B, peer string) benchFigures {
	br := browsertest.New(b)
	s := startUI(b)
	job := "bench-" + peer
	tok := s.token(b, job, 2)
	args := map[string]string{"job": job, "token": tok, "example": "benchrank"}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	other := make(chan error, 1)
	var peerTab context.Context
	switch peer {
	case "native":
		go func() {
			other <- func() error {
				sess, err := meshmpi.Join(ctx, meshmpi.JobSpec{Signal: s.ws, Job: job, Token: tok, Rank: 1})
				if err != nil {
					return err
				}
				if _, err := rankcheck.Bench(sess.World(), 1000, 32); err != nil {
					sess.Abort(err)
					return err
				}
				return sess.Finalize()
			}()
		}()
	default:
		peerTab = br.Tab("rank1", s.url)
		args["rank"] = "1"
		require.NoError(b, chromedp.Do(peerTab, chromedp.Navigate(runURL(s.url, args))))
	}
	tab := br.Tab("rank0", s.url)
	args["rank"] = "0"
	require.NoError(b, chromedp.Do(tab, chromedp.Navigate(runURL(s.url, args))))
	res := waitRun(b, tab)
	require.NotNil(b, res.Status)
	require.Equal(b, 0, *res.Status, res.Stderr)
	if peerTab != nil {
		r1 := waitRun(b, peerTab)
		require.Equal(b, 0, deref(r1.Status), r1.Stderr)
	} else {
		require.NoError(b, <-other)
	}
	var f benchFigures
	line := res.Stdout[strings.Index(res.Stdout, "bench "):]
	_, err := fmt.Sscanf(line, "bench roundtrip_us=%g bandwidth_MBps=%g", &f.rtt, &f.mbps)
	require.NoError(b, err, res.Stdout)
	f.ready = res.Times["ready"]
	return f
}
