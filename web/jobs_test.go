//go:build !js

package web

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/signaling"
)

const testSecret = "web-test-secret-0123456789"

// fakeWasm is the smallest WebAssembly module: its magic and version.
var fakeWasm = []byte("\x00asm\x01\x00\x00\x00")

// uiEnv is a signaling server with the jobs UI on one loopback port.
type uiEnv struct {
	t    *testing.T
	url  string
	srv  *signaling.Server
	jobs *Jobs
	hs   *httptest.Server
}

func startJobs(t *testing.T, edit func(*JobsConfig)) *uiEnv {
	t.Helper()
	return startJobsWith(t, edit, nil)
}

// startJobsWith is startJobs with the signaling server's configuration
// edited too.
func startJobsWith(t *testing.T, edit func(*JobsConfig), sedit func(*signaling.Config)) *uiEnv {
	t.Helper()
	scfg := signaling.Config{Secret: []byte(testSecret)}
	if sedit != nil {
		sedit(&scfg)
	}
	srv, err := signaling.NewServer(scfg)
	require.NoError(t, err)
	cfg := JobsConfig{Secret: []byte(testSecret), Password: "organizer-pw", AdminKey: "admin-key-0123", PoolWait: 2 * time.Second}
	if edit != nil {
		edit(&cfg)
	}
	jobs, err := NewJobs(cfg)
	require.NoError(t, err)
	ui, err := Handler(Options{Programs: map[string][]byte{"hello": fakeWasm}, Jobs: jobs, Server: srv})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/", ui)
	mux.Handle("/ws", srv)
	hs := httptest.NewServer(mux)
	t.Cleanup(func() {
		jobs.Close()
		_ = srv.Close()
		hs.Close()
	})
	return &uiEnv{t: t, url: hs.URL, srv: srv, jobs: jobs, hs: hs}
}

// organizer is a browser of the organizer: a cookie jar and the CSRF
// token once logged in.
type organizer struct {
	e    *uiEnv
	c    *http.Client
	csrf string
}

func (e *uiEnv) browser() *organizer {
	jar, err := cookiejar.New(nil)
	require.NoError(e.t, err)
	return &organizer{e: e, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

// login posts the password and reads the session's CSRF token.
func (o *organizer) login(pw string) *http.Response {
	t := o.e.t
	req, err := http.NewRequest("POST", o.e.url+"/login", strings.NewReader(url.Values{"password": {pw}}.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", o.e.url)
	resp, err := o.c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	var s sessionInfo
	o.getJSON("/api/session", &s)
	o.csrf = s.CSRF
	return resp
}

func (o *organizer) do(method, path string, body io.Reader, ct string, hdr map[string]string) (*http.Response, []byte) {
	t := o.e.t
	req, err := http.NewRequest(method, o.e.url+path, body)
	require.NoError(t, err)
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	if method != "GET" {
		req.Header.Set("Origin", o.e.url)
		req.Header.Set(CSRFHeader, o.csrf)
	}
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := o.c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, b
}

func (o *organizer) getJSON(path string, v any) int {
	resp, b := o.do("GET", path, nil, "", nil)
	if resp.StatusCode == http.StatusOK {
		require.NoError(o.e.t, json.Unmarshal(b, v), string(b))
	}
	return resp.StatusCode
}

// form is a job request's fields and files.
type form struct {
	fields map[string]string
	files  map[string][]byte
}

func (f form) encode(t *testing.T) (*bytes.Buffer, string) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range f.fields {
		require.NoError(t, mw.WriteField(k, v))
	}
	for k, v := range f.files {
		fw, err := mw.CreateFormFile(k, k+".wasm")
		require.NoError(t, err)
		_, err = fw.Write(v)
		require.NoError(t, err)
	}
	require.NoError(t, mw.Close())
	return &buf, mw.FormDataContentType()
}

// create posts a job; it returns the status and the JobInfo or error.
func (o *organizer) create(f form, hdr map[string]string) (int, JobInfo, apiError) {
	body, ct := f.encode(o.e.t)
	resp, b := o.do("POST", "/api/jobs", body, ct, hdr)
	var in JobInfo
	var ae apiError
	if resp.StatusCode == http.StatusCreated {
		require.NoError(o.e.t, json.Unmarshal(b, &in))
	} else {
		require.NoError(o.e.t, json.Unmarshal(b, &ae), string(b))
	}
	return resp.StatusCode, in, ae
}

func (o *organizer) mustCreate(fields map[string]string) JobInfo {
	st, in, ae := o.create(form{fields: fields}, nil)
	require.Equal(o.e.t, http.StatusCreated, st, ae.Message)
	return in
}

// joinInvite posts to the invite as a student's tab does.
func (e *uiEnv) joinInvite(invite string) (int, joinAnswer, apiError) {
	path := invite
	if u, err := url.Parse(invite); err == nil && u.Path != "" {
		path = u.Path
	}
	inv := strings.TrimPrefix(path, "/join/")
	resp, err := http.Post(e.url+"/api/join/"+inv, "", nil)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(e.t, err)
	var a joinAnswer
	var ae apiError
	if resp.StatusCode == http.StatusOK {
		require.NoError(e.t, json.Unmarshal(b, &a))
	} else {
		require.NoError(e.t, json.Unmarshal(b, &ae), string(b))
	}
	return resp.StatusCode, a, ae
}

func (e *uiEnv) wsURL() string { return "ws" + strings.TrimPrefix(e.url, "http") + "/ws" }

func TestLoginLogoutCookie(t *testing.T) {
	e := startJobs(t, nil)
	o := e.browser()

	// no session: the pages send the organizer to the login, the API refuses
	resp, _ := o.do("GET", "/jobs", nil, "", nil)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, "/login", resp.Header.Get("Location"))
	var s sessionInfo
	require.Equal(t, http.StatusOK, o.getJSON("/api/session", &s))
	require.False(t, s.Organizer)
	require.Empty(t, s.CSRF)
	resp, _ = o.do("GET", "/api/jobs", nil, "", nil)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	// a wrong password
	resp = o.login("wrong")
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, "/login?error=1", resp.Header.Get("Location"))
	require.Empty(t, o.csrf)

	// the password: a cookie with the attributes the spec names
	resp = o.login("organizer-pw")
	require.Equal(t, "/jobs", resp.Header.Get("Location"))
	var ck *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == SessionCookie {
			ck = c
		}
	}
	require.NotNil(t, ck)
	require.True(t, ck.HttpOnly)
	require.Equal(t, http.SameSiteStrictMode, ck.SameSite)
	require.False(t, ck.Secure, "plain HTTP")
	require.Equal(t, "/", ck.Path)
	require.NotEmpty(t, o.csrf)
	var list jobsList
	require.Equal(t, http.StatusOK, o.getJSON("/api/jobs", &list))
	require.Empty(t, list.Jobs)

	// the admin key logs in too, as a password and as a bearer token
	o2 := e.browser()
	require.Equal(t, "/jobs", o2.login("admin-key-0123").Header.Get("Location"))
	resp, _ = e.browser().do("GET", "/api/jobs", nil, "", map[string]string{"Authorization": "Bearer admin-key-0123"})
	require.Equal(t, http.StatusOK, resp.StatusCode)
	resp, _ = e.browser().do("GET", "/api/jobs", nil, "", map[string]string{"Authorization": "Bearer nope"})
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	// logout needs the CSRF token, then ends the session
	csrf := o.csrf
	o.csrf = "bogus"
	resp, _ = o.do("POST", "/logout", nil, "", nil)
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	o.csrf = csrf
	resp, _ = o.do("POST", "/logout", nil, "", nil)
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	resp, _ = o.do("GET", "/api/jobs", nil, "", nil)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.Equal(t, http.StatusOK, o2.getJSON("/api/jobs", &list), "another session lives on")
}

// Every state-changing request needs the session's CSRF token and a
// same-origin Origin.
func TestCSRF(t *testing.T) {
	e := startJobs(t, nil)
	o := e.browser()
	o.login("organizer-pw")
	in := o.mustCreate(map[string]string{"example": "hello", "size": "2"})
	f := form{fields: map[string]string{"example": "hello", "size": "2"}}
	for _, c := range []struct {
		name string
		hdr  map[string]string
		code string
	}{
		{"no token", map[string]string{CSRFHeader: ""}, "csrf"},
		{"wrong token", map[string]string{CSRFHeader: "x" + o.csrf}, "csrf"},
		{"no origin", map[string]string{"Origin": ""}, "origin"},
		{"other origin", map[string]string{"Origin": "https://evil.example"}, "origin"},
		{"null origin", map[string]string{"Origin": "null"}, "origin"},
	} {
		st, _, ae := o.create(f, c.hdr)
		require.Equal(t, http.StatusForbidden, st, c.name)
		require.Equal(t, c.code, ae.Code, c.name)
		resp, _ := o.do("POST", "/api/jobs/"+in.ID+"/end", nil, "", c.hdr)
		require.Equal(t, http.StatusForbidden, resp.StatusCode, c.name)
	}
	var list jobsList
	o.getJSON("/api/jobs", &list)
	require.Len(t, list.Jobs, 1)
	require.Equal(t, "forming", list.Jobs[0].State)
	// a login from another site's page is refused
	req, _ := http.NewRequest("POST", e.url+"/login", strings.NewReader("password=organizer-pw"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
}

// Without a password, a browser on the server's machine organizes; one
// elsewhere (or one that names the server by a foreign name: DNS
// rebinding) is told why not.
func TestNoPasswordLoopbackOnly(t *testing.T) {
	e := startJobs(t, func(c *JobsConfig) { c.Password, c.AdminKey = "", "" })
	o := e.browser()
	var s sessionInfo
	require.Equal(t, http.StatusOK, o.getJSON("/api/session", &s))
	require.True(t, s.Organizer)
	require.True(t, s.Loopback)
	o.csrf = s.CSRF
	o.mustCreate(map[string]string{"example": "hello", "size": "1"})

	ui := e.hs.Config.Handler
	for _, c := range []struct{ remote, host string }{{"192.0.2.7:5555", "192.0.2.1:8080"}, {"127.0.0.1:5555", "rebind.example:8080"}} {
		for _, path := range []string{"/jobs", "/login", "/api/jobs"} {
			req := httptest.NewRequest("GET", path, nil)
			req.RemoteAddr, req.Host = c.remote, c.host
			rec := httptest.NewRecorder()
			ui.ServeHTTP(rec, req)
			require.Equal(t, http.StatusForbidden, rec.Code, path)
			require.Contains(t, rec.Body.String(), "only a browser on the server's own machine", path)
		}
	}
}

// Sessions expire, and the table is bounded.
func TestSessionsBounded(t *testing.T) {
	s := newSessions(time.Minute, 3)
	now := time.Now()
	var ids []string
	for range 10 {
		ids = append(ids, s.create(now).id)
		now = now.Add(time.Second)
	}
	require.Equal(t, 3, s.len())
	req := httptest.NewRequest("GET", "/", nil)
	req.AddCookie(&http.Cookie{Name: SessionCookie, Value: ids[9]})
	require.NotNil(t, s.get(req, now))
	require.Nil(t, s.get(req, now.Add(2*time.Minute)), "expired")
	req = httptest.NewRequest("GET", "/", nil)
	req.AddCookie(&http.Cookie{Name: SessionCookie, Value: ids[0]})
	require.Nil(t, s.get(req, now), "evicted")
	// failed logins are throttled per address, and for all addresses
	n := 0
	for s.failure("192.0.2.1", now) {
		n++
	}
	require.Equal(t, addrBurst, n)
	require.True(t, s.throttled("192.0.2.1", now))
	require.False(t, s.throttled("192.0.2.1", now.Add(time.Duration(float64(time.Second)/addrRate))))
	require.False(t, s.throttled("192.0.2.2", now), "another address is not held back")
	for i := 2; s.failure(fmt.Sprintf("192.0.2.%d", i), now); i++ {
		n++
	}
	require.Equal(t, allBurst, n)
	require.True(t, s.throttled("192.0.2.200", now), "all addresses together")
	require.False(t, s.throttled("192.0.2.200", now.Add(time.Second)))
	// the addresses tracked are bounded: those whose bucket refilled go
	for i := range maxAddrs + 10 {
		s.failure(fmt.Sprintf("198.51.%d.%d", i/256, i%256), now.Add(time.Hour+time.Duration(i)*time.Millisecond))
	}
	require.LessOrEqual(t, len(s.byAddr), maxAddrs)
}

func TestCreateJobInputs(t *testing.T) {
	e := startJobs(t, func(c *JobsConfig) { c.MaxUpload = 1 << 10; c.MaxSize = 16 })
	o := e.browser()
	o.login("organizer-pw")

	in := o.mustCreate(map[string]string{"example": "hello", "size": "4", "max": "6", "minutes": "5", "pool": "on",
		"args": "-n  3 x", "ice": "stun:stun.example:3478\n# a comment\n\nturn:turn.example:3478?transport=udp alice s3cret"})
	require.Equal(t, "/wasm/hello.wasm", in.Program)
	require.Equal(t, []string{"-n", "3", "x"}, in.Args)
	require.Equal(t, 4, in.Size)
	require.Equal(t, 6, in.Max)
	require.Equal(t, "forming", in.State)
	require.True(t, in.Pool)
	require.Equal(t, 2, in.ICE)
	require.InDelta(t, 5*60*1000, in.Deadline-in.Created, 1000)
	require.True(t, strings.HasPrefix(in.Invite, e.url+"/join/"), in.Invite)
	require.True(t, strings.HasPrefix(in.Dashboard, e.url+"/jobs/"+in.ID+"/dashboard?key="), in.Dashboard)
	require.Equal(t, "/api/jobs/"+in.ID+"/qr.png", in.QR)
	require.Equal(t, "/api/jobs/"+in.ID+"/trace.json", in.Trace)
	require.Empty(t, in.WASIJoin)
	ice := e.jobs.ICEServers(in.ID)
	require.Equal(t, []signaling.ICEServer{
		{URLs: []string{"stun:stun.example:3478"}},
		{URLs: []string{"turn:turn.example:3478?transport=udp"}, Username: "alice", Credential: "s3cret"},
	}, ice)

	// an upload, with a WASI program
	st, up, ae := o.create(form{fields: map[string]string{"size": "2"}, files: map[string][]byte{"rank_wasm": fakeWasm, "wasi_wasm": fakeWasm}}, nil)
	require.Equal(t, http.StatusCreated, st, ae.Message)
	require.Equal(t, "/api/jobs/"+up.ID+"/rank.wasm", up.Program)
	require.Equal(t, 2, up.Max)
	require.Contains(t, up.WASIJoin, "meshrun join")
	require.Contains(t, up.WASIJoin, "/api/jobs/"+up.ID+"/wasi.wasm")
	for _, p := range []string{"rank.wasm", "wasi.wasm"} {
		resp, err := http.Get(e.url + "/api/jobs/" + up.ID + "/" + p) // the client asks for gzip and undoes it
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Equal(t, "application/wasm", resp.Header.Get("Content-Type"))
		require.Equal(t, fakeWasm, b)
	}
	// the rank program goes gzipped to a browser that takes it
	req, _ := http.NewRequest("GET", e.url+"/api/jobs/"+up.ID+"/rank.wasm", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	gresp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
	require.NoError(t, err)
	require.Equal(t, "gzip", gresp.Header.Get("Content-Encoding"))
	zr, err := gzip.NewReader(gresp.Body)
	require.NoError(t, err)
	b, err := io.ReadAll(zr)
	gresp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, fakeWasm, b)
	resp, err := http.Get(e.url + "/api/jobs/" + in.ID + "/rank.wasm")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "an example's job has no upload")

	bad := []struct {
		name   string
		f      form
		status int
		words  string
	}{
		{"zero size", form{fields: map[string]string{"example": "hello", "size": "0"}}, 400, "positive"},
		{"negative size", form{fields: map[string]string{"example": "hello", "size": "-3"}}, 400, "positive"},
		{"no size", form{fields: map[string]string{"example": "hello"}}, 400, "size is required"},
		{"size not a number", form{fields: map[string]string{"example": "hello", "size": "four"}}, 400, "whole number"},
		{"size too big", form{fields: map[string]string{"example": "hello", "size": "17"}}, 400, "want 1 to 16"},
		{"max below size", form{fields: map[string]string{"example": "hello", "size": "4", "max": "3"}}, 400, "max 3"},
		{"max too big", form{fields: map[string]string{"example": "hello", "size": "4", "max": "99"}}, 400, "max 99"},
		{"unknown example", form{fields: map[string]string{"example": "nope", "size": "2"}}, 400, `no example "nope"`},
		{"no program", form{fields: map[string]string{"size": "2"}}, 400, "give an example"},
		{"both", form{fields: map[string]string{"example": "hello", "size": "2"}, files: map[string][]byte{"rank_wasm": fakeWasm}}, 400, "not both"},
		{"not wasm", form{fields: map[string]string{"size": "2"}, files: map[string][]byte{"rank_wasm": []byte("#!/bin/sh\n")}}, 400, "not a WebAssembly module"},
		{"huge upload", form{fields: map[string]string{"size": "2"}, files: map[string][]byte{"rank_wasm": append(append([]byte{}, fakeWasm...), make([]byte, 2<<10)...)}}, 413, "request body too large"},
		{"bad ICE scheme", form{fields: map[string]string{"example": "hello", "size": "2", "ice": "http://x:1"}}, 400, "ICE line 1"},
		{"TURN without user", form{fields: map[string]string{"example": "hello", "size": "2", "ice": "turn:t.example:3478"}}, 400, "needs a user"},
		{"STUN with user", form{fields: map[string]string{"example": "hello", "size": "2", "ice": "stun:s.example:3478 a b"}}, 400, "takes no user"},
		{"bad port", form{fields: map[string]string{"example": "hello", "size": "2", "ice": "stun:s.example:99999"}}, 400, "bad port"},
		{"bad query", form{fields: map[string]string{"example": "hello", "size": "2", "ice": "turn:t.example:3478?x=1 a b"}}, 400, "transport"},
		{"bad host", form{fields: map[string]string{"example": "hello", "size": "2", "ice": "stun:<script>:1"}}, 400, "bad host"},
		{"too many ICE", form{fields: map[string]string{"example": "hello", "size": "2", "ice": strings.Repeat("stun:s.example:1\n", 9)}}, 400, "more than 8"},
		{"time limit", form{fields: map[string]string{"example": "hello", "size": "2", "minutes": "99999999"}}, 400, "time limit"},
		{"too many args", form{fields: map[string]string{"example": "hello", "size": "2", "args": strings.Repeat("a ", 65)}}, 400, "arguments"},
		{"bad pool", form{fields: map[string]string{"example": "hello", "size": "2", "pool": "maybe"}}, 400, "pool"},
	}
	for _, c := range bad {
		st, _, ae := o.create(c.f, nil)
		require.Equal(t, c.status, st, c.name)
		require.Contains(t, ae.Message, c.words, c.name)
	}
	resp2, b := o.do("POST", "/api/jobs", strings.NewReader("{}"), "application/json", nil)
	require.Equal(t, http.StatusUnsupportedMediaType, resp2.StatusCode, string(b))

	// unknown job ids
	for _, p := range []string{"/api/jobs/nope/qr.png", "/api/jobs/nope/view", "/api/jobs/nope/trace.json", "/api/jobs/nope/rank.wasm"} {
		resp, _ := o.do("GET", p, nil, "", nil)
		require.Equal(t, http.StatusNotFound, resp.StatusCode, p)
	}
	resp3, _ := o.do("POST", "/api/jobs/nope/end", nil, "", nil)
	require.Equal(t, http.StatusNotFound, resp3.StatusCode)
}

// The registry holds at most MaxJobs jobs; an ended one makes room.
func TestRegistryBounded(t *testing.T) {
	e := startJobs(t, func(c *JobsConfig) { c.MaxJobs = 2; c.MaxUpload = 64; c.MaxStored = 150 })
	o := e.browser()
	o.login("organizer-pw")
	a := o.mustCreate(map[string]string{"example": "hello", "size": "1"})
	b := o.mustCreate(map[string]string{"example": "hello", "size": "1"})
	st, _, ae := o.create(form{fields: map[string]string{"example": "hello", "size": "1"}}, nil)
	require.Equal(t, http.StatusTooManyRequests, st)
	require.Contains(t, ae.Message, "holds 2 jobs")
	resp, _ := o.do("POST", "/api/jobs/"+a.ID+"/end", nil, "", nil)
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	c := o.mustCreate(map[string]string{"example": "hello", "size": "1"})
	var list jobsList
	o.getJSON("/api/jobs", &list)
	require.Len(t, list.Jobs, 2)
	require.NotEqual(t, a.ID, list.Jobs[0].ID, "the ended job made room")
	require.Equal(t, c.ID, list.Jobs[1].ID)

	// uploads are bounded in all
	for _, id := range []string{b.ID, c.ID} {
		resp, _ = o.do("POST", "/api/jobs/"+id+"/end", nil, "", nil)
		require.Equal(t, http.StatusNoContent, resp.StatusCode)
	}
	big := append(append([]byte{}, fakeWasm...), make([]byte, 56)...)
	st, _, ae = o.create(form{fields: map[string]string{"size": "1"}, files: map[string][]byte{"rank_wasm": big}}, nil)
	require.Equal(t, http.StatusCreated, st, ae.Message)
	st, _, ae = o.create(form{fields: map[string]string{"size": "1"}, files: map[string][]byte{"rank_wasm": big}}, nil)
	require.Equal(t, http.StatusTooManyRequests, st)
	require.Contains(t, ae.Message, "bytes of programs")
}

// Each join of the invite gets a seat token of its own, up to the size;
// then the job is full. The tokens join the signaling server as those
// ranks, and no other.
func TestInviteSeats(t *testing.T) {
	e := startJobs(t, nil)
	o := e.browser()
	o.login("organizer-pw")
	in := o.mustCreate(map[string]string{"example": "hello", "size": "3", "args": "a b"})
	seen := map[string]bool{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var clients []*signaling.Client
	for r := range 3 {
		st, a, ae := e.joinInvite(in.Invite)
		require.Equal(t, http.StatusOK, st, ae.Message)
		require.Equal(t, r, a.Rank)
		require.Equal(t, in.ID, a.Job)
		require.Equal(t, 3, a.Size)
		require.Equal(t, "/wasm/hello.wasm", a.Program)
		require.Equal(t, []string{"a", "b"}, a.Args)
		require.Equal(t, "/ws", a.Signal)
		require.False(t, seen[a.Token], "a seat token per join")
		seen[a.Token] = true
		claims, err := signaling.VerifyToken([]byte(testSecret), a.Token, in.ID, time.Now())
		require.NoError(t, err)
		require.NotNil(t, claims.Seat, "a seat token, never an open one")
		require.Equal(t, r, *claims.Seat)
		require.Equal(t, "1", claims.Settings["telemetry"])
		require.Equal(t, "lan", claims.Settings["net"])
		require.Equal(t, in.Deadline/1000, claims.Expires)
		// the status names the seat's rank
		var js joinStatus
		require.Equal(t, http.StatusOK, o.getJSON(a.Status, &js))
		require.NotNil(t, js.Rank)
		require.Equal(t, r, *js.Rank)
		c, err := signaling.Dial(ctx, e.wsURL(), a.Job, a.Token, nil)
		require.NoError(t, err)
		require.Equal(t, r, c.Welcome().Rank)
		clients = append(clients, c)
	}
	defer func() {
		for _, c := range clients {
			_ = c.Close()
		}
	}()
	st, _, ae := e.joinInvite(in.Invite)
	require.Equal(t, http.StatusConflict, st)
	require.Equal(t, "job-full", ae.Code)
	require.Contains(t, ae.Message, "3")

	st, _, ae = e.joinInvite(e.url + "/join/not-an-invite")
	require.Equal(t, http.StatusNotFound, st)
	require.Equal(t, "unknown-invite", ae.Code)

	// ending the job: the invite says so, the server ends the members
	resp, _ := o.do("POST", "/api/jobs/"+in.ID+"/end", nil, "", nil)
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	st, _, ae = e.joinInvite(in.Invite)
	require.Equal(t, http.StatusGone, st)
	require.Equal(t, "job-ended", ae.Code)
	require.Contains(t, ae.Message, "ended by the organizer")
	var list jobsList
	o.getJSON("/api/jobs", &list)
	require.Equal(t, "ended", list.Jobs[0].State)
}

// A seat handed to a tab that never joined goes to the next joiner after
// SeatReclaim, while the job forms.
func TestSeatReclaim(t *testing.T) {
	e := startJobs(t, func(c *JobsConfig) { c.SeatReclaim = time.Nanosecond })
	o := e.browser()
	o.login("organizer-pw")
	in := o.mustCreate(map[string]string{"example": "hello", "size": "1"})
	_, a1, _ := e.joinInvite(in.Invite)
	st, a2, ae := e.joinInvite(in.Invite)
	require.Equal(t, http.StatusOK, st, ae.Message)
	require.Equal(t, 0, a2.Rank)
	require.Equal(t, a1.Token, a2.Token)
}

// An invite past its time limit is expired, and the registry ends the job
// at its deadline.
func TestInviteExpired(t *testing.T) {
	e := startJobs(t, nil)
	o := e.browser()
	o.login("organizer-pw")
	in := o.mustCreate(map[string]string{"example": "hello", "size": "2"})
	j := e.jobs.lookup(in.ID)
	now := j.deadline.Add(time.Second)
	_, no := e.jobs.seat(j, now)
	require.NotNil(t, no)
	require.Equal(t, "expired", no.code)
	st, _, ae := e.joinInvite(in.Invite)
	require.Equal(t, http.StatusGone, st)
	require.Equal(t, "expired", ae.Code)
}

// A job whose time limit passes is ended by the registry's timer.
func TestDeadlineEndsJob(t *testing.T) {
	e := startJobs(t, nil)
	o := e.browser()
	o.login("organizer-pw")
	in := o.mustCreate(map[string]string{"example": "hello", "size": "2"})
	_, a, _ := e.joinInvite(in.Invite)
	j := e.jobs.lookup(in.ID)
	e.jobs.mu.Lock()
	changed := e.jobs.changed
	j.timer.Reset(0)
	e.jobs.mu.Unlock()
	<-changed
	e.jobs.mu.Lock()
	ended, reason := j.ended, j.reason
	e.jobs.mu.Unlock()
	require.True(t, ended)
	require.Equal(t, "time limit reached", reason)
	// and the server ended it: a seat handed out before is refused
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for e.srv.Stats().Ended == 0 { // the registry marks the job before it asks the server
		select {
		case <-ctx.Done():
			t.Fatal("the server never ended the job")
		case <-time.After(5 * time.Millisecond):
		}
	}
	_, err := signaling.Dial(ctx, e.wsURL(), a.Job, a.Token, nil)
	require.ErrorIs(t, err, signaling.ErrJobGone)
	require.ErrorContains(t, err, "time limit reached")
}

// The QR code is a PNG of the expected size whose modules are the
// library's matrix, and only the organizer gets it.
func TestQR(t *testing.T) {
	e := startJobs(t, nil)
	o := e.browser()
	o.login("organizer-pw")
	in := o.mustCreate(map[string]string{"example": "hello", "size": "2"})
	resp, b := o.do("GET", in.QR, nil, "", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "image/png", resp.Header.Get("Content-Type"))
	img, err := png.Decode(bytes.NewReader(b))
	require.NoError(t, err)
	_, dim, err := qrPNG(in.Invite)
	require.NoError(t, err)
	require.GreaterOrEqual(t, dim, 21)
	require.Zero(t, (dim-17)%4, "a QR code is 17+4v modules")
	side := (dim + 2*qrQuiet) * qrScale
	require.Equal(t, side, img.Bounds().Dx())
	require.Equal(t, side, img.Bounds().Dy())
	// the top-left finder pattern: a dark 7×7 ring around a light ring
	dark := func(mx, my int) bool {
		r, _, _, _ := img.At((mx+qrQuiet)*qrScale+qrScale/2, (my+qrQuiet)*qrScale+qrScale/2).RGBA()
		return r < 0x8000
	}
	for i := range 7 {
		require.True(t, dark(i, 0) && dark(0, i) && dark(6, i) && dark(i, 6))
	}
	require.False(t, dark(1, 1))
	require.True(t, dark(3, 3))
	r, _, _, _ := img.At(1, 1).RGBA()
	require.Greater(t, r, uint32(0x8000), "quiet zone")

	resp, _ = e.browser().do("GET", in.QR, nil, "", nil)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
}

// The viewer key views one job; a seat token does not; the invite,
// QR code and WASI command are the organizer's.
func TestViewerPermission(t *testing.T) {
	e := startJobs(t, nil)
	o := e.browser()
	o.login("organizer-pw")
	in := o.mustCreate(map[string]string{"example": "hello", "size": "2"})
	other := o.mustCreate(map[string]string{"example": "hello", "size": "2"})
	du, err := url.Parse(in.Dashboard)
	require.NoError(t, err)
	key := du.Query().Get("key")
	require.NotEmpty(t, key)
	_, seat, _ := e.joinInvite(in.Invite)

	get := func(path string) (int, []byte) {
		resp, err := http.Get(e.url + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	st, b := get("/api/jobs/" + in.ID + "/view?key=" + url.QueryEscape(key))
	require.Equal(t, http.StatusOK, st, string(b))
	var v struct {
		Job  string  `json:"job"`
		Info JobInfo `json:"info"`
	}
	require.NoError(t, json.Unmarshal(b, &v))
	require.Empty(t, v.Info.Invite, "a viewer gets no invite")
	require.Empty(t, v.Info.QR)
	require.Equal(t, in.ID, v.Info.ID)
	st, _ = get(du.RequestURI())
	require.NotEqual(t, http.StatusForbidden, st, "the dashboard page opens with the key")
	for _, p := range []string{"/view", "/trace.json", "/dashboard"} {
		base := "/api/jobs/" + in.ID
		if p == "/dashboard" {
			base = "/jobs/" + in.ID
		}
		st, _ = get(base + p)
		require.Equal(t, http.StatusForbidden, st, p+" without a key")
		st, _ = get(base + p + "?key=" + url.QueryEscape(seat.Token))
		require.Equal(t, http.StatusForbidden, st, p+" with a seat token")
		st, _ = get(strings.Replace(base, in.ID, other.ID, 1) + p + "?key=" + url.QueryEscape(key))
		require.Equal(t, http.StatusForbidden, st, p+" with another job's key")
	}
	st, _ = get("/api/jobs?key=" + url.QueryEscape(key))
	require.Equal(t, http.StatusUnauthorized, st, "a viewer key lists nothing")
	// the organizer views every job
	require.Equal(t, http.StatusOK, o.getJSON("/api/jobs/"+other.ID+"/view", &v))
	require.NotEmpty(t, v.Info.Invite)
}

// A volunteer's long poll waits for a pool job that needs ranks, and the
// organizer sees it waiting.
func TestPoolLongPoll(t *testing.T) {
	e := startJobs(t, func(c *JobsConfig) { c.PoolWait = time.Minute })
	o := e.browser()
	o.login("organizer-pw")
	o.mustCreate(map[string]string{"example": "hello", "size": "1"}) // not a pool job
	type result struct {
		status int
		a      joinAnswer
	}
	const volunteers = 3
	res := make(chan result, volunteers)
	var wg sync.WaitGroup
	for range volunteers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Post(e.url+"/api/pool", "", nil)
			if err != nil {
				res <- result{status: -1}
				return
			}
			defer resp.Body.Close()
			var a joinAnswer
			if resp.StatusCode == http.StatusOK {
				_ = json.NewDecoder(resp.Body).Decode(&a)
			}
			res <- result{resp.StatusCode, a}
		}()
	}
	// the organizer sees them waiting
	for {
		var list jobsList
		o.getJSON("/api/jobs", &list)
		if list.Pool.Waiting == volunteers {
			break
		}
		<-time.After(10 * time.Millisecond) // poll: the count has no event to wait for
	}
	in := o.mustCreate(map[string]string{"example": "hello", "size": "2", "pool": "on"})
	ranks := map[int]bool{}
	for range 2 {
		r := <-res
		require.Equal(t, http.StatusOK, r.status)
		require.Equal(t, in.ID, r.a.Job)
		require.Equal(t, in.Invite, r.a.Invite)
		ranks[r.a.Rank] = true
	}
	require.Equal(t, map[int]bool{0: true, 1: true}, ranks)
	// the third waits on (elsewhere, a short wait ends with 204)
	short := startJobs(t, func(c *JobsConfig) { c.PoolWait = 50 * time.Millisecond })
	resp, err := http.Post(short.url+"/api/pool", "", nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	o.mustCreate(map[string]string{"example": "hello", "size": "1", "pool": "on"})
	r := <-res
	require.Equal(t, http.StatusOK, r.status)
	require.Equal(t, 0, r.a.Rank)
	wg.Wait()
}

// The join page and the other pages are served; the embedded assets
// include C2's pages and the vendored d3.
func TestPagesServed(t *testing.T) {
	e := startJobs(t, nil)
	for _, p := range []string{"/join/whatever", "/pool", "/login", "/web/vendor/d3.min.js"} {
		resp, err := http.Get(e.url + p)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, p)
	}
}

// A job that may grow hands out its seats, then, once it formed, late
// tokens up to its max; the pool sends volunteers there too.
func TestLateSeats(t *testing.T) {
	// the pool goes by summaries of the server's jobs up to summaryAge
	// old, and looks again every second: it finds the late seat within
	// its wait
	e := startJobs(t, func(c *JobsConfig) { c.PoolWait = 3 * time.Second })
	o := e.browser()
	o.login("organizer-pw")
	in := o.mustCreate(map[string]string{"example": "hello", "size": "1", "max": "3", "pool": "on"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, a, ae := e.joinInvite(in.Invite)
	require.Equal(t, http.StatusOK, st, ae.Message)
	require.Equal(t, 0, a.Rank)
	require.False(t, a.Late)
	// the seat is out and the job has not formed: no late seat yet
	st, _, ae = e.joinInvite(in.Invite)
	require.Equal(t, http.StatusConflict, st)
	require.Equal(t, "job-full", ae.Code)
	require.Contains(t, ae.Message, "try again")
	c0, err := signaling.Dial(ctx, e.wsURL(), a.Job, a.Token, nil)
	require.NoError(t, err)
	defer c0.Close()
	// formed: late ranks, from the invite and from the pool
	st, l1, ae := e.joinInvite(in.Invite)
	require.Equal(t, http.StatusOK, st, ae.Message)
	require.True(t, l1.Late)
	require.Equal(t, -1, l1.Rank)
	claims, err := signaling.VerifyToken([]byte(testSecret), l1.Token, in.ID, time.Now())
	require.NoError(t, err)
	require.True(t, claims.Late)
	require.Nil(t, claims.Seat)
	c1, err := signaling.Dial(ctx, e.wsURL(), l1.Job, l1.Token, nil)
	require.NoError(t, err)
	defer c1.Close()
	require.Equal(t, 1, c1.Rank())
	resp, err := http.Post(e.url+"/api/pool", "", nil)
	require.NoError(t, err)
	var l2 joinAnswer
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&l2))
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.True(t, l2.Late)
	require.Equal(t, in.Invite, l2.Invite)
	c2, err := signaling.Dial(ctx, e.wsURL(), l2.Job, l2.Token, nil)
	require.NoError(t, err)
	defer c2.Close()
	require.Equal(t, 2, c2.Rank())
	// full: 3 of 3
	st, _, ae = e.joinInvite(in.Invite)
	require.Equal(t, http.StatusConflict, st)
	require.Equal(t, "job-full", ae.Code)
	resp, err = http.Post(e.url+"/api/pool", "", nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
}

// POST /api/join/INVITE?format=url answers the join URL meshrun join
// takes.
func TestJoinURLFormat(t *testing.T) {
	e := startJobs(t, nil)
	o := e.browser()
	o.login("organizer-pw")
	in := o.mustCreate(map[string]string{"example": "hello", "size": "1"})
	u, err := url.Parse(in.Invite)
	require.NoError(t, err)
	resp, err := http.Post(e.url+"/api"+u.Path+"?format=url", "", nil)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	ju, err := url.Parse(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	require.Equal(t, "ws", ju.Scheme)
	require.Equal(t, "/ws", ju.Path)
	require.Equal(t, in.ID, ju.Query().Get("job"))
	_, err = signaling.VerifyToken([]byte(testSecret), ju.Query().Get("token"), in.ID, time.Now())
	require.NoError(t, err)
}

// Closing the registry sends the waiting volunteers away (204), so a
// server's shutdown does not wait out their long polls.
func TestPoolClose(t *testing.T) {
	e := startJobs(t, func(c *JobsConfig) { c.PoolWait = time.Hour })
	done := make(chan int, 1)
	go func() {
		resp, err := http.Post(e.url+"/api/pool", "", nil)
		if err != nil {
			done <- -1
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	for e.jobs.waiting.Load() == 0 {
		select {
		case <-done:
			t.Fatal("the long poll ended early")
		case <-time.After(5 * time.Millisecond):
		}
	}
	e.jobs.Close()
	require.Equal(t, http.StatusNoContent, <-done)
}
