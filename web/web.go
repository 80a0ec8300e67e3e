//go:build !js

// Package web is meshmpi's browser UI, served by cmd/signal beside the
// signaling endpoint:
//
//	GET  /run?job=J&token=T[&rank=R][&example=E][&arg=A]…[&mic=1]
//	                      the run page: one rank of job J in this page, with
//	                      its rank, the job's state and its console
//	GET  /lab[?k=4&example=E&args=…&start=1]
//	                      the lab page: a new job of k ranks, each a run page
//	                      in an iframe of this tab
//	POST /lab/jobs        {"size": k} → {"job", "tokens"}: the seat tokens of
//	                      a new job, tokens[r] for rank r, for the lab page
//	                      (only when Options.Lab is set)
//	GET  /js/meshmpi.js   the ES module that boots a rank (package js)
//	GET  /wasm_exec.js    the Go toolchain's JavaScript support for GOOS=js
//	GET  /wasm/E.wasm     program E built for GOOS=js GOARCH=wasm
//	GET  /programs        the names of the programs, a JSON array (the lab
//	                      page offers them, and names an unknown one so)
//
// With Options.Jobs, the organizer's pages and their API (see Jobs):
//
//	GET  /login, POST /login, POST /logout, GET /api/session
//	                      the organizer's login: a session cookie (HttpOnly,
//	                      SameSite=Strict, Secure over TLS) and a CSRF token
//	                      every state-changing request carries in
//	                      X-CSRF-Token, with a same-origin Origin
//	GET  /jobs            the jobs page; GET /api/jobs lists the jobs and the
//	                      volunteers waiting, POST /api/jobs creates one
//	                      (multipart form: example= or rank_wasm=@file,
//	                      wasi_wasm=@file, size, max, ice, minutes, pool,
//	                      args), POST /api/jobs/ID/end ends it,
//	                      GET /api/jobs/ID/qr.png is its invite's QR code
//	GET  /join/INVITE     the join page; POST /api/join/INVITE hands the tab a
//	                      seat token of its own (one rank), or says why not
//	                      (job-full, job-ended, expired, unknown-invite);
//	                      GET /api/join/INVITE/status is the job's progress
//	GET  /jobs/ID/dashboard  the dashboard (the organizer, or ?key=VIEWKEY);
//	                      GET /api/jobs/ID/view, /watch (a websocket of the
//	                      job's events) and /trace.json (Chrome trace-event
//	                      format)
//	GET  /pool            the volunteer page; POST /api/pool waits (long
//	                      poll) for a pool job that needs a rank
//	GET  /api/jobs/ID/rank.wasm, /wasi.wasm  a job's uploaded programs
//
// The pages are static files embedded in the binary; the rank programs
// and wasm_exec.js come from the server (see cmd/signal's -wasm and
// -build-examples flags), and must come from one Go toolchain: a .wasm
// only runs with the wasm_exec.js of the release that built it.
package web

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	meshjs "github.com/meshmpi/meshmpi/js"
	"github.com/meshmpi/meshmpi/signaling"
)

//go:embed *.html *.js *.css vendor/d3.min.js vendor/LICENSE-d3
var files embed.FS

// Options configures Handler.
type Options struct {
	// WasmExec is the wasm_exec.js of the toolchain that built Programs.
	WasmExec []byte
	// Programs maps a program name (the example= of the run page) to its
	// GOOS=js GOARCH=wasm binary.
	Programs map[string][]byte
	// Lab, if set, enables POST /lab/jobs.
	Lab *LabConfig
	// Jobs, if set, enables the organizer's jobs page, invites, the join,
	// dashboard and pool pages and their API (see Jobs), for jobs on
	// Server, which it then needs.
	Jobs   *Jobs
	Server *signaling.Server
}

// LabConfig lets the lab page start jobs without a token of its own:
// POST /lab/jobs mints the seat tokens of a fresh job (one per rank, each
// admitting its rank only). Only clients on the loopback interface may
// ask, only by a name of this server, and only from a page of this server
// (a cross-site page cannot make a JSON POST without the server's
// consent), so a server that listens publicly mints nothing for
// strangers; every other rule (token scope, job size, server limits)
// stays as it is.
//
// The request's Host must name this server: an IP address, "localhost" or
// one of Hosts. A page of a name that resolves to the loopback address
// (DNS rebinding: evil.example first resolves to the attacker, then to
// 127.0.0.1) is same-origin with its own requests, so Origin alone would
// let it in; its Host is its own name, which is not this server's.
type LabConfig struct {
	Secret   []byte            // the server's token secret
	MaxSize  int               // largest lab job; 0 means 64
	TTL      time.Duration     // token lifetime; 0 means one hour
	Settings map[string]string // job settings; nil means {"net": "loopback"}
	Hosts    []string          // names this server is reached by, besides IP addresses and localhost
}

// program is a wasm module the server offers, gzipped on its first
// gzip request: compressing every program at start made each server (and
// each test that starts one) pay seconds for modules nobody fetched.
type program struct {
	raw []byte
	gz  func() []byte // nil when gzip failed: the raw bytes go instead
}

// gzipped memoizes programs' gzip by content across Handlers of one
// process (a test binary starts many), bounded by gzippedMax.
var gzipped struct {
	sync.Mutex
	by map[[sha256.Size]byte][]byte
}

const gzippedMax = 64

// newProgram returns b as a program whose gzip is made once, when first
// asked for.
func newProgram(b []byte) program {
	return program{raw: b, gz: sync.OnceValue(func() []byte {
		sum := sha256.Sum256(b)
		gzipped.Lock()
		gz, ok := gzipped.by[sum]
		gzipped.Unlock()
		if ok {
			return gz
		}
		gz, err := gzipBytes(b, gzip.BestCompression)
		if err != nil {
			return nil
		}
		gzipped.Lock()
		if gzipped.by == nil || len(gzipped.by) >= gzippedMax {
			gzipped.by = map[[sha256.Size]byte][]byte{}
		}
		gzipped.by[sum] = gz
		gzipped.Unlock()
		return gz
	})}
}

// Handler serves the pages, the module, wasm_exec.js and the programs.
func Handler(o Options) (http.Handler, error) {
	progs := map[string]program{}
	for name, b := range o.Programs {
		if !validName(name) {
			return nil, fmt.Errorf("web: program name %q: want letters, digits, - or _", name)
		}
		progs[name] = newProgram(b)
	}
	mux := http.NewServeMux()
	page := func(name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { serveFile(w, r, name) }
	}
	mux.HandleFunc("GET /run", page("run.html"))
	mux.HandleFunc("GET /lab", page("lab.html"))
	mux.HandleFunc("GET /web/{file}", func(w http.ResponseWriter, r *http.Request) {
		if f := r.PathValue("file"); strings.HasSuffix(f, ".html") {
			http.NotFound(w, r)
		} else {
			serveFile(w, r, f)
		}
	})
	mux.HandleFunc("GET /web/vendor/{file}", func(w http.ResponseWriter, r *http.Request) {
		serveFile(w, r, "vendor/"+r.PathValue("file"))
	})
	mux.HandleFunc("GET /js/meshmpi.js", func(w http.ResponseWriter, _ *http.Request) {
		serveBytes(w, "text/javascript; charset=utf-8", meshjs.Module)
	})
	mux.HandleFunc("GET /wasm_exec.js", func(w http.ResponseWriter, r *http.Request) {
		if o.WasmExec == nil {
			http.Error(w, "this server has no wasm_exec.js (see signal serve -wasm-exec)", http.StatusNotFound)
			return
		}
		serveBytes(w, "text/javascript; charset=utf-8", o.WasmExec)
	})
	names := make([]string, 0, len(progs))
	for name := range progs {
		names = append(names, name)
	}
	slices.Sort(names)
	list, err := json.Marshal(names)
	if err != nil {
		return nil, fmt.Errorf("web: list programs: %w", err)
	}
	mux.HandleFunc("GET /programs", func(w http.ResponseWriter, _ *http.Request) {
		serveBytes(w, "application/json", list)
	})
	mux.HandleFunc("GET /wasm/{file}", func(w http.ResponseWriter, r *http.Request) {
		name, ok := strings.CutSuffix(r.PathValue("file"), ".wasm")
		p, found := progs[name]
		if !ok || !found {
			http.Error(w, "no such program", http.StatusNotFound)
			return
		}
		w.Header().Set("Vary", "Accept-Encoding")
		if acceptsGzip(r) {
			if gz := p.gz(); gz != nil {
				w.Header().Set("Content-Encoding", "gzip")
				serveBytes(w, "application/wasm", gz)
				return
			}
		}
		serveBytes(w, "application/wasm", p.raw)
	})
	if o.Lab != nil {
		lab, err := newLab(*o.Lab)
		if err != nil {
			return nil, err
		}
		mux.Handle("POST /lab/jobs", lab)
	}
	if o.Jobs != nil {
		if err := o.Jobs.bind(o.Server, slices.Collect(maps.Keys(progs))); err != nil {
			return nil, err
		}
		o.Jobs.routes(mux)
	}
	return mux, nil
}

// gzipBytes returns b gzipped at level.
func gzipBytes(b []byte, level int) ([]byte, error) {
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, level)
	if err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	if _, err := zw.Write(b); err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	return gz.Bytes(), nil
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func acceptsGzip(r *http.Request) bool {
	for _, e := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		if enc, _, _ := strings.Cut(strings.TrimSpace(e), ";"); enc == "gzip" {
			return true
		}
	}
	return false
}

func serveFile(w http.ResponseWriter, r *http.Request, name string) {
	b, err := files.ReadFile(name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	ct := mime.TypeByExtension(filepath.Ext(name))
	if strings.HasSuffix(name, ".js") {
		ct = "text/javascript; charset=utf-8" // whatever the host's mime tables say
	}
	serveBytes(w, ct, b)
}

// serveBytes writes b; pages and programs are revalidated on every load,
// so a rebuilt program is never mixed with a stale page.
func serveBytes(w http.ResponseWriter, contentType string, b []byte) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Cache-Control", "no-cache")
	h.Set("Content-Length", fmt.Sprint(len(b)))
	_, _ = w.Write(b)
}

// LoadPrograms reads every NAME.wasm file of dir.
func LoadPrograms(dir string) (map[string][]byte, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.wasm"))
	if err != nil {
		return nil, err
	}
	progs := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("web: %w", err)
		}
		progs[strings.TrimSuffix(filepath.Base(p), ".wasm")] = b
	}
	return progs, nil
}

type lab struct {
	cfg LabConfig
}

func newLab(c LabConfig) (*lab, error) {
	if len(c.Secret) < signaling.MinSecretLen {
		return nil, fmt.Errorf("web: lab secret must have at least %d bytes", signaling.MinSecretLen)
	}
	if c.MaxSize == 0 {
		c.MaxSize = 64
	}
	if c.TTL == 0 {
		c.TTL = time.Hour
	}
	if c.Settings == nil {
		c.Settings = map[string]string{"net": "loopback"}
	}
	return &lab{cfg: c}, nil
}

// labRequest is the body of POST /lab/jobs.
type labRequest struct {
	Size int `json:"size"`
}

// LabJob is the answer of POST /lab/jobs.
type LabJob struct {
	Job    string   `json:"job"`
	Tokens []string `json:"tokens"` // Tokens[r] admits rank r only
}

func (l *lab) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !isLoopback(r) {
		http.Error(w, "lab jobs are for clients on this host only", http.StatusForbidden)
		return
	}
	if !ownHost(r.Host, l.cfg.Hosts) {
		http.Error(w, "lab jobs are for this server's own names (see signal serve -public-name)", http.StatusForbidden)
		return
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Host != r.Host {
			http.Error(w, "lab jobs are for this server's own pages", http.StatusForbidden)
			return
		}
	}
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/json" {
		http.Error(w, "want a JSON body", http.StatusUnsupportedMediaType)
		return
	}
	var req labRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<10)).Decode(&req); err != nil {
		http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
		return
	}
	if req.Size < 1 || req.Size > l.cfg.MaxSize {
		http.Error(w, fmt.Sprintf("size %d: want 1 to %d", req.Size, l.cfg.MaxSize), http.StatusBadRequest)
		return
	}
	id := make([]byte, 8)
	_, _ = rand.Read(id)
	job := "lab-" + hex.EncodeToString(id)
	toks, err := signaling.MintSeats(l.cfg.Secret, signaling.Claims{
		Job: job, Size: req.Size, Expires: time.Now().Add(l.cfg.TTL).Unix(), Settings: l.cfg.Settings,
	})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(LabJob{Job: job, Tokens: toks})
}
