//go:build linux

package peer

import "testing"

// The cancel tests run over same-host shared memory and WebRTC links too:
// their frames are encoded, and delivered on the links' own goroutines.
func init() {
	cancelPairs = append(cancelPairs,
		struct {
			name string
			pair cancelPair
		}{"shm", func(t *testing.T) (*Endpoint, *Endpoint) {
			la, lb := hostPair(t, HostConfig{Name: "cancel test"})
			return linkCancelPair(t, la, lb)
		}},
		struct {
			name string
			pair cancelPair
		}{"webrtc", func(t *testing.T) (*Endpoint, *Endpoint) {
			la, lb := connectWebRTCPair(t, loopbackConfig)
			return linkCancelPair(t, la, lb)
		}},
	)
}
