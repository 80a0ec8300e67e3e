//go:build !js

package signaling

import (
	"net/http"
	"time"
)

// Timeouts of NewHTTPServer. A websocket is hijacked from the http.Server
// (net/http clears the deadlines it set), so none of these cut a joined
// rank's connection: the Server's own ping, join and write timeouts govern
// it. They bound everything else: a client that sends its request slowly,
// one that reads its response slowly, and a keep-alive connection left
// idle, which would otherwise stay open for good and outside MaxConns.
const (
	DefaultIdleTimeout       = 30 * time.Second // keep-alive connection without a request
	DefaultReadHeaderTimeout = 10 * time.Second // a request's header
	DefaultReadTimeout       = 30 * time.Second // a whole request, body included
	DefaultWriteTimeout      = 2 * time.Minute  // a response (a rank's program may be megabytes)
)

// NewHTTPServer returns an http.Server for h with the timeouts above; idle,
// if not zero, replaces DefaultIdleTimeout. Every HTTP server that carries
// a signaling Server should start from it.
func NewHTTPServer(h http.Handler, idle time.Duration) *http.Server {
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	return &http.Server{
		Handler:           h,
		IdleTimeout:       idle,
		ReadHeaderTimeout: DefaultReadHeaderTimeout,
		ReadTimeout:       DefaultReadTimeout,
		WriteTimeout:      DefaultWriteTimeout,
	}
}
