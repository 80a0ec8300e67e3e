//go:build !js && !wasip1

package signaling

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Local is a Server listening on a loopback port of its own: the embedded
// server of launchers (meshrun), benchmarks and tests, which start a job
// without a signaling server started by hand.
type Local struct {
	*Server
	secret []byte
	url    string
	hs     *http.Server
	served chan error
}

// ListenLocal starts a Server on 127.0.0.1 at a free port. A cfg without a
// Secret gets a random one, so only Local.Token mints its tokens.
func ListenLocal(cfg Config) (*Local, error) {
	if len(cfg.Secret) == 0 {
		cfg.Secret = make([]byte, 32)
		if _, err := rand.Read(cfg.Secret); err != nil {
			return nil, fmt.Errorf("signaling: local secret: %w", err)
		}
	}
	srv, err := NewServer(cfg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("signaling: local listener: %w", err)
	}
	l := &Local{
		Server: srv,
		secret: cfg.Secret,
		url:    "ws://" + ln.Addr().String() + "/ws",
		hs:     NewHTTPServer(srv, 0),
		served: make(chan error, 1),
	}
	go func() { l.served <- l.hs.Serve(ln) }()
	return l, nil
}

// URL is the websocket URL ranks join at (ws://127.0.0.1:port/ws).
func (l *Local) URL() string { return l.url }

// Token mints an open token for job (size ranks sharing settings, valid for
// ttl): it admits anyone to any free rank. A launcher that starts every
// rank itself hands out SeatTokens instead.
func (l *Local) Token(job string, size int, settings map[string]string, ttl time.Duration) (string, error) {
	return Mint(l.secret, Claims{Job: job, Size: size, Expires: time.Now().Add(ttl).Unix(), Settings: settings})
}

// SeatTokens mints the seat tokens of job (size ranks sharing settings,
// valid for ttl): tokens[r] admits rank r only, and a departure before the
// job forms fails it (see the package doc, Tokens).
func (l *Local) SeatTokens(job string, size int, settings map[string]string, ttl time.Duration) ([]string, error) {
	return MintSeats(l.secret, Claims{Job: job, Size: size, Expires: time.Now().Add(ttl).Unix(), Settings: settings})
}

// Mint mints a token of the claims with the server's secret: for
// instance the seat tokens' claims with a Max (a job that may grow) and
// Late set, the token a launcher hands ranks that join the job once it
// formed.
func (l *Local) Mint(c Claims) (string, error) { return Mint(l.secret, c) }

// MintSeats mints the seat tokens of the claims' job with the server's
// secret (see MintSeats).
func (l *Local) MintSeats(c Claims) ([]string, error) { return MintSeats(l.secret, c) }

// Close tells every connection the server is shutting down, closes them
// and stops listening.
func (l *Local) Close() error {
	err := l.Server.Close()
	if cerr := l.hs.Close(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	if serr := <-l.served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}
