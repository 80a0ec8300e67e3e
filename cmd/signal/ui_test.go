//go:build !js

package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/signaling"
	"github.com/meshmpi/meshmpi/web"
)

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key
// to dir and returns their paths and a pool that trusts it.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "meshmpi test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600))
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// `signal serve -tls-cert -tls-key` serves HTTPS and WSS: the organizer
// logs in (a Secure cookie), creates a job with ICE servers of its own, and
// a rank joining with its invite's seat token over WSS gets them in its
// welcome.
func TestServeTLS(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t, t.TempDir())
	t.Setenv("MESHMPI_SIGNAL_ADMIN_PASSWORD", "teacher-pw")
	sc, err := parseServe([]string{"-secret", secret, "-listen", "127.0.0.1:0", "-tls-cert", certFile, "-tls-key", keyFile,
		"-log-level", "error", "-ice", "stun:127.0.0.1:3478"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, "teacher-pw", sc.ui.password)
	require.True(t, sc.ui.loopback, "listening on loopback without a public URL")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := startServer(ctx, sc)
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- s.serve() }()
	defer func() {
		require.NoError(t, s.shutdown(5*time.Second))
		require.ErrorIs(t, <-served, http.ErrServerClosed)
	}()
	base := "https://" + s.ln.Addr().String()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Jar: jar, Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	resp, err := hc.Get(base + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	// plain HTTP to the TLS port is refused
	presp, err := http.Get("http://" + s.ln.Addr().String() + "/healthz")
	if err == nil {
		presp.Body.Close()
		require.Equal(t, http.StatusBadRequest, presp.StatusCode)
	}

	req, _ := http.NewRequest("POST", base+"/login", strings.NewReader("password=teacher-pw"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	resp, err = hc.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, "/jobs", resp.Header.Get("Location"))
	var ck *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == web.SessionCookie {
			ck = c
		}
	}
	require.NotNil(t, ck)
	require.True(t, ck.Secure && ck.HttpOnly)
	require.Equal(t, http.SameSiteStrictMode, ck.SameSite)

	resp, err = hc.Get(base + "/api/session")
	require.NoError(t, err)
	var sess struct {
		Organizer bool   `json:"organizer"`
		CSRF      string `json:"csrf"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&sess))
	resp.Body.Close()
	require.True(t, sess.Organizer)

	// a job with an ICE server of its own (no programs on this server:
	// an uploaded one)
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	require.NoError(t, mw.WriteField("size", "2"))
	require.NoError(t, mw.WriteField("ice", "turn:turn.example:3478?transport=udp alice pw"))
	fw, err := mw.CreateFormFile("rank_wasm", "prog.wasm")
	require.NoError(t, err)
	_, _ = fw.Write([]byte("\x00asm\x01\x00\x00\x00"))
	require.NoError(t, mw.Close())
	req, _ = http.NewRequest("POST", base+"/api/jobs", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Origin", base)
	req.Header.Set(web.CSRFHeader, sess.CSRF)
	resp, err = hc.Do(req)
	require.NoError(t, err)
	var info web.JobInfo
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&info))
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	require.True(t, strings.HasPrefix(info.Invite, base+"/join/"), info.Invite)

	inv, err := url.Parse(info.Invite)
	require.NoError(t, err)
	resp, err = hc.Post(base+"/api"+inv.Path, "", nil)
	require.NoError(t, err)
	var seat struct {
		Job, Token, Signal string
		Rank               int
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&seat))
	resp.Body.Close()
	require.Equal(t, "/ws", seat.Signal)

	// the rank joins over WSS
	ws, _, err := websocket.Dial(ctx, "wss://"+s.ln.Addr().String()+seat.Signal, &websocket.DialOptions{HTTPClient: &http.Client{Transport: tr}})
	require.NoError(t, err)
	defer ws.CloseNow()
	join, err := json.Marshal(map[string]any{"v": signaling.Version, "type": "join",
		"data": map[string]any{"job": seat.Job, "token": seat.Token, "kind": "native"}})
	require.NoError(t, err)
	require.NoError(t, ws.Write(ctx, websocket.MessageText, join))
	_, b, err := ws.Read(ctx)
	require.NoError(t, err)
	var msg struct {
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	require.NoError(t, json.Unmarshal(b, &msg), string(b))
	require.Equal(t, "welcome", msg.Type, string(b))
	var welcome struct {
		Rank       int                   `json:"rank"`
		Settings   map[string]string     `json:"settings"`
		ICEServers []signaling.ICEServer `json:"iceServers"`
	}
	require.NoError(t, json.Unmarshal(msg.Data, &welcome), string(b))
	require.Equal(t, seat.Rank, welcome.Rank)
	require.Equal(t, "1", welcome.Settings["telemetry"])
	require.Equal(t, "loopback", welcome.Settings["net"])
	require.Equal(t, []signaling.ICEServer{
		{URLs: []string{"stun:127.0.0.1:3478"}},
		{URLs: []string{"turn:turn.example:3478?transport=udp"}, Username: "alice", Credential: "pw"},
	}, welcome.ICEServers)

	// /metrics counts the page's jobs and the server's job records
	resp, err = hc.Get(base + "/metrics")
	require.NoError(t, err)
	metrics, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	for _, m := range []string{"meshmpi_signal_ui_jobs 1\n", "meshmpi_signal_job_records 1\n", "meshmpi_signal_pool_waiting 0\n", "meshmpi_signal_job_record_bytes "} {
		require.Contains(t, string(metrics), m)
	}
}

func TestServeUIFlags(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, _ := selfSigned(t, dir)
	for _, c := range []struct {
		args []string
		err  string
	}{
		{[]string{"-tls-cert", certFile}, "-tls-cert and -tls-key go together"},
		{[]string{"-tls-key", keyFile}, "-tls-cert and -tls-key go together"},
		{[]string{"-tls-cert", keyFile, "-tls-key", certFile}, "-tls-cert/-tls-key"},
		{[]string{"-tls-cert", filepath.Join(dir, "none"), "-tls-key", keyFile}, "no such file"},
		{[]string{"-max-upload", "0"}, "must be positive"},
		{[]string{"-max-ui-jobs", "-1"}, "must be positive"},
	} {
		_, err := parseServe(append([]string{"-secret", secret}, c.args...), io.Discard)
		require.ErrorContains(t, err, c.err, c.args)
	}
	sc, err := parseServe([]string{"-secret", secret, "-listen", "0.0.0.0:8080", "-max-upload", "1000", "-max-ui-jobs", "7"}, io.Discard)
	require.NoError(t, err)
	require.False(t, sc.ui.loopback, "a public listen address: net=lan")
	require.Equal(t, int64(1000), sc.ui.maxUpload)
	require.Equal(t, 7, sc.ui.maxJobs)
	require.Nil(t, sc.tls)
	sc, err = parseServe([]string{"-secret", secret, "-public-url", "https://lab.example"}, io.Discard)
	require.NoError(t, err)
	require.False(t, sc.ui.loopback, "a public URL: net=lan")
	// a bad public URL fails at start
	sc, err = parseServe([]string{"-secret", secret, "-public-url", "lab.example/x", "-listen", "127.0.0.1:0", "-log-level", "error"}, io.Discard)
	require.NoError(t, err)
	_, err = startServer(context.Background(), sc)
	require.ErrorContains(t, err, "public URL")
}

// The server's shutdown does not wait for the volunteers' long polls.
func TestServeShutdownPool(t *testing.T) {
	sc, err := parseServe([]string{"-secret", secret, "-listen", "127.0.0.1:0", "-log-level", "error", "-admin-key", "key-0123456789"}, io.Discard)
	require.NoError(t, err)
	s, err := startServer(context.Background(), sc)
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- s.serve() }()
	base := "http://" + s.ln.Addr().String()
	polled := make(chan int, 1)
	go func() {
		resp, err := http.Post(base+"/api/pool", "", nil)
		if err != nil {
			polled <- -1
			return
		}
		resp.Body.Close()
		polled <- resp.StatusCode
	}()
	for {
		req, _ := http.NewRequest("GET", base+"/api/jobs", nil)
		req.Header.Set("Authorization", "Bearer key-0123456789")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var list struct {
			Pool struct{ Waiting int } `json:"pool"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&list))
		resp.Body.Close()
		if list.Pool.Waiting == 1 {
			break
		}
		<-time.After(5 * time.Millisecond) // the count has no event to wait for
	}
	require.NoError(t, s.shutdown(20*time.Second), "the long poll ends as the server shuts down")
	require.ErrorIs(t, <-served, http.ErrServerClosed)
	require.Equal(t, http.StatusNoContent, <-polled)
}
