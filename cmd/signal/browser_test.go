//go:build !js && !wasip1

package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/internal/browsertest"
	"github.com/meshmpi/meshmpi/signaling"
	"github.com/meshmpi/meshmpi/web"
)

// The browser programs, the examples, are built once per test binary.
// (The mixed-job test and the cross-target benchmarks are in
// internal/mixedjob.)
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
		for _, dir := range []string{"../../examples"} {
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
	url string // http://127.0.0.1:port
}

func startUI(t testing.TB) *uiServer {
	t.Helper()
	progs, exec := browserPrograms(t)
	sec := []byte(secret)
	srv, err := signaling.NewServer(signaling.Config{Secret: sec})
	require.NoError(t, err)
	ui, err := web.Handler(web.Options{WasmExec: exec, Programs: progs, Lab: &web.LabConfig{Secret: sec}})
	require.NoError(t, err)
	hs := httptest.NewServer(newHandler(srv, newRegistry(srv, nil, nil), ui, nil))
	t.Cleanup(func() {
		_ = srv.Close()
		hs.Close()
	})
	return &uiServer{url: hs.URL}
}

// labResult is window.meshmpiLab of the lab page.
type labResult struct {
	Job   string                  `json:"job"`
	Done  bool                    `json:"done"`
	Error *string                 `json:"error"`
	Ranks []browsertest.RunResult `json:"ranks"`
}

// runLab opens the lab page with query in a new tab and waits until its
// job of k ranks ended, every rank with status 0; it returns the page's
// result.
func runLab(t *testing.T, b *browsertest.Browser, s *uiServer, name, query string, k int) labResult {
	t.Helper()
	tab := b.Tab(name, s.url)
	require.NoError(t, chromedp.Do(tab, chromedp.Navigate(s.url+"/lab?"+query)))
	ctx, cancel := context.WithTimeout(tab, 3*time.Minute)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](`window.meshmpiLab && (window.meshmpiLab.done || window.meshmpiLab.error)`,
		chromedp.WithPollingInterval(100*time.Millisecond)))
	require.NoError(t, err, "the lab job did not finish")
	lab, err := chromedp.Run(ctx, chromedp.Evaluate[labResult](`window.meshmpiLab`))
	require.NoError(t, err)
	require.Nil(t, lab.Error)
	require.Len(t, lab.Ranks, k)
	for i, r := range lab.Ranks {
		require.NotNil(t, r.Status, "rank %d", i)
		require.Equal(t, 0, *r.Status, "rank %d: %s", i, r.Stderr)
	}
	return lab
}

// TestBrowserLab opens the lab page, which gets a job of 4 from the
// server and runs the pi example in 4 iframes by itself.
func TestBrowserLab(t *testing.T) {
	lab := runLab(t, browsertest.New(t), startUI(t), "lab", "k=4&example=pi&args=-steps+200000&start=1", 4)
	require.Contains(t, lab.Ranks[0].Stdout, "(200000 steps on 4 ranks")
	t.Logf("lab job %s: %s", lab.Job, strings.TrimSpace(lab.Ranks[0].Stdout))
}

// TestBrowserLabCourse runs the course examples in the lab page, a tab's
// iframe a rank, each on 3 ranks: every rank exits 0 and rank 0 checked
// its answer against a sequential run ("ok").
func TestBrowserLabCourse(t *testing.T) {
	b := browsertest.New(t)
	s := startUI(t)
	for _, ex := range []struct{ name, args string }{
		{"matvec", "-size+50+-iters+10"},
		{"oddeven", "-size+500"},
		{"mandelbrot", "-width+120+-height+60+-iter+300"},
		{"jacobi", "-size+20+-tol+1e-2"},
		{"kmeans", "-points+3000+-k+4"},
	} {
		t.Run(ex.name, func(t *testing.T) {
			lab := runLab(t, b, s, "lab-"+ex.name, "k=3&example="+ex.name+"&args="+ex.args+"&start=1", 3)
			require.Contains(t, lab.Ranks[0].Stdout, "\nok\n")
			t.Logf("%s in the lab: %s", ex.name, strings.TrimSpace(lab.Ranks[0].Stdout))
		})
	}
}

// TestLabJobsAuth: the lab endpoint answers only JSON requests from this
// host's own pages, by one of its own names (item 11 of issue 14: a page
// of a name rebound to 127.0.0.1 got a token), and its tokens are the
// seat tokens of a job of the asked size (item 9).
func TestLabJobsAuth(t *testing.T) {
	sec := []byte(secret)
	ui, err := web.Handler(web.Options{Lab: &web.LabConfig{Secret: sec, MaxSize: 8, Hosts: []string{"lab.example"}}})
	require.NoError(t, err)
	post := func(host, remote, origin, ct, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "http://"+host+"/lab/jobs", strings.NewReader(body))
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
		name                           string
		host, remote, origin, ct, body string
		code                           int
	}{
		{"loopback same origin", "127.0.0.1:9", "127.0.0.1:5000", "http://127.0.0.1:9", js, `{"size":3}`, http.StatusOK},
		{"no origin", "127.0.0.1:9", "[::1]:5000", "", js, `{"size":3}`, http.StatusOK},
		{"localhost", "localhost:9", "127.0.0.1:5000", "http://localhost:9", js, `{"size":3}`, http.StatusOK},
		{"ipv6", "[::1]:9", "[::1]:5000", "http://[::1]:9", js, `{"size":3}`, http.StatusOK},
		{"public name", "lab.example:9", "127.0.0.1:5000", "http://lab.example:9", js, `{"size":3}`, http.StatusOK},
		{"dns rebinding", "evil.example:18080", "127.0.0.1:5000", "http://evil.example:18080", js, `{"size":3}`, http.StatusForbidden},
		{"rebinding without origin", "evil.example:18080", "127.0.0.1:5000", "", js, `{"size":3}`, http.StatusForbidden},
		{"remote client", "127.0.0.1:9", "10.0.0.7:5000", "", js, `{"size":3}`, http.StatusForbidden},
		{"foreign page", "127.0.0.1:9", "127.0.0.1:5000", "http://evil.example", js, `{"size":3}`, http.StatusForbidden},
		{"form post", "127.0.0.1:9", "127.0.0.1:5000", "", "application/x-www-form-urlencoded", `size=3`, http.StatusUnsupportedMediaType},
		{"too large", "127.0.0.1:9", "127.0.0.1:5000", "", js, `{"size":9}`, http.StatusBadRequest},
		{"empty", "127.0.0.1:9", "127.0.0.1:5000", "", js, `{"size":0}`, http.StatusBadRequest},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := post(c.host, c.remote, c.origin, c.ct, c.body)
			require.Equal(t, c.code, w.Code, w.Body.String())
			if c.code != http.StatusOK {
				return
			}
			var j web.LabJob
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &j))
			require.Len(t, j.Tokens, 3)
			for r, tok := range j.Tokens {
				cl, err := signaling.VerifyToken(sec, tok, j.Job, time.Now())
				require.NoError(t, err)
				require.Equal(t, j.Job, cl.Job)
				require.Equal(t, 3, cl.Size)
				require.NotNil(t, cl.Seat)
				require.Equal(t, r, *cl.Seat)
			}
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

// An example the server does not have: the lab page says so in words,
// naming the ones it has, and starts no job; a run page for it says there
// is no such program (not the wasm loader's words).
func TestBrowserLabUnknownExample(t *testing.T) {
	b := browsertest.New(t)
	s := startUI(t)
	tab := b.Tab("lab-unknown", s.url)
	require.NoError(t, chromedp.Do(tab, chromedp.Navigate(s.url+"/lab?k=2&example=nosuch&start=1")))
	ctx, cancel := context.WithTimeout(tab, time.Minute)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](`window.meshmpiLab && window.meshmpiLab.error !== null`,
		chromedp.WithPollingInterval(100*time.Millisecond)))
	require.NoError(t, err)
	lab, err := chromedp.Run(ctx, chromedp.Evaluate[labResult](`window.meshmpiLab`))
	require.NoError(t, err)
	require.NotNil(t, lab.Error)
	require.Contains(t, *lab.Error, `no example named "nosuch" on this server; it has `)
	require.Contains(t, *lab.Error, "pi")
	require.Empty(t, lab.Job)
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("job").textContent`))
	require.NoError(t, err)
	require.Contains(t, shown, `no example named "nosuch"`)
}
