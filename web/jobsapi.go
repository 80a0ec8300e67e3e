//go:build !js

package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// JobInfo is a job of the registry as GET /api/jobs lists it and POST
// /api/jobs answers it.
type JobInfo struct {
	ID       string   `json:"id"`
	Program  string   `json:"program"`           // the rank program's path: /wasm/NAME.wasm or /api/jobs/ID/rank.wasm
	Example  string   `json:"example,omitempty"` // the example's name, when the program is one
	Args     []string `json:"args"`
	Size     int      `json:"size"`
	Max      int      `json:"max"`   // Size when the job cannot grow
	State    string   `json:"state"` // forming | formed | over | failed | ended
	Present  int      `json:"present"`
	Created  int64    `json:"created"`  // unix ms
	Deadline int64    `json:"deadline"` // unix ms: the time limit
	Pool     bool     `json:"pool"`     // volunteers of the pool may be sent here
	ICE      int      `json:"ice"`      // the job's own ICE servers
	// Signal is the job's id at the signaling server: ID, or ID.N once
	// it restarted N times (a rank left before it formed: it starts
	// afresh under the same invite).
	Signal   string `json:"signal"`
	Restarts int    `json:"restarts"`

	Reason string `json:"reason,omitempty"`
	// Organizer only (left out for a viewer with the viewer key):
	Invite   string `json:"invite,omitempty"`   // the join page's absolute URL
	QR       string `json:"qr,omitempty"`       // the invite's QR code (PNG)
	WASIJoin string `json:"wasiJoin,omitempty"` // a shell command that joins one WASI rank with meshrun
	// Dashboard is the dashboard's absolute URL with the viewer key.
	Dashboard string `json:"dashboard"`
	Trace     string `json:"trace"` // the trace download's path
}

// joinAnswer is POST /api/join/{invite}'s answer (and POST /api/pool's).
type joinAnswer struct {
	Job      string   `json:"job"`
	Token    string   `json:"token"` // a seat token (or a late token: any late rank of a job that grows)
	Rank     int      `json:"rank"`  // -1 for a late rank: the server numbers it at its join
	Late     bool     `json:"late"`
	Size     int      `json:"size"`
	Max      int      `json:"max"`
	Program  string   `json:"program"`
	Args     []string `json:"args"`
	Signal   string   `json:"signal"`
	Status   string   `json:"status"`
	Deadline int64    `json:"deadline"`
	Invite   string   `json:"invite,omitempty"` // POST /api/pool only
}

// apiError is the body of every /api/ error.
type apiError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "encode: "+err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, apiError{Code: code, Message: msg})
}

// base is the scheme://host the request's links name.
func (js *Jobs) base(r *http.Request) string {
	if js.public != nil {
		return js.cfg.PublicURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// disabled reports whether no organizer may log in from r: no password
// or key is configured and r is not from this machine (by one of its
// names).
func (js *Jobs) disabled(r *http.Request) bool {
	return js.cfg.Password == "" && js.cfg.AdminKey == "" && !(isLoopback(r) && ownHost(r.Host, js.cfg.Hosts))
}

// openLoopback reports whether r organizes without a login: no password
// is configured and r comes from this machine.
func (js *Jobs) openLoopback(r *http.Request) bool {
	return js.cfg.Password == "" && js.cfg.AdminKey == "" && isLoopback(r) && ownHost(r.Host, js.cfg.Hosts)
}

const disabledText = "The organizer pages are disabled: this server has no organizer password " +
	"(signal serve -admin-password, or MESHMPI_SIGNAL_ADMIN_PASSWORD, or -admin-key), " +
	"so only a browser on the server's own machine (loopback: http://localhost:PORT/jobs) may organize jobs.\n"

// bearer reports whether r carries the admin key as a bearer token (a
// script; browsers never send it by themselves, so it needs no CSRF
// token).
func (js *Jobs) bearer(r *http.Request) bool {
	a, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && secretEqual(a, js.cfg.AdminKey)
}

// organizer authorizes an organizer's API request; write: it changes
// state, and needs the session's CSRF token and a same-origin Origin. On
// false it has answered.
func (js *Jobs) organizer(w http.ResponseWriter, r *http.Request, write bool) bool {
	if js.bearer(r) {
		return true
	}
	if js.disabled(r) {
		writeError(w, http.StatusForbidden, "disabled", strings.TrimSpace(disabledText))
		return false
	}
	s := js.sess.get(r, time.Now())
	if s == nil {
		writeError(w, http.StatusUnauthorized, "login", "log in as the organizer first (/login)")
		return false
	}
	if write {
		if !secretEqual(r.Header.Get(CSRFHeader), s.csrf) {
			writeError(w, http.StatusForbidden, "csrf", "missing or wrong "+CSRFHeader+" header (reload the page)")
			return false
		}
		if !sameOrigin(r, js.public) {
			writeError(w, http.StatusForbidden, "origin", "the request's Origin is not this server's")
			return false
		}
	}
	return true
}

// setSession starts a session and sets its cookie.
func (js *Jobs) setSession(w http.ResponseWriter, r *http.Request) *session {
	s := js.sess.create(time.Now())
	http.SetCookie(w, &http.Cookie{
		Name: SessionCookie, Value: s.id, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil || js.cfg.Secure || (js.public != nil && js.public.Scheme == "https"),
		MaxAge: int(js.cfg.SessionTTL / time.Second),
	})
	return s
}

// viewer authorizes a dashboard request: an organizer's session (or the
// admin key), or the job's viewer key (?key=). org says which.
func (js *Jobs) viewer(r *http.Request, j *uiJob) (ok, org bool) {
	if js.bearer(r) {
		return true, true
	}
	if !js.disabled(r) && js.sess.get(r, time.Now()) != nil {
		return true, true
	}
	if k := r.URL.Query().Get("key"); k != "" && secretEqual(k, j.viewKey) {
		return true, false
	}
	return false, false
}

// routes adds the registry's pages and API to mux.
func (js *Jobs) routes(mux *http.ServeMux) {
	mux.HandleFunc("GET /login", js.loginPage)
	mux.HandleFunc("POST /login", js.login)
	mux.HandleFunc("POST /logout", js.logout)
	mux.HandleFunc("GET /api/session", js.session)
	mux.HandleFunc("GET /jobs", js.jobsPage)
	mux.HandleFunc("GET /api/jobs", js.listJobs)
	mux.HandleFunc("POST /api/jobs", js.createJob)
	mux.HandleFunc("POST /api/jobs/{id}/end", js.endJob)
	mux.HandleFunc("GET /api/jobs/{id}/qr.png", js.qr)
	mux.HandleFunc("GET /api/jobs/{id}/rank.wasm", js.program(false))
	mux.HandleFunc("GET /api/jobs/{id}/wasi.wasm", js.program(true))
	mux.HandleFunc("GET /join/{invite}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Frame-Options", "SAMEORIGIN") // the pool page runs ranks in frames of it
		servePage(w, r, "join.html")
	})
	mux.HandleFunc("POST /api/join/{invite}", js.join)
	mux.HandleFunc("GET /api/join/{invite}/status", js.status)
	mux.HandleFunc("GET /jobs/{id}/dashboard", js.dashboardPage)
	mux.HandleFunc("GET /api/jobs/{id}/view", js.view)
	mux.HandleFunc("GET /api/jobs/{id}/watch", js.watch)
	mux.HandleFunc("GET /api/jobs/{id}/trace.json", js.trace)
	mux.HandleFunc("GET /pool", func(w http.ResponseWriter, r *http.Request) { servePage(w, r, "pool.html") })
	mux.HandleFunc("POST /api/pool", js.pool)
}

// servePage serves an embedded page, or says it is missing.
func servePage(w http.ResponseWriter, r *http.Request, name string) {
	if _, err := files.ReadFile(name); err != nil {
		http.Error(w, "this server was built without the page "+name, http.StatusNotFound)
		return
	}
	if w.Header().Get("X-Frame-Options") == "" {
		w.Header().Set("X-Frame-Options", "DENY")
	}
	// the invite and the viewer key are in URLs: never to another site
	// (no-referrer would make Chromium send Origin: null on a form POST)
	w.Header().Set("Referrer-Policy", "same-origin")
	serveFile(w, r, name)
}

func (js *Jobs) loginPage(w http.ResponseWriter, r *http.Request) {
	switch {
	case js.openLoopback(r):
		js.setSession(w, r)
		http.Redirect(w, r, "/jobs", http.StatusSeeOther)
	case js.disabled(r):
		http.Error(w, disabledText, http.StatusForbidden)
	case js.sess.get(r, time.Now()) != nil:
		http.Redirect(w, r, "/jobs", http.StatusSeeOther)
	default:
		servePage(w, r, "login.html")
	}
}

func (js *Jobs) login(w http.ResponseWriter, r *http.Request) {
	if js.openLoopback(r) {
		js.setSession(w, r)
		http.Redirect(w, r, "/jobs", http.StatusSeeOther)
		return
	}
	if js.disabled(r) {
		http.Error(w, disabledText, http.StatusForbidden)
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !sameOrigin(r, js.public) {
		http.Error(w, "a login from another site's page", http.StatusForbidden)
		return
	}
	now := time.Now()
	if js.sess.throttled(clientAddr(r), now) {
		http.Redirect(w, r, "/login?error=busy", http.StatusSeeOther)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	pw := ""
	if err := r.ParseForm(); err == nil {
		pw = r.PostForm.Get("password")
	}
	if !secretEqual(pw, js.cfg.Password) && !secretEqual(pw, js.cfg.AdminKey) {
		js.sess.failure(clientAddr(r), now)
		http.Redirect(w, r, "/login?error=1", http.StatusSeeOther)
		return
	}
	js.setSession(w, r)
	http.Redirect(w, r, "/jobs", http.StatusSeeOther)
}

func (js *Jobs) logout(w http.ResponseWriter, r *http.Request) {
	s := js.sess.get(r, time.Now())
	if s == nil {
		writeError(w, http.StatusUnauthorized, "login", "no session")
		return
	}
	if !js.organizer(w, r, true) {
		return
	}
	js.sess.drop(s.id)
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil || js.cfg.Secure})
	w.WriteHeader(http.StatusNoContent)
}

// sessionInfo is GET /api/session's answer.
type sessionInfo struct {
	Organizer bool   `json:"organizer"`
	CSRF      string `json:"csrf"`
	Loopback  bool   `json:"loopback"` // organizing without a password, from the server's machine
	Disabled  bool   `json:"disabled"` // nobody may organize from here (no password configured)
}

func (js *Jobs) session(w http.ResponseWriter, r *http.Request) {
	var out sessionInfo
	s := js.sess.get(r, time.Now())
	switch {
	case js.disabled(r):
		out.Disabled = true
	case s == nil && js.openLoopback(r):
		s = js.setSession(w, r)
		fallthrough
	case s != nil:
		out.Organizer, out.CSRF, out.Loopback = true, s.csrf, js.openLoopback(r)
	}
	writeJSON(w, http.StatusOK, out)
}

func (js *Jobs) jobsPage(w http.ResponseWriter, r *http.Request) {
	switch {
	case js.disabled(r):
		http.Error(w, disabledText, http.StatusForbidden)
		return
	case js.sess.get(r, time.Now()) == nil:
		if !js.openLoopback(r) {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		js.setSession(w, r)
	}
	servePage(w, r, "jobs.html")
}

// info is what the API says of a job; org: the organizer asks (else a
// viewer with the viewer key).
func (js *Jobs) info(r *http.Request, s snapshot, org bool) JobInfo {
	j := s.j
	base := js.base(r)
	in := JobInfo{
		ID: j.id, Example: j.example, Args: j.args, Size: j.size, Max: j.max, State: s.state, Present: s.present,
		Created: j.created.UnixMilli(), Deadline: j.deadline.UnixMilli(), Pool: j.pool, ICE: len(j.ice), Reason: s.reason,
		Signal: s.sig, Restarts: s.restarts,
		Dashboard: base + "/jobs/" + j.id + "/dashboard?key=" + url.QueryEscape(j.viewKey),
		Trace:     "/api/jobs/" + j.id + "/trace.json",
	}
	if j.example != "" {
		in.Program = "/wasm/" + j.example + ".wasm"
	} else {
		in.Program = "/api/jobs/" + j.id + "/rank.wasm"
	}
	if !org {
		return in
	}
	in.Invite = base + "/join/" + j.invite
	in.QR = "/api/jobs/" + j.id + "/qr.png"
	if j.hasWASI {
		var args strings.Builder
		for _, a := range j.args {
			args.WriteString(" " + shellQuote(a))
		}
		in.WASIJoin = fmt.Sprintf(`curl -fsSo %s.wasm %s && meshrun join "$(curl -fsS -X POST %s)" %s.wasm%s`,
			j.id, shellQuote(base+"/api/jobs/"+j.id+"/wasi.wasm"), shellQuote(base+"/api/join/"+j.invite+"?format=url"), j.id, args.String())
	}
	return in
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// jobsList is GET /api/jobs's answer.
type jobsList struct {
	Jobs []JobInfo `json:"jobs"`
	Pool struct {
		Waiting int64 `json:"waiting"` // volunteers waiting in POST /api/pool
	} `json:"pool"`
}

func (js *Jobs) listJobs(w http.ResponseWriter, r *http.Request) {
	if !js.organizer(w, r, false) {
		return
	}
	now := time.Now()
	out := jobsList{Jobs: []JobInfo{}}
	for _, j := range js.list() {
		out.Jobs = append(out.Jobs, js.info(r, js.snap(j, now, false), true))
	}
	out.Pool.Waiting = js.waiting.Load()
	writeJSON(w, http.StatusOK, out)
}

// Form fields of POST /api/jobs other than the files.
const maxFormField = 8 << 10

func (js *Jobs) createJob(w http.ResponseWriter, r *http.Request) {
	if !js.organizer(w, r, true) {
		return
	}
	// an upload of tens of megabytes may take longer than the server's
	// read timeout for a request
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(10 * time.Minute))
	r.Body = http.MaxBytesReader(w, r.Body, 2*js.cfg.MaxUpload+1<<20)
	req, status, err := js.readJobForm(r)
	if err != nil {
		writeError(w, status, "bad-request", err.Error())
		return
	}
	j, err := js.create(req, time.Now())
	switch {
	case errors.Is(err, ErrBadJob):
		writeError(w, http.StatusBadRequest, "bad-job", err.Error())
		return
	case errors.Is(err, ErrTooManyJobs):
		writeError(w, http.StatusTooManyRequests, "too-many-jobs", err.Error())
		return
	case err != nil:
		writeError(w, http.StatusInternalServerError, "internal", err.Error())
		return
	}
	writeJSON(w, http.StatusCreated, js.info(r, js.snap(j, time.Now(), false), true))
}

// readJobForm reads POST /api/jobs's multipart form (or a urlencoded one,
// without files), each file at most MaxUpload bytes.
func (js *Jobs) readJobForm(r *http.Request) (jobRequest, int, error) {
	var req jobRequest
	fields := map[string]string{}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "multipart/form-data":
		mr, err := r.MultipartReader()
		if err != nil {
			return req, http.StatusBadRequest, fmt.Errorf("form: %w", err)
		}
		for {
			p, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				return req, formStatus(err), fmt.Errorf("form: %w", err)
			}
			name := p.FormName()
			switch name {
			case "rank_wasm", "wasi_wasm":
				b, err := readPart(p, js.cfg.MaxUpload)
				if err != nil {
					return req, formStatus(err), fmt.Errorf("%s: %w", name, err)
				}
				if len(b) == 0 {
					continue // an empty file input
				}
				if name == "rank_wasm" {
					req.RankWasm = b
				} else {
					req.WASIWasm = b
				}
			default:
				b, err := readPart(p, maxFormField)
				if err != nil {
					return req, formStatus(err), fmt.Errorf("%s: %w", name, err)
				}
				if len(fields) >= 32 {
					return req, http.StatusBadRequest, errors.New("form: too many fields")
				}
				fields[name] = string(b)
			}
		}
	case "application/x-www-form-urlencoded":
		r.Body = http.MaxBytesReader(nil, r.Body, 64<<10)
		if err := r.ParseForm(); err != nil {
			return req, formStatus(err), fmt.Errorf("form: %w", err)
		}
		for k := range r.PostForm {
			fields[k] = r.PostForm.Get(k)
		}
	default:
		return req, http.StatusUnsupportedMediaType, errors.New("want multipart/form-data")
	}
	num := func(k string) (int, error) {
		v := strings.TrimSpace(fields[k])
		if v == "" {
			return 0, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, fmt.Errorf("%s %q is not a whole number", k, truncateWords(v, 20))
		}
		if n <= 0 {
			return 0, fmt.Errorf("%s %d: want a positive number", k, n)
		}
		return n, nil
	}
	var err error
	if strings.TrimSpace(fields["size"]) == "" {
		return req, http.StatusBadRequest, errors.New("size is required")
	}
	if req.Size, err = num("size"); err != nil {
		return req, http.StatusBadRequest, err
	}
	if req.Max, err = num("max"); err != nil {
		return req, http.StatusBadRequest, err
	}
	if req.Minutes, err = num("minutes"); err != nil {
		return req, http.StatusBadRequest, err
	}
	req.Example = strings.TrimSpace(fields["example"])
	req.ICE, req.Args = fields["ice"], fields["args"]
	switch fields["pool"] {
	case "", "off", "0", "false":
	case "on", "1", "true":
		req.Pool = true
	default:
		return req, http.StatusBadRequest, fmt.Errorf("pool %q: want on or off", truncateWords(fields["pool"], 20))
	}
	return req, 0, nil
}

// readPart reads a form part of at most limit bytes.
func readPart(p *multipart.Part, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(p, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &http.MaxBytesError{Limit: limit}
	}
	return b, nil
}

// formStatus is 413 for a body or part over its limit, else 400.
func formStatus(err error) int {
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusBadRequest
}

func (js *Jobs) jobOr404(w http.ResponseWriter, r *http.Request) *uiJob {
	j := js.lookup(r.PathValue("id"))
	if j == nil {
		writeError(w, http.StatusNotFound, "unknown-job", "no such job (it ended more than an hour ago, or never was)")
	}
	return j
}

func (js *Jobs) endJob(w http.ResponseWriter, r *http.Request) {
	if !js.organizer(w, r, true) {
		return
	}
	j := js.jobOr404(w, r)
	if j == nil {
		return
	}
	if err := js.end(j.id, "ended by the organizer"); err != nil {
		writeError(w, http.StatusInternalServerError, "internal", err.Error())
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (js *Jobs) qr(w http.ResponseWriter, r *http.Request) {
	if !js.organizer(w, r, false) {
		return
	}
	j := js.jobOr404(w, r)
	if j == nil {
		return
	}
	b, _, err := qrPNG(js.base(r) + "/join/" + j.invite)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "internal", err.Error())
		return
	}
	w.Header().Set("Cache-Control", "private, max-age=3600")
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b)
}

// program serves a job's uploaded program to its ranks (anyone who knows
// the job's id: the invite's answer names it).
func (js *Jobs) program(wasi bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		j := js.jobOr404(w, r)
		if j == nil {
			return
		}
		rank, gz, ws := js.uploads(j)
		b := rank
		if wasi {
			b, gz = ws, nil
		}
		if b == nil {
			writeError(w, http.StatusNotFound, "no-program", "this job has no such program (or it is over)")
			return
		}
		if gz != nil {
			w.Header().Set("Vary", "Accept-Encoding")
			if acceptsGzip(r) {
				w.Header().Set("Content-Encoding", "gzip")
				b = gz
			}
		}
		serveBytes(w, "application/wasm", b)
	}
}

// joinError maps a refusal to its status.
func joinError(w http.ResponseWriter, no *joinRefusal) {
	status := http.StatusConflict
	switch no.code {
	case "job-ended", "expired":
		status = http.StatusGone
	case "unknown-invite":
		status = http.StatusNotFound
	}
	writeError(w, status, no.code, no.message)
}

func (js *Jobs) unknownInvite(w http.ResponseWriter) {
	joinError(w, &joinRefusal{"unknown-invite", "this invite link is not known here: check it was copied whole, or ask the organizer for a new one (an ended job's invite is forgotten after an hour)"})
}

func (js *Jobs) answer(r *http.Request, j *uiJob, a seatAnswer) joinAnswer {
	out := joinAnswer{
		Job: a.sig, Token: a.token, Rank: a.rank, Late: a.late, Size: j.size, Max: j.max,
		Program: "/api/jobs/" + j.id + "/rank.wasm", Args: j.args, Signal: "/ws",
		Status:   "/api/join/" + j.invite + "/status?seat=" + url.QueryEscape(a.seat),
		Deadline: j.deadline.UnixMilli(),
	}
	if j.example != "" {
		out.Program = "/wasm/" + j.example + ".wasm"
	}
	return out
}

func (js *Jobs) join(w http.ResponseWriter, r *http.Request) {
	j := js.byInvite(r.PathValue("invite"))
	if j == nil {
		js.unknownInvite(w)
		return
	}
	a, no := js.seat(j, time.Now())
	if no != nil {
		joinError(w, no)
		return
	}
	if r.URL.Query().Get("format") == "url" {
		u := js.base(r)
		u = "ws" + strings.TrimPrefix(u, "http") + "/ws?" + url.Values{"job": {a.sig}, "token": {a.token}}.Encode()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = io.WriteString(w, u+"\n")
		return
	}
	writeJSON(w, http.StatusOK, js.answer(r, j, a))
}

// joinStatus is GET /api/join/{invite}/status's answer: what a joiner
// may see of its own job (no consoles, no agents).
type joinStatus struct {
	State    string       `json:"state"`
	Present  int          `json:"present"`
	Size     int          `json:"size"`
	Max      int          `json:"max"`
	Deadline int64        `json:"deadline"`
	Reason   string       `json:"reason,omitempty"`
	Rank     *int         `json:"rank,omitempty"` // the seat's rank, when ?seat= names one (-1: late)
	Ranks    []rankStatus `json:"ranks"`
}

type rankStatus struct {
	Rank  int    `json:"rank"`
	State string `json:"state"`
	Code  int    `json:"code"`
}

func (js *Jobs) status(w http.ResponseWriter, r *http.Request) {
	j := js.byInvite(r.PathValue("invite"))
	if j == nil {
		js.unknownInvite(w)
		return
	}
	s := js.snap(j, time.Now(), false)
	out := joinStatus{State: s.state, Present: s.present, Size: j.size, Max: j.max, Deadline: j.deadline.UnixMilli(),
		Reason: s.reason, Ranks: []rankStatus{}}
	if seat := r.URL.Query().Get("seat"); seat != "" {
		if rk, ok := js.seatRank(j, seat); ok {
			out.Rank = &rk
		}
	}
	for _, rv := range s.view.Ranks {
		if rv.State != "" { // a seat nobody took yet
			out.Ranks = append(out.Ranks, rankStatus{Rank: rv.Rank, State: rv.State, Code: rv.Code})
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (js *Jobs) dashboardPage(w http.ResponseWriter, r *http.Request) {
	j := js.lookup(r.PathValue("id"))
	if j == nil {
		http.Error(w, "No such job (it ended more than an hour ago, or never was).", http.StatusNotFound)
		return
	}
	if ok, _ := js.viewer(r, j); !ok {
		http.Error(w, "This dashboard needs the organizer's login (/login) or the job's viewer link (…/dashboard?key=…).", http.StatusForbidden)
		return
	}
	servePage(w, r, "dashboard.html")
}

// viewerOr403 authorizes a dashboard API request; on nil it has answered.
func (js *Jobs) viewerOr403(w http.ResponseWriter, r *http.Request) (*uiJob, bool) {
	j := js.jobOr404(w, r)
	if j == nil {
		return nil, false
	}
	ok, org := js.viewer(r, j)
	if !ok {
		writeError(w, http.StatusForbidden, "viewer", "viewing this job needs the organizer's login or the job's viewer key (?key=)")
		return nil, false
	}
	return j, org
}

// maxPoolWaiting bounds the volunteers waiting in POST /api/pool at once.
const maxPoolWaiting = 4096

func (js *Jobs) pool(w http.ResponseWriter, r *http.Request) {
	if js.waiting.Add(1) > maxPoolWaiting {
		js.waiting.Add(-1)
		writeError(w, http.StatusServiceUnavailable, "pool-full", "too many volunteers are waiting; try again later")
		return
	}
	defer js.waiting.Add(-1)
	ctx, cancel := context.WithTimeout(r.Context(), js.cfg.PoolWait)
	defer cancel()
	// seats handed to tabs that never joined free up with time, and a
	// job that grows opens late seats once it formed: look again now
	// and then as well as at every change of the registry
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		changed, closed := js.changesOrClosed()
		if closed {
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusNoContent) // the server shuts down
			return
		}
		if j, a, ok := js.poolJob(time.Now()); ok {
			out := js.answer(r, j, a)
			out.Invite = js.base(r) + "/join/" + j.invite
			writeJSON(w, http.StatusOK, out)
			return
		}
		select {
		case <-ctx.Done():
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusNoContent)
			return
		case <-changed:
		case <-tick.C:
		}
	}
}
