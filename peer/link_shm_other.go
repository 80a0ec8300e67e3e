//go:build !linux

package peer

import (
	"context"
	"fmt"
)

// HostLinks says whether this build can link processes of one host
// without WebRTC (ListenHost, DialHost): only Linux builds can.
const HostLinks = false

// HostConfig tunes a same-host link (link_shm_setup_linux.go).
type HostConfig struct {
	Name     string
	Ring     int
	Unix     bool
	MaxFrame int
}

// HostListener is the lower rank's end of a same-host link's set-up; this
// build has none.
type HostListener struct{}

// ListenHost fails: this build has no same-host links.
func ListenHost(cfg HostConfig) (*HostListener, error) {
	return nil, fmt.Errorf("%s: %w", cfg.Name, ErrNotSupported)
}

// Offer is empty.
func (*HostListener) Offer() string { return "" }

// Close does nothing.
func (*HostListener) Close() error { return nil }

// Accept fails: this build has no same-host links.
func (*HostListener) Accept(context.Context) (Link, error) { return nil, ErrNotSupported }

// DialHost fails: this build has no same-host links.
func DialHost(_ context.Context, cfg HostConfig, _ string) (Link, error) {
	return nil, fmt.Errorf("%s: %w", cfg.Name, ErrNotSupported)
}
