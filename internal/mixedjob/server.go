//go:build !js && !wasip1

package mixedjob

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/internal/browsertest"
	"github.com/meshmpi/meshmpi/signaling"
	"github.com/meshmpi/meshmpi/web"
)

// Server is a signaling server and the browser UI on one loopback port,
// as cmd/signal serves them: browser ranks find the signaling endpoint
// on the origin of their page.
type Server struct {
	URL string // http://127.0.0.1:port, the run page's origin
	WS  string // ws://127.0.0.1:port/ws, the signaling endpoint
	// Reports frames run pages for browsers that no driver controls
	// (Firefox ranks) and takes their reports, at
	// browsertest.ReporterPrefix.
	Reports *browsertest.Reporter
	// Settings are added to the loopback network setting of the jobs
	// NewJob makes (set it before the first job).
	Settings map[string]string

	sig    *signaling.Server
	secret []byte
	hs     *http.Server
	served chan error
	seq    atomic.Int64
}

// StartServer serves p's browser program (if any) and signaling.
func StartServer(p *Programs) (*Server, error) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	sig, err := signaling.NewServer(signaling.Config{Secret: secret})
	if err != nil {
		return nil, err
	}
	o := web.Options{WasmExec: p.WasmExec}
	if p.JS != nil {
		o.Programs = map[string][]byte{ProgramName: p.JS}
	}
	ui, err := web.Handler(o)
	if err != nil {
		_ = sig.Close()
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/", ui)
	mux.Handle("/ws", sig)
	reports := browsertest.NewReporter()
	mux.Handle(browsertest.ReporterPrefix, reports)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		_ = sig.Close()
		return nil, fmt.Errorf("mixedjob: listen: %w", err)
	}
	s := &Server{
		URL:     "http://" + ln.Addr().String(),
		WS:      "ws://" + ln.Addr().String() + "/ws",
		Reports: reports,
		sig:     sig,
		secret:  secret,
		hs:      signaling.NewHTTPServer(mux, 0), // idle, read and write timeouts
		served:  make(chan error, 1),
	}
	go func() { s.served <- s.hs.Serve(ln) }()
	return s, nil
}

// NewJob mints a token for a fresh job of n ranks on loopback.
func (s *Server) NewJob(n int) (job, token string, err error) {
	job = fmt.Sprintf("mixed-%d", s.seq.Add(1))
	settings := map[string]string{meshmpi.SettingNetwork: "loopback"}
	for k, v := range s.Settings {
		settings[k] = v
	}
	token, err = signaling.Mint(s.secret, signaling.Claims{Job: job, Size: n, Expires: time.Now().Add(time.Hour).Unix(),
		Settings: settings})
	return job, token, err
}

// Signaling is the signaling server (its job views, for dashboards'
// tests).
func (s *Server) Signaling() *signaling.Server { return s.sig }

// Stats are the signaling server's counters.
func (s *Server) Stats() signaling.Stats { return s.sig.Stats() }

// Close closes every connection and stops serving.
func (s *Server) Close() error {
	err := s.sig.Close()
	if cerr := s.hs.Close(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	if serr := <-s.served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}
