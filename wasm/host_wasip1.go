//go:build wasip1

package wasm

import (
	"context"
	"fmt"
	"net"
	"os"
)

// JoinHost joins the job through the host that env (meshmpi.EnvHost's
// value) names: under wazero it accepts the host's connection on the
// pre-opened listener, so the stream is a socket the Go runtime polls, and
// the rank's goroutines keep running while one of them waits for the host;
// under wasmtime (no socket pre-opens) the stream is the meshmpi host
// functions (calls_wasip1.go).
func JoinHost(ctx context.Context, env string) (*Guest, error) {
	if g, ok, err := joinCallsEnv(ctx, env); ok { // a runtime without socket pre-opens
		return g, err
	}
	fd, key, err := parseListenerEnv(env)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "meshmpi-host")
	ln, err := net.FileListener(f)
	f.Close() // FileListener made its own descriptor
	if err != nil {
		return nil, fmt.Errorf("wasm: the host's listener (fd %d): %w", fd, err)
	}
	defer ln.Close()
	return Accept(ctx, ln, key)
}
