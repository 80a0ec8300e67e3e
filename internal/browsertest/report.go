//go:build !js && !wasip1

package browsertest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// ReporterPrefix is the path under which a server serves a Reporter,
// on the origin of the run pages it frames.
const ReporterPrefix = "/browsertest/"

// maxReport bounds one report: a run page's state with its console.
const maxReport = 16 << 20

// Reporter lets a browser that no driver controls tell the test how its
// run page ended. Its frame page (Watch) shows the run page in a
// same-origin iframe; run.js posts every change of its state to a
// framing parent, and the frame page sends each new phase, and every
// state once the rank has exited, to the Reporter with fetch, together
// with the run page's uncaught errors. So the test learns of the end
// from the page itself, as WaitRun does over CDP, with no polling.
//
// Serve it at ReporterPrefix on the run page's server.
type Reporter struct {
	mu      sync.Mutex
	watches map[string]*Watch
}

// NewReporter returns a Reporter that watches no page yet.
func NewReporter() *Reporter { return &Reporter{watches: map[string]*Watch{}} }

// Watch is one run page that a Reporter's frame page shows.
type Watch struct {
	// URL is the frame page to open: the Reporter's page on the run
	// page's origin.
	URL string

	r      *Reporter
	id     string
	mu     sync.Mutex
	seq    int // of the last report taken
	last   RunResult
	errs   []string
	exited chan struct{}
	closed bool
}

// Watch registers the run page at runURL (an absolute http(s) address,
// RunURL) and returns its watch. Close it when done.
func (r *Reporter) Watch(runURL string) (*Watch, error) {
	u, err := url.Parse(runURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("browsertest: %q is not an http(s) address", runURL)
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	id := hex.EncodeToString(b)
	frame := url.URL{Scheme: u.Scheme, Host: u.Host, Path: ReporterPrefix + "frame/" + id,
		RawQuery: url.Values{"src": {u.RequestURI()}}.Encode()}
	w := &Watch{URL: frame.String(), r: r, id: id, exited: make(chan struct{})}
	r.mu.Lock()
	r.watches[id] = w
	r.mu.Unlock()
	return w, nil
}

// Exited is closed once the page has reported that its rank exited.
func (w *Watch) Exited() <-chan struct{} { return w.exited }

// Last is the last state the page reported.
func (w *Watch) Last() RunResult {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

// Errors are the uncaught errors and rejections the run page reported.
func (w *Watch) Errors() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.errs...)
}

// Close forgets the page: its later reports are refused.
func (w *Watch) Close() {
	w.r.mu.Lock()
	delete(w.r.watches, w.id)
	w.r.mu.Unlock()
}

// report is what the frame page posts.
type report struct {
	Seq   int        `json:"seq"` // fetches may arrive out of order
	State *RunResult `json:"state"`
	Error string     `json:"error"`
}

func (w *Watch) take(rep report) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if rep.Error != "" && len(w.errs) < 20 {
		w.errs = append(w.errs, rep.Error)
	}
	if rep.State == nil || rep.Seq <= w.seq {
		return
	}
	w.seq, w.last = rep.Seq, *rep.State
	if rep.State.Phase == "exited" && !w.closed {
		w.closed = true
		close(w.exited)
	}
}

// ServeHTTP serves the frame page (GET ReporterPrefix+"frame/ID") and
// takes reports (POST ReporterPrefix+"report/ID").
func (r *Reporter) ServeHTTP(rw http.ResponseWriter, req *http.Request) {
	rest, _ := strings.CutPrefix(req.URL.Path, ReporterPrefix)
	kind, id, _ := strings.Cut(rest, "/")
	r.mu.Lock()
	w := r.watches[id]
	r.mu.Unlock()
	switch {
	case w == nil:
		http.NotFound(rw, req)
	case kind == "frame" && req.Method == http.MethodGet:
		src := req.URL.Query().Get("src")
		if !strings.HasPrefix(src, "/") || strings.HasPrefix(src, "//") {
			http.Error(rw, "src must be a path of this origin", http.StatusBadRequest)
			return
		}
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		rw.Header().Set("Cache-Control", "no-store")
		if err := framePage.Execute(rw, map[string]string{"Src": src, "Report": ReporterPrefix + "report/" + id}); err != nil {
			http.Error(rw, err.Error(), http.StatusInternalServerError)
		}
	case kind == "report" && req.Method == http.MethodPost:
		var rep report
		if err := json.NewDecoder(http.MaxBytesReader(rw, req.Body, maxReport)).Decode(&rep); err != nil {
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		w.take(rep)
		rw.WriteHeader(http.StatusNoContent)
	default:
		http.Error(rw, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// framePage frames the run page and forwards what it posts. A report
// goes out for each new phase (so a test that gives up can say where
// the page stood) and for every state from the exit on (the last words
// of the console may follow the exit). The iframe's error events are
// forwarded too: a run page that fails before run.js loads reports
// nothing else.
var framePage = template.Must(template.New("frame").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>meshmpi rank (framed)</title>
<style>html,body{margin:0;height:100%}iframe{border:0;width:100%;height:100%}</style></head>
<body><iframe id="run" allow="microphone; camera"></iframe>
<script>
"use strict";
const reportURL = {{.Report}};
const frame = document.getElementById("run");
let seq = 0, phase = "";
const send = (body) => {
  body.seq = ++seq;
  fetch(reportURL, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) })
    .catch(() => { /* the test has gone */ });
};
addEventListener("message", (e) => {
  const s = e.data;
  if (e.origin !== location.origin || e.source !== frame.contentWindow || !s || s.meshmpi !== "run") return;
  if (s.phase === phase && s.phase !== "exited") return;
  phase = s.phase;
  send({ state: s });
});
frame.addEventListener("load", () => {
  const w = frame.contentWindow;
  w.addEventListener("error", (e) => send({ error: String(e.message || e.error) + " at " + e.filename + ":" + e.lineno }));
  w.addEventListener("unhandledrejection", (e) => send({ error: "unhandled rejection: " + String(e.reason) }));
});
frame.src = {{.Src}};
</script></body></html>
`))
